/**
 * Everywhere a client can read, under the privacy filter: an upstream that puts private values in its
 * instructions, tool metadata, results (text, structured, images, blobs, embedded resources), resources,
 * prompts, completions, progress and log notifications and errors. None reaches the client in clear; the
 * tool names stay; binary content is withheld unless allowed; placeholders go back into tool calls and
 * prompt arguments; the audit log's free text is masked too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Agent, approve, nodeUpstream, ResultSchema, ROOT, startAgent, textOf, tmp, verdictOf, writeConfig } from './helpers.js';

const UPSTREAM = join(ROOT, 'test/fixtures/private-upstream.mjs');
/** What the fixture hides everywhere (test/fixtures/private-upstream.mjs). */
const VALUES = [
  'GB82 WEST 1234 5698 7654 32',
  '5555 5555 5555 4444',
  'ops.lead@corp.example',
  '+33 1 42 68 53 00',
  'AKIAIOSFODNN7EXAMPLE',
  'correct-horse-battery',
];
const PLACEHOLDER = /\[\[[A-Z][A-Z0-9_]*_[0-9a-f]{32}\]\]/;

function setup(privacyExtra = '') {
  const dir = tmp('lf-privacy-surfaces-');
  const events = join(dir, 'events.jsonl');
  const config = writeConfig(
    dir,
    `upstreams:\n${nodeUpstream('private', UPSTREAM, ['--events', events])}privacy:\n  ttl_seconds: 600\n${privacyExtra}rules:\n  tools:\n    send_payment: { action: allow }\n`,
  );
  return { dir, config, events };
}

function assertClear(seen: unknown, where: string) {
  const text = JSON.stringify(seen);
  for (const v of VALUES) assert.ok(!text.includes(v) && !text.includes(JSON.stringify(v).slice(1, -1)), `${where} holds ${v}: ${text.slice(0, 600)}`);
}

async function everything(agent: Agent) {
  const c = agent.client;
  const seen: Record<string, unknown> = {};
  seen.instructions = c.getInstructions();
  seen.tools = await c.request({ method: 'tools/list' }, ResultSchema);
  const progress: unknown[] = [];
  seen.lookup = await agent.call('lookup_customer', {}, { onprogress: (p) => progress.push(p) });
  seen.progress = progress;
  seen.photo = await agent.call('show_photo');
  seen.error = await agent.call('fail_loudly').catch((err: Error) => ({ thrown: err.message }));
  seen.resources = await c.request({ method: 'resources/list' }, ResultSchema);
  seen.read = await c.request({ method: 'resources/read', params: { uri: 'file:///customer.txt' } }, ResultSchema);
  seen.scan = await c.request({ method: 'resources/read', params: { uri: 'file:///scan.png' } }, ResultSchema);
  seen.prompts = await c.request({ method: 'prompts/list' }, ResultSchema);
  seen.prompt = await c.request({ method: 'prompts/get', params: { name: 'dunning', arguments: {} } }, ResultSchema);
  seen.completion = await c.request(
    { method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'dunning' }, argument: { name: 'iban', value: '' } } },
    ResultSchema,
  );
  return seen;
}

