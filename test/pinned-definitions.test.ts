/**
 * Pinned tool definitions: the first start pins every tool; after the upstream changes a description (or
 * adds a tool), the next call of that tool asks a person to accept the new definition whatever the rules
 * say, showing what changed, even across a restart. Accepted, it is pinned and the call goes on under the
 * normal policy; declined, nothing runs. A corrupt pins file stops the gate from starting. An upstream
 * whose first listing is empty is pinned as empty (its later tools are new, not "first sight"), and every
 * change within one process is logged, not only the first.
 */
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { PIN_KIND, PINNED_UPSTREAM_KIND } from '../src/gateway/pins.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite.js';
import { approve, auditEntries, decline, FAKE_UPSTREAM, type Human, NODE, ROOT, runCli, startAgent, textOf, tmp, verdictOf, writeConfig } from './helpers.js';

const FILE_TOOLS = join(ROOT, 'test/fixtures/file-tools-upstream.mjs');

/** A tool definition of the file-listed upstream, read-only by its annotations. */
function tool(name: string, description: string): Record<string, unknown> {
  return { name, description, inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } };
}

/** A gate on the file-listed upstream, whose tools are what `tools.json` holds at each listing. */
function fileGate(tools: Record<string, unknown>[]) {
  const dir = tmp();
  const list = join(dir, 'tools.json');
  writeFileSync(list, JSON.stringify(tools));
  const cfg = writeConfig(dir, `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FILE_TOOLS, list])}\n`);
  return { dir, cfg, set: (t: Record<string, unknown>[]) => writeFileSync(list, JSON.stringify(t)) };
}

