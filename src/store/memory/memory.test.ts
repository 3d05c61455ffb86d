import { storeContract } from '../contract.js';
import { createMemoryStore } from './memory.js';

// No reopen and no spawnArgs: the in-memory store has one instance in one process, so the cross-process
// race, the second-instance notification and the restart cases are skipped with that reason.
storeContract('memory', async (opts) => ({ store: createMemoryStore(opts) }));
