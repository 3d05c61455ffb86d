/**
 * Two real upstreams at once (server-filesystem and server-memory): names get the `<upstream>__` prefix,
 * calls route through the gate's table, reads pass and writes are held on both.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FS_SERVER, MEMORY_SERVER, NODE, ResultSchema, runCli, startAgent, textOf, tmp, verdictOf, writeConfig } from './helpers.js';

describe('two upstreams at once', () => {
  it('prefixes every tool name and routes reads and writes to the right server', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'a.txt'), 'from files');
    const config = writeConfig(
      dir,
      `upstreams:
  files:
    command: ${JSON.stringify(NODE)}
    args: ${JSON.stringify([FS_SERVER, data])}
  memory:
    command: ${JSON.stringify(NODE)}
    args: ${JSON.stringify([MEMORY_SERVER])}
    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(dir, 'memory.jsonl'))} }
rules:
  tools:
    "memory__delete_*": { action: deny }
`,
    );
    const agent = await startAgent(config, approve);
    try {
      const { tools } = await agent.client.request({ method: 'tools/list' }, ResultSchema);
      const names = (tools as { name: string }[]).map((t) => t.name);
      assert.ok(names.includes('files__read_text_file'));
      assert.ok(names.includes('memory__create_entities'));
      assert.ok(
        names.every((n) => n.startsWith('files__') || n.startsWith('memory__')),
        names.join(),
      );

      const read = await agent.call('files__read_text_file', { path: join(data, 'a.txt') });
      assert.equal(textOf(read), 'from files');

      const created = await agent.call('memory__create_entities', {
        entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
      });
      assert.equal(verdictOf(created)?.outcome, 'executed');
      assert.equal(agent.asked.length, 1);
      assert.match(agent.asked[0]!, /memory__create_entities/);

      const graph = await agent.call('memory__read_graph', {});
      assert.match(textOf(graph), /Ada/);
      assert.equal(agent.asked.length, 1, 'reads are not asked about');

      const del = await agent.call('memory__delete_entities', { entityNames: ['Ada'] });
      assert.equal(verdictOf(del)?.outcome, 'denied');
      assert.match(textOf(await agent.call('memory__read_graph', {})), /Ada/);

      const unknown = await agent.client
        .request({ method: 'tools/call', params: { name: 'read_text_file', arguments: {} } }, ResultSchema)
        .catch((e: Error) => e);
      assert.ok(unknown instanceof Error && /Unknown tool/.test(unknown.message), 'unprefixed names do not route');
    } finally {
      await agent.close();
    }
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
    assert.match(readFileSync(join(dir, 'audit.jsonl'), 'utf8'), /"upstream":"memory"/);
  });
});