function config(dir: string, variant?: string, first = false): string {
  const args = [FAKE_UPSTREAM, ...(variant ? ['--variant', variant] : [])];
  return writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify(args)}\nrules:\n  tools:\n    echo: { action: allow }\n`,
    {
      keygen: first,
    },
  );
}

async function echo(cfg: string, human: Human) {
  const agent = await startAgent(cfg, human);
  try {
    const r = await agent.call('echo', { hi: 1 });
    return { r, asked: [...agent.asked], stderr: agent.stderr() };
  } finally {
    await agent.close();
  }
}

describe('pinned tool definitions', () => {
  it('hold a changed or new tool until a person accepts it, across restarts, whatever the rules say', async () => {
    const dir = tmp();
    const first = await echo(config(dir, undefined, true), approve);
    assert.equal(textOf(first.r), '{"hi":1}');
    assert.equal(first.asked.length, 0, 'first sight pins, asks nothing');
    assert.deepEqual(Object.keys(await pinsIn(dir)), ['fake'], 'pinned in the state store beside the log');

    // The upstream changed echo's description: allowed by rule, still held for the definition.
    const changed = await echo(config(dir, 'v2'), approve);
    assert.equal(changed.asked.length, 1);
    assert.match(changed.asked[0] ?? '', /ACCEPT A NEW DEFINITION of echo/);
    assert.match(changed.asked[0] ?? '', /description: "Echo«»" → "Echo« \(v2\)»"/);
    assert.equal(textOf(changed.r), '{"hi":1}', 'accepted: the call went on under its rule');
    assert.match(changed.stderr, /the definition of fake's tool "echo" changed since it was pinned/);

    // Pinned now: the next start asks nothing about echo; the new tool is held the same way.
    const agent = await startAgent(config(dir, 'v2'), decline);
    try {
      assert.equal(textOf(await agent.call('echo', { hi: 2 })), '{"hi":2}');
      const extra = await agent.call('get_extra', {});
      assert.equal(verdictOf(extra)?.outcome, 'denied');
      assert.match(String(verdictOf(extra)?.reason), /definition of get_extra is new and was not accepted/);
      assert.equal(agent.asked.length, 1);
    } finally {
      await agent.close();
    }
    const log = auditEntries(dir);
    assert.ok(log.some((e) => e.event === 'definition_changed' && e.tool === 'echo' && e.how === 'changed'));
    assert.ok(log.some((e) => e.event === 'definition_changed' && e.tool === 'get_extra' && e.how === 'new'));
    assert.ok(log.some((e) => e.event === 'definition_accepted' && e.tool === 'echo'));
    assert.ok(log.some((e) => e.event === 'approval' && e.purpose === 'definition' && e.approved === false));
    assert.equal(runCli(['verify-log', '--config', join(dir, 'lookfirst.yaml')]).status, 0);
  });

  it('hold a tool that appears mid-session (tools/list_changed) until a person accepts it', async () => {
    const dir = tmp();
    // The person approves emit_all (a mutation by its name) and declines the new definition.
    const human: Human = (m) => (/ACCEPT A NEW DEFINITION/.test(m) ? decline(m) : approve(m));
    const agent = await startAgent(config(dir, undefined, true), human);
    try {
      // emit_all makes the upstream list one more tool ("extra", read-only by its annotations) and say so.
      assert.equal(textOf(await agent.call('emit_all', {})), 'ok');
      const listed = await agent.client.listTools();
      assert.ok(listed.tools.some((t) => t.name === 'extra'));
      const extra = await agent.call('extra', {});
      assert.equal(verdictOf(extra)?.outcome, 'denied');
      assert.match(String(verdictOf(extra)?.reason), /definition of extra is new and was not accepted/);
      assert.equal(agent.asked.length, 2);
      assert.match(agent.asked[1] ?? '', /ACCEPT A NEW DEFINITION of extra/);
    } finally {
      await agent.close();
    }
    const log = auditEntries(dir);
    assert.ok(log.some((e) => e.event === 'definition_changed' && e.tool === 'extra' && e.how === 'new'));
    assert.equal(log.filter((e) => e.event === 'read' && e.tool === 'extra').length, 0, 'never forwarded');
  });

  it('refuses to start on a pins file it cannot read', () => {
    const dir = tmp();
    const cfg = config(dir, undefined, true);
    writeFileSync(join(dir, 'audit.jsonl.pins.json'), '{ not json');
    const r = runCli(['serve', '--config', cfg]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /cannot read the tool pins .*delete it to pin every tool afresh/);
  });

  describe('when the first listing is empty', () => {
    it('pins "no tools": a tool listed later is new and held, in the same process and after a restart', async () => {
      const g = fileGate([]);
      let agent = await startAgent(g.cfg, decline);
      try {
        assert.deepEqual((await agent.client.listTools()).tools, []);
        assert.deepEqual(await pinsIn(g.dir), { files: [] }, 'the empty listing is pinned');
        g.set([tool('read_thing', 'Reads a thing')]);
        assert.deepEqual(
          (await agent.client.listTools()).tools.map((t) => t.name),
          ['read_thing'],
        );
        const v = verdictOf(await agent.call('read_thing', {}));
        assert.equal(v?.outcome, 'denied');
        assert.match(String(v?.reason), /definition of read_thing is new and was not accepted/);
        assert.match(agent.asked[0] ?? '', /ACCEPT A NEW DEFINITION of read_thing/);
      } finally {
        await agent.close();
      }
      // A restart is no "first sight" either.
      agent = await startAgent(g.cfg, decline);
      try {
        assert.equal(verdictOf(await agent.call('read_thing', {}))?.outcome, 'denied');
        assert.equal(agent.asked.length, 1);
      } finally {
        await agent.close();
      }
      assert.ok(auditEntries(g.dir).some((e) => e.event === 'definition_changed' && e.tool === 'read_thing' && e.how === 'new'));
    });

    it('does not pin when the first listing fails (nothing is trusted on an error)', async () => {
      const g = fileGate([]);
      writeFileSync(join(g.dir, 'tools.json'), 'not json: the upstream fails tools/list');
      const agent = await startAgent(g.cfg, decline);
      try {
        assert.deepEqual(await pinsIn(g.dir), {}, 'a failed listing pins nothing');
        g.set([tool('read_thing', 'Reads a thing')]);
        assert.equal(textOf(await agent.call('read_thing', { a: 1 })), 'read_thing {"a":1}', 'the first successful listing is the first sight');
        assert.equal(agent.asked.length, 0);
      } finally {
        await agent.close();
      }
    });
  });

  it('logs every change of a definition within one process as definition_changed, not only the first', async () => {
    const g = fileGate([tool('read_thing', 'v1')]);
    const agent = await startAgent(g.cfg, decline);
    try {
      for (const version of ['v2', 'v3', 'v2', 'v1', 'v2']) {
        g.set([tool('read_thing', version)]);
        await agent.client.listTools();
        await agent.client.listTools(); // the same definition listed again is not a change
      }
      g.set([tool('read_thing', 'v1'), tool('other', 'o1')]);
      await agent.client.listTools();
      g.set([tool('read_thing', 'v1'), tool('other', 'o2')]);
      await agent.client.listTools();
    } finally {
      await agent.close();
    }
    const changes = auditEntries(g.dir).filter((e) => e.event === 'definition_changed');
    // v1 is the pin: v2, v3, v2 (each differs from the one seen before), back to v1 (the pin: nothing),
    // v2 again; then a new tool and its change.
    assert.deepEqual(
      changes.map((e) => `${e.tool} ${e.how}`),
      ['read_thing changed', 'read_thing changed', 'read_thing changed', 'read_thing changed', 'other new', 'other new'],
    );
    assert.equal(new Set(changes.filter((e) => e.tool === 'read_thing').map((e) => e.sha256)).size, 2, 'each entry names the definition (v2 or v3)');
    assert.equal(runCli(['verify-log', '--config', g.cfg]).status, 0);
  });
});

/**
 * What the gate pinned, read from its state store beside the log (lookfirst-state.db): upstream → the
 * names of its pinned tools.
 */
async function pinsIn(dir: string): Promise<Record<string, string[]>> {
  const path = join(dir, 'lookfirst-state.db');
  if (!existsSync(path)) return {};
  const store = createSqliteStore(path);
  try {
    const out: Record<string, string[]> = {};
    for (const r of await store.list(PINNED_UPSTREAM_KIND)) out[r.key] = [];
    for (const r of await store.list(PIN_KIND)) {
      const [upstream = '', tool = ''] = r.key.split('/');
      out[upstream] = [...(out[upstream] ?? []), decodeURIComponent(tool)];
    }
    return out;
  } finally {
    await store.close();
  }
}
