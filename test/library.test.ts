/**
 * The gate as a library (`createGatedServer`), end to end with the official SDK client:
 *   - over stdio, the example bank (examples/gated-bank/server.ts, importing the built package by its
 *     own name) with a real webhook receiver: a read answers at once; a transfer is held, shown with the
 *     author's preview at the author's risk, approved at the decision endpoint, runs once, reads back
 *     ok and leaves a receipt that `lookfirst receipt verify` accepts; a denied one never runs (the bank's balance proves it); `lookfirst verify-log` accepts the log;
 *   - in process (InMemoryTransport, from src/), a client that answers elicitation: a risk function that
 *     throws makes the call high risk, a preview that throws still asks (generic summary with a note),
 *     and a declined write never runs;
 *   - over Streamable HTTP, one SDK transport per session, each connected with `connect`.
 * Needs `npm run build` first (the example imports `lookfirst`, i.e. dist/).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { WebhookPreview } from '../src/confirm/channels/webhook.js';
import { createGatedServer, type GatedServer } from '../src/index.js';
import { auditEntries, NODE, ROOT, runCli, tmp, verdictOf, waitFor } from './helpers.js';
import { answerPreview, WebhookReceiver } from './webhook-receiver.js';

const SECRET = 'library-test-secret-'.repeat(3);
const EXAMPLE = join(ROOT, 'examples/gated-bank/server.ts');

function decide(p: WebhookPreview, decision: 'approve' | 'deny'): Promise<number> {
  return answerPreview(p, decision, 'alice');
}

const structured = (r: Record<string, unknown>) => r.structuredContent as Record<string, unknown> | undefined;

describe('a gated server built with createGatedServer (the example bank over stdio)', () => {
  let dir: string;
  let receiver: WebhookReceiver;
  let client: Client;
  const balance = async () =>
    structured(await client.callTool({ name: 'get_balance', arguments: { account: 'checking' } }, undefined, { timeout: 10_000 }))?.balance;

  before(async () => {
    dir = tmp('lf-library-');
    writeFileSync(join(dir, 'webhook.secret'), `${SECRET}\n`);
    receiver = await new WebhookReceiver().start();
    client = new Client({ name: 'library-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: NODE,
        args: ['--import', 'tsx', EXAMPLE],
        cwd: ROOT,
        env: { ...process.env, BANK_DIR: dir, BANK_WEBHOOK_URL: receiver.url, BANK_WEBHOOK_SECRET_FILE: join(dir, 'webhook.secret') } as Record<string, string>,
        stderr: 'pipe',
      }),
    );
  });
  after(async () => {
    await client?.close().catch(() => {});
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names itself as the author’s server and lists both tools', async () => {
    assert.deepEqual(client.getServerVersion(), { name: 'bank', version: '1.0.0' });
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name).sort(), ['get_balance', 'transfer']);
  });

  it('answers a read at once, with nobody asked', async () => {
    const started = Date.now();
    assert.equal(await balance(), 2500);
    assert.ok(Date.now() - started < 5000);
    assert.equal(receiver.previews.length, 0);
  });

  it('holds a transfer with the author’s preview and risk; an approval runs it once and it reads back ok', async () => {
    const args = { from: 'checking', to_iban: 'DE89370400440532013000', to_name: 'Alice', amount: 120 };
    const call = client.callTool({ name: 'transfer', arguments: args }, undefined, { timeout: 30_000 });
    const p = await receiver.next((x) => x.tool === 'transfer' && x.arguments.amount === 120);
    // The whole IBAN: the card text is all a paired phone shows, so no part of the destination is cut.
    assert.equal(p.summary, 'transfer: Send 120.00 EUR from checking to DE89 3704 0044 0532 0130 00 (Alice)');
    assert.equal(p.risk, 'medium');
    assert.equal(await decide(p, 'approve'), 200);
    const result = (await call) as Record<string, unknown>;
    assert.equal(result.isError, undefined, JSON.stringify(result));
    assert.equal(structured(result)?.balance_after, 2380);
    assert.equal(verdictOf(result)?.readback, 'ok');
    assert.equal(await balance(), 2380);
    const entries = auditEntries(dir).filter((e) => e.call_id === p.call_id);
    assert.equal(entries.filter((e) => e.event === 'executed').length, 1);
    assert.equal(entries.find((e) => e.event === 'readback')?.outcome, 'ok');
    // The same signed receipt as behind `lookfirst serve`, in receipts/ beside the log.
    const receipt = join(dir, 'receipts', `${p.call_id}.json`);
    assert.ok(await waitFor(() => existsSync(receipt), 10_000), 'no receipt was written');
    const r = runCli(['receipt', 'verify', receipt, '--log', join(dir, 'audit.jsonl'), '--pub', join(dir, 'audit.pub')]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  it('never runs a transfer a person denied: the balance is unchanged', async () => {
    const args = { from: 'checking', to_iban: 'GB33BUKB20201555555555', to_name: 'Mallory', amount: 2000 };
    const call = client.callTool({ name: 'transfer', arguments: args }, undefined, { timeout: 30_000 });
    const p = await receiver.next((x) => x.tool === 'transfer' && x.arguments.amount === 2000);
    assert.equal(p.risk, 'high');
    assert.equal(await decide(p, 'deny'), 200);
    const result = (await call) as Record<string, unknown>;
    assert.equal(result.isError, true);
    assert.equal(verdictOf(result)?.outcome, 'denied');
    assert.equal(await balance(), 2380);
    assert.equal(auditEntries(dir).filter((e) => e.call_id === p.call_id && e.event === 'executed').length, 0);
  });

  it('refuses at once a transfer whose arguments do not fit its schema, naming the problem: nobody is asked', async () => {
    const before = receiver.previews.length;
    const args = { from: 'checking', to_iban: 'not an iban', to_name: 'Mallory', amount: 5 };
    const started = Date.now();
    const result = (await client.callTool({ name: 'transfer', arguments: args }, undefined, { timeout: 30_000 })) as Record<string, unknown>;
    assert.ok(Date.now() - started < 10_000, 'refused at once, not held for a person');
    assert.equal(result.isError, true);
    const v = verdictOf(result);
    assert.equal(v?.outcome, 'denied', JSON.stringify(result));
    assert.match(String(v?.reason), /the server's own schema for transfer: the arguments do not fit \(.*to_iban/);
    assert.equal(receiver.previews.length, before, 'no question was sent');
    assert.equal(await balance(), 2380);
    const entries = auditEntries(dir).filter((e) => e.call_id === v?.call_id);
    assert.deepEqual(
      entries.map((e) => e.event),
      ['call_received', 'decision'],
    );
    assert.equal(entries[1]?.action, 'deny');
  });

  it('leaves an audit log that lookfirst verify-log accepts, with the config the example wrote', async () => {
    await client.close();
    // The example writes gate_stopped as its client goes away; then the log is complete.
    assert.ok(await waitFor(() => auditEntries(dir).some((e) => e.event === 'gate_stopped'), 10_000), 'the gate did not stop');
    // verify-log reads the log and key paths from a config: the example writes one for it (its README says so).
    const config = join(dir, 'lookfirst.yaml');
    assert.ok(existsSync(config), 'the example wrote BANK_DIR/lookfirst.yaml');
    const r = runCli(['verify-log', '--config', config]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.ok(existsSync(join(dir, 'audit.pub')));
  });
});

describe('a gated server in process (InMemoryTransport)', () => {
  let dir: string;
  let gated: GatedServer;
  let client: Client;
  const asked: string[] = [];
  const ran: string[] = [];

  before(async () => {
    dir = tmp('lf-library-mem-');
    gated = await createGatedServer({
      name: 'Test Shop',
      version: '0.0.1',
      audit: { log: join(dir, 'audit.jsonl'), key: join(dir, 'audit.key') },
      store: { kind: 'memory' },
      log: () => {},
    });
    gated.read('stock', { description: 'Items in stock', inputSchema: { sku: z.string() } }, ({ sku }) => ({ sku, count: 3 }));
    gated.write(
      'refund',
      {
        inputSchema: { order: z.string() },
        risk: () => {
          throw new Error('risk service down');
        },
        preview: ({ order }) => `Refund order ${order}`,
      },
      ({ order }) => {
        ran.push(`refund ${order}`);
        return 'refunded';
      },
    );
    gated.write(
      'cancel',
      {
        inputSchema: { order: z.string() },
        risk: () => 'low',
        preview: () => {
          throw new Error('template missing');
        },
      },
      ({ order }) => {
        ran.push(`cancel ${order}`);
        return 'cancelled';
      },
    );
    client = new Client({ name: 'mem-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params.message);
      return { action: 'decline' };
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await gated.connect(b);
    await client.connect(a);
  });
  after(async () => {
    await client?.close().catch(() => {});
    await gated?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers a read without asking', async () => {
    const r = (await client.callTool({ name: 'stock', arguments: { sku: 'A1' } })) as Record<string, unknown>;
    assert.deepEqual(structured(r), { sku: 'A1', count: 3 });
    assert.equal(asked.length, 0);
  });

  it('takes a write whose risk function throws as high risk, asks, and never runs it when declined', async () => {
    const r = (await client.callTool({ name: 'refund', arguments: { order: 'o-7' } })) as Record<string, unknown>;
    assert.equal(r.isError, true);
    assert.match(asked.at(-1) ?? '', /Refund order o-7/);
    const decision = auditEntries(dir).find((e) => e.event === 'decision' && e.tool === 'refund');
    assert.equal(decision?.risk, 'high');
    assert.match(String(decision?.reason ?? ''), /./);
    assert.deepEqual(ran, []);
  });

  it('still asks about a write whose preview throws, with the generic summary and a note', async () => {
    await client.callTool({ name: 'cancel', arguments: { order: 'o-8' } });
    assert.match(asked.at(-1) ?? '', /the server's preview failed \(template missing\)/);
    assert.deepEqual(ran, []);
  });

  it('refuses a second tool of the same name, and a write without risk or preview', () => {
    assert.throws(() => gated.read('stock', {}, () => 1), /registered already/);
    assert.throws(() => gated.write('x', {} as never, () => 1), /risk\(args\) and preview\(args\)/);
  });

  it('refuses a log whose key is missing, rather than start it again under a new key', async () => {
    await assert.rejects(
      createGatedServer({ name: 'x', version: '1', audit: { log: join(dir, 'audit.jsonl'), key: join(dir, 'elsewhere.key') }, log: () => {} }),
      (err: Error & { code?: string }) => err.code === 'AUDIT_KEY_MISSING' && /put the key back/.test(err.message),
    );
    assert.equal(existsSync(join(dir, 'elsewhere.key')), false);
  });

  it('checks its options with the config schema, naming every problem', async () => {
    await assert.rejects(
      createGatedServer({
        name: 'bad',
        version: '1',
        audit: { log: join(dir, 'b.jsonl'), key: join(dir, 'b.key') },
        confirm: { timeout_seconds: -1, web: { enabled: true, host: '0.0.0.0' } },
        rules: { transfer: { action: 'maybe' as never } },
      }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'CONFIG_INVALID');
        assert.match(err.message, /^createGatedServer options: 3 problems/);
        assert.match(err.message, /confirm\.timeout_seconds/);
        assert.match(err.message, /confirm\.web\.host: web\.host must be a loopback address/);
        assert.match(err.message, /rules\.transfer\.action/);
        return true;
      },
    );
    assert.equal(readFileSync(join(dir, 'audit.jsonl'), 'utf8').length > 0, true);
  });
});

describe('a gated server over Streamable HTTP (one transport per session)', () => {
  it('serves each session that connects its own transport', async () => {
    const dir = tmp('lf-library-http-');
    const gated = await createGatedServer({
      name: 'echo',
      version: '1.0.0',
      audit: { log: join(dir, 'audit.jsonl'), key: join(dir, 'audit.key') },
      store: { kind: 'memory' },
      log: () => {},
    });
    gated.read('echo', { inputSchema: { text: z.string() } }, ({ text }) => text);
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const http = createServer(async (req, res) => {
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport) {
        const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid): void => {
            sessions.set(sid, t);
          },
        });
        await gated.connect(t);
        transport = t;
      }
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    try {
      const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
      for (const text of ['one', 'two']) {
        const c = new Client({ name: 'http-test', version: '1.0.0' });
        await c.connect(new StreamableHTTPClientTransport(url));
        assert.deepEqual((await c.callTool({ name: 'echo', arguments: { text } })).content, [{ type: 'text', text }]);
        await c.close();
      }
      assert.equal(sessions.size, 2);
    } finally {
      await gated.close();
      http.closeAllConnections();
      await new Promise((r) => http.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
