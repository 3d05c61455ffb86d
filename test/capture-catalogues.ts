/**
 * Captures the tool catalogues (name and annotations, as each server declares them) of the npm MCP
 * servers the tests run, into test/catalogues/npm/, for `lookfirst ecosystem`. Run after upgrading one:
 * `node --import tsx test/capture-catalogues.ts`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EVERYTHING_SERVER, FS_SERVER, MEMORY_SERVER, NODE, ROOT } from './helpers.js';

const scratch = mkdtempSync(join(tmpdir(), 'lf-capture-'));
const servers = [
  { slug: 'server-filesystem', args: [FS_SERVER, scratch], pkg: '@modelcontextprotocol/server-filesystem' },
  { slug: 'server-memory', args: [MEMORY_SERVER], pkg: '@modelcontextprotocol/server-memory' },
  { slug: 'server-everything', args: [EVERYTHING_SERVER], pkg: '@modelcontextprotocol/server-everything' },
];
for (const s of servers) {
  const client = new Client({ name: 'lookfirst-capture', version: '1' }, { capabilities: {} });
  await client.connect(
    new StdioClientTransport({ command: NODE, args: s.args, env: { ...process.env, MEMORY_FILE_PATH: join(scratch, 'memory.json') }, stderr: 'ignore' }),
  );
  const tools = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools.map((t) => ({ name: t.name, annotations: t.annotations })));
    cursor = page.nextCursor;
  } while (cursor);
  const info = client.getServerVersion();
  const out = { slug: s.slug, command: `node ${s.pkg}`, serverInfo: { name: info?.name, version: info?.version }, tools };
  writeFileSync(join(ROOT, 'test/catalogues/npm', `${s.slug}.json`), `${JSON.stringify(out, null, 2)}\n`);
  console.log(`${s.slug}: ${tools.length} tools`);
  await client.close();
}
