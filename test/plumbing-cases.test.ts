/**
 * The proxy-plumbing cases of shared/cases/mcp-failure-cases.md, each as the whole kind of fault with the
 * right behaviour as the assertion: cancellation routing (BR-02), notification loss (BR-03), parallel
 * calls (BR-05), large messages (BR-07), stdout noise (BR-09), CRLF (BR-11), version negotiation (BR-12),
 * tool-name routing (BR-16), fields lost in re-encoding (BR-18). Upstream crash mid-call (BR-06) is in
 * bad-input.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  approve,
  connectDirect,
  decline,
  FAKE_UPSTREAM,
  type Human,
  MAIN,
  NODE,
  ResultSchema,
  runCli,
  startAgent,
  textOf,
  tmp,
  verdictOf,
  waitFor,
  writeConfig,
} from './helpers.js';

function fakeGate(flags: string[] = [], extra = '') {
  const dir = tmp();
  const events = join(dir, 'events.jsonl');
  const effects = join(dir, 'effects.txt');
  const args = [FAKE_UPSTREAM, '--side-effects', effects, '--events', events, ...flags];
  const config = writeConfig(dir, `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify(args)}\n${extra}`);
  const seen = () =>
    existsSync(events)
      ? readFileSync(events, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { method: string; id?: number; params?: Record<string, unknown> })
      : [];
  return { dir, config, events, effects, seen, args };
}

describe('BR-02 cancellation', () => {
  it('reaches the upstream with the upstream id, swallows the late answer, and the gate stays usable', async () => {
    const g = fakeGate();
    const agent = await startAgent(g.config, approve);
    try {
      const ctl = new AbortController();
      const slow = agent.call('slow', {}, { signal: ctl.signal });
      await waitFor(() => g.seen().some((e) => e.method === 'tools/call' && e.params?.name === 'slow'), 5000);
      ctl.abort('user abort');
      await assert.rejects(slow);
      await waitFor(() => g.seen().some((e) => e.method === 'notifications/cancelled'), 2000);
      const call = g.seen().find((e) => e.method === 'tools/call' && e.params?.name === 'slow')!;
      const cancel = g.seen().find((e) => e.method === 'notifications/cancelled')!;
      assert.equal(cancel.params?.requestId, call.id, 'cancel carries the id the upstream saw');
      assert.equal(textOf(await agent.call('echo', { after: 'cancel' })), '{"after":"cancel"}');
    } finally {
      await agent.close();
    }
  });

  it('withdraws a write waiting for approval: the upstream never sees it and the log says cancelled', async () => {
    const g = fakeGate();
    const agent = await startAgent(g.config, () => new Promise(() => {}));
    try {
      const ctl = new AbortController();
      const held = agent.call('write_note', { n: 1 }, { signal: ctl.signal });
      await waitFor(() => agent.asked.length === 1, 5000);
      ctl.abort('changed my mind');
      await assert.rejects(held);
      await waitFor(() => readFileSync(join(g.dir, 'audit.jsonl'), 'utf8').includes('"event":"cancelled"'), 3000);
      assert.equal(textOf(await agent.call('echo', {})), '{}');
    } finally {
      await agent.close();
    }
    assert.equal(existsSync(g.effects), false);
    assert.ok(!g.seen().some((e) => e.method === 'tools/call' && e.params?.name === 'write_note'));
    assert.match(readFileSync(join(g.dir, 'audit.jsonl'), 'utf8'), /"event":"cancelled"[^\n]*"stage":"before_execution"/);
  });
});

describe('BR-02 variant B: cancel during execution', () => {
  it('forwards the cancel under the upstream id and records the outcome as unknown', async () => {
    const g = fakeGate();
    const agent = await startAgent(g.config, approve);
    try {
      const ctl = new AbortController();
      const running = agent.call('slow_write', { n: 1 }, { signal: ctl.signal });
      await waitFor(() => g.seen().some((e) => e.method === 'tools/call' && e.params?.name === 'slow_write'), 5000);
      ctl.abort('stop');
      await assert.rejects(running);
      await waitFor(() => g.seen().some((e) => e.method === 'notifications/cancelled'), 2000);
      const call = g.seen().find((e) => e.method === 'tools/call' && e.params?.name === 'slow_write')!;
      assert.equal(g.seen().find((e) => e.method === 'notifications/cancelled')?.params?.requestId, call.id);
      await waitFor(() => readFileSync(join(g.dir, 'audit.jsonl'), 'utf8').includes('execution_failed'), 3000);
    } finally {
      await agent.close();
    }
    assert.match(
      readFileSync(join(g.dir, 'audit.jsonl'), 'utf8'),
      /"event":"execution_failed"[^\n]*"outcome":"unknown"[^\n]*cancelled by the client during execution/,
    );
  });
});

describe('BR-03 notifications', () => {
  it('relays logging, progress with the client token, and list_changed after re-reading the tools', async () => {
    const g = fakeGate();
    const agent = await startAgent(g.config, approve);
    try {
      const logs: unknown[] = [];
      let listChanged = 0;
      agent.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
      agent.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void listChanged++);
      await agent.client.setLoggingLevel('debug');
      assert.ok(
        g.seen().some((e) => e.method === 'logging/setLevel' && e.params?.level === 'debug'),
        'setLevel forwarded',
      );
      const progress: unknown[] = [];
      await agent.call('emit_all', {}, { onprogress: (p) => progress.push(p) });
      await waitFor(() => logs.length > 0 && listChanged > 0, 3000);
      assert.deepEqual(progress, [{ progress: 1, total: 2, message: 'half' }]);
      assert.deepEqual(logs, [{ level: 'info', logger: 'fake', data: 'hello from upstream' }]);
      assert.equal(listChanged, 1);
      const { tools } = await agent.client.request({ method: 'tools/list' }, ResultSchema);
      assert.ok(
        (tools as { name: string }[]).some((t) => t.name === 'extra'),
        'no stale list',
      );
      assert.equal(textOf(await agent.call('extra', {})), '', 'the new tool is routable at once');
    } finally {
      await agent.close();
    }
  });
});

describe('BR-20 a tool turns into a write', () => {
  it('is held from the moment the upstream says its tools changed, not only after the re-read', async () => {
    const g = fakeGate();
    const agent = await startAgent(g.config, decline);
    try {
      assert.equal(textOf(await agent.call('mirror', {})), 'state read');
      await agent.call('flip', {});
      await new Promise((r) => setTimeout(r, 50));
      const during = await agent.call('mirror', {});
      assert.equal(verdictOf(during)?.outcome, 'denied', 'held (and declined) while the tools are re-read');
      await new Promise((r) => setTimeout(r, 800));
      const after = await agent.call('mirror', {});
      assert.equal(verdictOf(after)?.outcome, 'denied', 'held once the new annotations are in');
      assert.equal(agent.asked.length, 2);
    } finally {
      await agent.close();
    }
    assert.deepEqual(readFileSync(g.effects, 'utf8').trim().split('\n'), ['sync read']);
  });
});

describe('BR-05 parallel calls', () => {
  it('answers each of ten parallel writes exactly once and logs one outcome per call', async () => {
    const g = fakeGate();
    const human: Human = (message) => {
      const n = Number(/"n":(\d+)/.exec(message)?.[1]);
      return n % 2 === 1 ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
    };
    const agent = await startAgent(g.config, human);
    let results: Record<string, unknown>[];
    try {
      results = await Promise.all(Array.from({ length: 10 }, (_, i) => agent.call('slow_write', { n: i + 1 })));
      await agent.client.ping();
      await agent.client.request({ method: 'tools/list' }, ResultSchema);
    } finally {
      await agent.close();
    }
    const outcomes = results.map((r) => verdictOf(r)?.outcome);
    assert.deepEqual(
      outcomes,
      Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? 'executed' : 'denied')),
    );
    const written = readFileSync(g.effects, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).n)
      .sort((a: number, b: number) => a - b);
    assert.deepEqual(written, [1, 3, 5, 7, 9]);
    const entries = readFileSync(join(g.dir, 'audit.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const terminal = new Map<string, number>();
    for (const e of entries) {
      if (e.event === 'executed' || (e.event === 'approval' && e.approved === false)) terminal.set(e.call_id, (terminal.get(e.call_id) ?? 0) + 1);
    }
    assert.equal(terminal.size, 10);
    assert.ok([...terminal.values()].every((c) => c === 1));
    assert.equal(runCli(['verify-log', '--config', g.config]).status, 0);
  });
});

describe('BR-07 large messages', () => {
  it('passes 8 MiB (split inside a multi-byte character) and 30 MiB results intact, then keeps working', async () => {
    const g = fakeGate();
    const agent = await startAgent(g.config, approve);
    try {
      const emoji = await agent.call('big', { mib: 8, multibyte: true }, { timeout: 60_000 });
      const text = textOf(emoji);
      assert.equal(text.length % 2, 0);
      assert.ok(/^(😀)+$/u.test(text.slice(0, 400)) && text.endsWith('😀'));
      assert.ok(Buffer.byteLength(text) >= 8 * 1024 * 1024);
      const huge = await agent.call('big', { mib: 30 }, { timeout: 60_000 });
      assert.equal(textOf(huge).length, 30 * 1024 * 1024);
      assert.equal(textOf(await agent.call('echo', { still: 'alive' })), '{"still":"alive"}');
    } finally {
      await agent.close();
    }
  });
});

describe('BR-09 stdout noise from the upstream', () => {
  it('drops non-protocol lines, reports them on stderr, and works', async () => {
    const g = fakeGate(['--noise']);
    const agent = await startAgent(g.config, approve);
    try {
      assert.equal(textOf(await agent.call('echo', { a: 1 })), '{"a":1}');
      await waitFor(() => /dropped a non-protocol line/.test(agent.stderr()), 2000);
      assert.match(agent.stderr(), /upstream fake: dropped a non-protocol line on stdout/);
    } finally {
      await agent.close();
    }
  });
});

/** Talks to a gate process in raw lines, so the test controls framing and protocol versions. */
async function rawGate(config: string, lines: string[], expectReplies?: number): Promise<Record<string, unknown>[]> {
  const child = spawn(NODE, [MAIN, 'serve', '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  for (const l of lines) child.stdin.write(l);
  await waitFor(() => out.split('\n').filter(Boolean).length >= (expectReplies ?? lines.filter((l) => l.includes('"id"')).length), 10_000);
  child.stdin.end();
  await new Promise((r) => child.on('exit', r));
  assert.ok(!out.includes('\r'), 'the gate writes only \\n-terminated lines');
  return out
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

const init = (version: string, id = 1) =>
  JSON.stringify({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });

describe('a tools/call without an id (a JSON-RPC notification)', () => {
  it('never reaches the upstream, even for a tool a rule denies', async () => {
    const g = fakeGate([], 'rules:\n  tools:\n    write_note: { action: deny }\n');
    await rawGate(g.config, [
      `${init('2025-06-18')}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'write_note', arguments: { x: 1 } } })}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'echo', arguments: { x: 1 } } })}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`,
    ]);
    assert.ok(!g.seen().some((e) => e.method === 'tools/call'), JSON.stringify(g.seen().map((e) => e.method)));
    assert.equal(existsSync(g.effects), false);
  });
});

describe('arguments nested thousands of levels deep', () => {
  it('are denied on a read tool too (too deep to inspect is a mutation), never executed, and the gate stays up', async () => {
    const g = fakeGate();
    const deep = `${'['.repeat(6000)}0${']'.repeat(6000)}`;
    const call = (id: number, name: string, args: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}\n`;
    const replies = await rawGate(g.config, [
      `${init('2025-06-18')}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
      call(2, 'echo', `{"deep":${deep}}`),
      call(3, 'write_note', `{"deep":${deep}}`),
      call(4, 'echo', '{"still":"up"}'),
    ]);
    const byId = new Map(replies.map((r) => [r.id, r as { result?: { isError?: boolean; content: { text: string }[] } }]));
    assert.equal(byId.get(2)?.result?.isError, true);
    assert.match(byId.get(2)!.result!.content[0]!.text, /canonical form/);
    assert.equal(byId.get(3)?.result?.isError, true);
    assert.match(byId.get(3)!.result!.content[0]!.text, /canonical form/);
    assert.equal(byId.get(4)?.result?.content[0]?.text, '{"still":"up"}');
    assert.ok(!existsSync(g.effects));
    assert.match(readFileSync(join(g.dir, 'audit.jsonl'), 'utf8'), /"reason":"arguments have no canonical form"/);
    assert.equal(runCli(['verify-log', '--config', g.config]).status, 0);
  });
});

describe('BR-11 CRLF framing', () => {
  it('accepts CRLF and empty lines from the upstream and from the client', async () => {
    const g = fakeGate(['--crlf']);
    const replies = await rawGate(g.config, [
      `${init('2025-06-18')}\r\n`,
      '\r\n',
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\r\n`,
      `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { crlf: true } } })}\r\n`,
    ]);
    const call = replies.find((r) => r.id === 2) as { result: { content: { text: string }[] } };
    assert.equal(call.result.content[0]!.text, '{"crlf":true}');
  });
});

describe('invalid requests', () => {
  it('get a -32600 answer instead of silence, and the gate stays up', async () => {
    const g = fakeGate();
    const replies = await rawGate(g.config, [
      `${JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' })}\n`,
      `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list', params: [1] })}\n`,
      `${init('2025-06-18', 8)}\n`,
    ]);
    assert.deepEqual(
      replies.map((r) => [r.id, (r as { error?: { code: number } }).error?.code]),
      [
        [null, -32600],
        [7, -32600],
        [8, undefined],
      ],
    );
  });
});