describe('privacy filter on every surface a client reads', () => {
  it('lets no private value through, keeps tool names, withholds binary content, and masks the log', async () => {
    const env = setup();
    const agent = await startAgent(env.config, approve);
    const logs: unknown[] = [];
    agent.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params);
    });
    let seen: Record<string, unknown>;
    try {
      seen = await everything(agent);
      seen.logs = logs;
      assertClear(seen, 'what the client received');

      const tools = (seen.tools as { tools: { name: string; description: string; title: string }[] }).tools;
      assert.deepEqual(
        tools.map((t) => t.name),
        ['lookup_customer', 'show_photo', 'fail_loudly', 'send_payment', 'fetch_inbox'],
      );
      assert.match(tools[0]?.description ?? '', PLACEHOLDER);
      assert.match(tools[0]?.title ?? '', PLACEHOLDER);
      assert.match(String(seen.instructions), /\[\[EMAIL\]\]/);
      const lookup = seen.lookup as { structuredContent: { password: string; iban: string } };
      assert.match(lookup.structuredContent.password, /^\[\[SECRET_[0-9a-f]{32}\]\]$/);
      assert.match(textOf(seen.lookup as Record<string, unknown>), PLACEHOLDER);
      assert.match(JSON.stringify(seen.photo), /an image \(image\/png\) was withheld by the privacy filter/);
      assert.match(JSON.stringify(seen.scan), /binary content \(image\/png\) was withheld/);
      assert.match(JSON.stringify(seen.error), /no account for \[\[EMAIL_[0-9a-f]{32}\]\]/);

      // A client that validates structuredContent against the output schema (the SDK's callTool does)
      // accepts the masked result: the schema it was given no longer constrains strings by shape.
      await agent.client.listTools();
      const validated = await agent.client.callTool({ name: 'lookup_customer', arguments: {} });
      assert.equal(validated.isError, undefined, JSON.stringify(validated));
      assertClear(validated, 'the validated call');

      // The same IBAN in a tool result and in a resource is one placeholder in this session.
      const iban = lookup.structuredContent.iban;
      assert.ok(JSON.stringify(seen.read).includes(iban));

      // Placeholders go back: into a tool call toward this (internal) upstream, and into prompt arguments.
      const paid = await agent.call('send_payment', { to: iban, amount: 10 });
      assert.equal(verdictOf(paid)?.outcome, 'executed', JSON.stringify(paid));
      assertClear(paid, 'the payment answer');
      await agent.client.request({ method: 'prompts/get', params: { name: 'dunning', arguments: { iban } } }, ResultSchema);
      const received = readFileSync(env.events, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { method: string; params?: Record<string, unknown> });
      const payment = received.find((e) => e.method === 'tools/call' && (e.params as { name?: string }).name === 'send_payment');
      assert.deepEqual((payment?.params as { arguments?: unknown } | undefined)?.arguments, { to: VALUES[0], amount: 10 });
      const prompt = received.filter((e) => e.method === 'prompts/get').at(-1);
      assert.deepEqual((prompt?.params as { arguments?: unknown } | undefined)?.arguments, { iban: VALUES[0] });
    } finally {
      await agent.close();
    }
    const log = readFileSync(join(env.dir, 'audit.jsonl'), 'utf8');
    for (const v of VALUES) assert.ok(!log.includes(v), `the audit log holds ${v}`);
    assert.match(log, /no account for \[\[EMAIL\]\]/, 'the failed read is logged with its error text masked');
  });

  it('still sees untrusted data the agent only saw as a placeholder flow into a write (taint), and quotes the placeholder', async () => {
    const env = setup();
    const agent = await startAgent(env.config, approve);
    try {
      const mail = textOf(await agent.call('fetch_inbox'));
      assert.doesNotMatch(mail, /GB29/);
      const iban = /\[\[IBAN_[0-9a-f]{32}\]\]/.exec(mail)?.[0];
      assert.ok(iban, mail);
      const paid = await agent.call('send_payment', { to: iban, amount: 5000 });
      assert.equal(verdictOf(paid)?.outcome, 'executed');
      assert.equal(agent.asked.length, 1, 'a rule allows send_payment, but untrusted data flows into it: a person decides');
      const asked = agent.asked[0] ?? '';
      assert.match(asked, /TAINTED/);
      assert.ok(asked.includes(iban), asked);
      assert.doesNotMatch(asked, /GB29 NWBK/);
    } finally {
      await agent.close();
    }
    const log = readFileSync(join(env.dir, 'audit.jsonl'), 'utf8');
    assert.doesNotMatch(log, /GB29 NWBK/);
  });

  it('sends a read-back the real values only when its upstream may get them', async () => {
    const dir = tmp('lf-privacy-readback-');
    const intEvents = join(dir, 'int.jsonl');
    const extEvents = join(dir, 'ext.jsonl');
    const config = writeConfig(
      dir,
      `upstreams:\n${nodeUpstream('int', UPSTREAM, ['--events', intEvents])}${nodeUpstream('ext', UPSTREAM, ['--events', extEvents], '    external: true\n    privacy: { resolve: never }\n')}privacy: {}\nrules:\n  tools:\n    int__send_payment:\n      action: allow\n      readback: { tool: ext__lookup_customer, args: { iban: "$args.to" }, expect: { "content[0].type": "text" } }\n`,
    );
    const agent = await startAgent(config, approve);
    try {
      const found = await agent.call('int__lookup_customer');
      const iban = (found.structuredContent as { iban: string }).iban;
      assert.match(iban, /^\[\[IBAN_[0-9a-f]{32}\]\]$/);
      const paid = await agent.call('int__send_payment', { to: iban });
      assert.equal(verdictOf(paid)?.outcome, 'executed', JSON.stringify(paid));
    } finally {
      await agent.close();
    }
    const calls = (file: string) =>
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { method: string; params?: { name?: string; arguments?: Record<string, unknown> } })
        .filter((e) => e.method === 'tools/call');
    assert.deepEqual(calls(intEvents).find((e) => e.params?.name === 'send_payment')?.params?.arguments, { to: VALUES[0] });
    const readBack = calls(extEvents).find((e) => e.params?.name === 'lookup_customer');
    assert.ok(readBack, 'the read-back ran');
    assert.match(String(readBack.params?.arguments?.iban), /^\[\[IBAN_[0-9a-f]{32}\]\]$/, 'a never upstream gets the placeholder, not the IBAN');
  });

  it('lets images and blobs through with privacy.allow_binary', async () => {
    const env = setup('  allow_binary: true\n');
    const agent = await startAgent(env.config, approve);
    try {
      const photo = await agent.call('show_photo');
      const types = (photo.content as { type: string }[]).map((c) => c.type);
      assert.deepEqual(types, ['image', 'audio', 'resource', 'resource', 'resource_link']);
      assert.doesNotMatch(JSON.stringify(photo), /withheld/);
    } finally {
      await agent.close();
    }
  });
});
