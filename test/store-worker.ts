/**
 * One racer for the store contract's cross-process consume-once case: opens the store named in argv,
 * prints `ready`, waits for a line on stdin (the start signal), fires its consume-once calls at once and
 * prints how many it won as JSON. Run: node --import tsx test/store-worker.ts '<store config json>' <kind> <key> <calls>
 */
import { createInterface } from 'node:readline';
import { openStore } from '../src/store/open.js';
import type { StoreConfig } from '../src/store/store.js';

const [configJson, kind, key, calls] = process.argv.slice(2);
const store = await openStore(JSON.parse(configJson!) as StoreConfig);
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
const results = await Promise.allSettled(Array.from({ length: Number(calls) }, () => store.consumeOnce(kind!, key!)));
const errors = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason?.code ?? r.reason));
const wins = results.filter((r) => r.status === 'fulfilled' && r.value !== undefined).length;
process.stdout.write(`${JSON.stringify({ wins, errors })}\n`);
lines.close();
await store.close();
