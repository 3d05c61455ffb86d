/**
 * An upstream that does not come up: the agent calling one of its tools is told which upstream is not
 * reachable (not just "Unknown tool"), and nothing runs. And `serve --transport http` on a busy port
 * fails before it starts any upstream.
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { MEMORY_SERVER, NODE, nodeUpstream, runCli, startAgent, tmp, writeConfig } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A temp folder holding `exits.mjs`, an upstream command that ends at once (it never answers initialize). */
function dirWithDeadUpstream(): { dir: string; script: string } {
  const dir = tmp('lf-down-');
  dirs.push(dir);
  const script = join(dir, 'exits.mjs');
  writeFileSync(script, 'process.exit(3);\n');
  return { dir, script };
}

/** The message of the JSON-RPC error a call ended with (fails the test when the call succeeded). */
async function errorOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail('the call was expected to fail');
}

describe('an upstream that is down', () => {
  it('with one upstream, any unknown tool names that upstream as not reachable', async () => {
    const { dir, script } = dirWithDeadUpstream();
    const config = writeConfig(dir, `upstreams:\n${nodeUpstream('broken', script)}`);
    const agent = await startAgent(config);
    try {
      const message = await errorOf(agent.call('write_file', { path: 'x' }));
      assert.match(message, /-32602/, 'still InvalidParams, as for an unknown tool');
      assert.match(message, /upstream "broken" is not reachable/);
      assert.match(message, /check its command or url/);
      assert.match(message, /Nothing was run/);
      assert.doesNotMatch(message, /Unknown tool/);
    } finally {
      await agent.close();
    }
  });

  it('with several, only a name with the down upstream prefix says so', async () => {
    const { dir, script } = dirWithDeadUpstream();
    const config = writeConfig(
      dir,
      `upstreams:
${nodeUpstream('broken', script)}  memory:
    command: ${JSON.stringify(NODE)}
    args: ${JSON.stringify([MEMORY_SERVER])}
    env: { MEMORY_FILE_PATH: ${JSON.stringify(join(dir, 'memory.jsonl'))} }
`,
    );
    const agent = await startAgent(config);
    try {
      assert.match(await errorOf(agent.call('broken__write_file', {})), /upstream "broken" is not reachable/);
      assert.match(await errorOf(agent.call('memory__no_such_tool', {})), /Unknown tool: memory__no_such_tool/);
      assert.match(await errorOf(agent.call('write_file', {})), /Unknown tool: write_file/);
      // The upstream that is up still serves its tools.
      const graph = await agent.call('memory__read_graph', {});
      assert.ok(Array.isArray(graph.content));
    } finally {
      await agent.close();
    }
  });
});

describe('serve --transport http on a busy port', () => {
  it('fails at once, naming the port, and starts no upstream', async () => {
    const dir = tmp('lf-busy-');
    dirs.push(dir);
    const marker = join(dir, 'started');
    const script = join(dir, 'marks.mjs');
    writeFileSync(script, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'started');\nsetInterval(() => {}, 1000);\n`);
    const config = writeConfig(dir, `upstreams:\n${nodeUpstream('marks', script)}`);
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = (busy.address() as { port: number }).port;
    try {
      const r = runCli(['serve', '--config', config, '--transport', 'http', '--host', '127.0.0.1', '--port', String(port)]);
      assert.notEqual(r.status, 0);
      assert.match(r.stderr, new RegExp(`127\\.0\\.0\\.1:${port}`));
      assert.match(r.stderr, /already in use/);
      assert.equal(existsSync(marker), false, 'no upstream process was started');
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });
});