describe('a request id reused while its request is in progress', () => {
  it('is refused, so that a cancel still reaches the first request', async () => {
    const g = fakeGate();
    const call = (id: number, name: string) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } })}\n`;
    const replies = await rawGate(
      g.config,
      [
        `${init('2025-06-18')}\n`,
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`,
        call(7, 'slow'),
        call(7, 'echo'),
        `${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'ping' })}\n`,
        `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } })}\n`,
        call(8, 'echo'),
      ],
      4,
    );
    const sevens = replies.filter((r) => r.id === 7) as { error?: { code: number } }[];
    assert.deepEqual(
      sevens.map((r) => r.error?.code),
      [-32600, -32600],
    );
    assert.ok(replies.some((r) => r.id === 8));
    // The cancel stopped the first request: before it left the gate, or upstream under its own id.
    const slowSent = g.seen().some((e) => e.method === 'tools/call' && e.params?.name === 'slow');
    assert.equal(
      slowSent,
      g.seen().some((e) => e.method === 'notifications/cancelled'),
    );
  });
});

describe('BR-12 version negotiation', () => {
  it('never echoes an unknown version and keeps an old one the SDK supports', async () => {
    const g = fakeGate();
    const [future] = await rawGate(g.config, [`${init('2099-01-01')}\n`]);
    assert.equal((future as { result: { protocolVersion: string } }).result.protocolVersion, '2025-11-25');
    const [old] = await rawGate(g.config, [`${init('2024-11-05')}\n`]);
    assert.equal((old as { result: { protocolVersion: string } }).result.protocolVersion, '2024-11-05');
    const upstreamInit = g.seen().find((e) => e.method === 'initialize');
    assert.equal(upstreamInit?.params?.protocolVersion, '2025-11-25', 'each leg negotiates its own version');
  });
});

