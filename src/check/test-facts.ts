/** Facts for the unit tests of check/ and pilot: a healthy gate, which each test changes in what it is about. */
import { parseConfig } from '../config/load.js';
import type { CheckFacts } from './facts.js';

const FS_TOOLS = ['read_text_file', 'write_file', 'list_directory', 'move_file'].map((name) => ({ name, description: '' }));

/** Facts of a healthy gate (key private, log intact, sqlite reachable, server-filesystem-like tools) under the config `yaml` adds to. */
export function healthy(yaml = '', over: Partial<CheckFacts> = {}): CheckFacts {
  const config = parseConfig(`upstreams:\n  files:\n    command: node\n${yaml}`, '/cfg/lookfirst.yaml');
  return {
    config,
    cli: 'lookfirst',
    key: { path: '/cfg/audit.key', exists: true, mode: 0o600 },
    keyValid: true,
    pub: { path: '/cfg/audit.pub', exists: true, mode: 0o644 },
    log: { path: '/cfg/audit.jsonl', headPath: '/cfg/audit.jsonl.head', state: 'verified', verdict: 'intact', entries: 3, problems: [], warnings: [] },
    tty: false,
    ports: [],
    store: { kind: 'sqlite', where: '/cfg/lookfirst-state.db', reachable: true },
    upstreams: [{ name: 'files', kind: 'stdio', ok: true, tools: FS_TOOLS, elapsedMs: 12 }],
    ...over,
  };
}