describe('BR-16 tool names with several upstreams', () => {
  it('routes through the table, so a tool named a__b works behind a prefix', async () => {
    const dir = tmp();
    const config = writeConfig(
      dir,
      `upstreams:\n  one:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\n  two_x:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\n`,
    );
    const agent = await startAgent(config, approve);
    try {
      const { tools } = await agent.client.request({ method: 'tools/list' }, ResultSchema);
      const names = (tools as { name: string }[]).map((t) => t.name);
      assert.ok(names.includes('one__a__b') && names.includes('two_x__a__b'));
      assert.ok(names.every((n) => /^[a-zA-Z0-9_-]{1,64}$/.test(n)));
      assert.equal(textOf(await agent.call('one__a__b', {})), 'a__b reached');
      assert.equal(textOf(await agent.call('two_x__a__b', {})), 'a__b reached');
    } finally {
      await agent.close();
    }
  });
});

describe('BR-18 fields lost in re-encoding', () => {
  it('keeps unknown fields, _meta, outputSchema and structuredContent on lists and reads', async () => {
    const g = fakeGate();
    const direct = await connectDirect(NODE, g.args);
    const agent = await startAgent(g.config, approve);
    try {
      assert.deepEqual(await agent.client.request({ method: 'tools/list' }, ResultSchema), await direct.request({ method: 'tools/list' }, ResultSchema));
      for (const name of ['score', 'echo']) {
        const want = await direct.request({ method: 'tools/call', params: { name, arguments: { k: 'v' } } }, ResultSchema);
        assert.deepEqual(await agent.call(name, { k: 'v' }), want);
      }
    } finally {
      await direct.close();
    }
    try {
      // The SDK client validates structuredContent against the tool's outputSchema (additionalProperties: false).
      await agent.client.listTools();
      const typed = await agent.client.callTool({ name: 'typed_write', arguments: { x: 1 } });
      assert.deepEqual(typed.structuredContent, { ok: true });
      assert.equal(verdictOf(typed as Record<string, unknown>)?.outcome, 'executed');
      const untyped = await agent.call('write_note', { x: 2 });
      assert.equal((untyped.structuredContent as { lookfirst: { outcome: string } }).lookfirst.outcome, 'executed');
    } finally {
      await agent.close();
    }
  });
});
