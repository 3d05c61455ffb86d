/**
 * Signed receipts end to end: the real gate (dist/) in front of the real server-filesystem. A write
 * approved through a real HTTPS webhook receiver, and one a rule allowed, each leave a receipt in
 * `audit.receipts` that `lookfirst receipt verify` accepts (exit 0) and `receipt show` describes; one
 * edited byte is named as an edit after signing (exit 2); a log cut before the receipt's entry, or another
 * gate's log, is named as the entry missing (exit 2); a denied call leaves no receipt. A write approved in
 * the client (elicitation) and one whose outcome is unknown (linked to its execution_failed entry) leave
 * receipts too. Run `npm run build` first.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateAuditKey } from '../src/audit/keys.js';
import type { WebhookPreview } from '../src/confirm/channels/webhook.js';
import { approve, auditEntries, FAKE_UPSTREAM, FS_SERVER, NODE, nodeUpstream, runCli, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { makePki, type TestPki } from './tls.js';
import { answerPreview, WebhookReceiver } from './webhook-receiver.js';

const SECRET = 'receipt-secret-'.repeat(4);

async function decide(p: WebhookPreview, decision: 'approve' | 'deny'): Promise<void> {
  assert.equal(await answerPreview(p, decision, 'oncall-bot'), 200);
}

/** A gate folder with a filesystem upstream, the webhook channel, and `rules` (YAML) as given. */
function gate(dir: string, webhook: string, rules = ''): { data: string; config: string; receipts: string } {
  const data = join(dir, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(dir, 'webhook.secret'), `${SECRET}\n`);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${rules}confirm:\n  timeout_seconds: 20\n  elicitation: false\n  webhook:\n${webhook}\n    secret_file: webhook.secret\n    listen_port: 0\n`,
  );
  return { data, config, receipts: join(dir, 'receipts') };
}

/** The receipt of a call, parsed, and its file. */
function receiptOf(receipts: string, callId: string): { file: string; r: Record<string, unknown> } {
  const file = join(receipts, `${callId}.json`);
  assert.ok(existsSync(file), `no receipt ${file} (have: ${existsSync(receipts) ? readdirSync(receipts).join(', ') : 'no folder'})`);
  return { file, r: JSON.parse(readFileSync(file, 'utf8')) };
}

describe('signed receipts', () => {
  let pki: TestPki;
  let receiver: WebhookReceiver;
  const dirs: string[] = [];
  before(async () => {
    const d = tmp('lf-pki-');
    dirs.push(d);
    pki = makePki(d);
    receiver = await new WebhookReceiver(pki).start();
  });
  after(async () => {
    await receiver.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const webhookYaml = () => `    url: https://localhost:${receiver.port}/hook\n    ca_file: ${JSON.stringify(pki.caFile)}`;

  let webhookGate: { dir: string; config: string; file: string; seq: number } | undefined;

  it('a write approved through the webhook leaves a receipt that verifies (exit 0); a denied call leaves none', async () => {
    const dir = tmp();
    dirs.push(dir);
    const { data, config, receipts } = gate(dir, webhookYaml());
    const agent = await startAgent(config);
    try {
      const path = join(data, 'approved.txt');
      const result = agent.call('write_file', { path, content: 'approved by the hook' });
      const p = await receiver.next((x) => x.arguments.path === path);
      await decide(p, 'approve');
      const v = verdictOf(await result);
      assert.equal(v?.outcome, 'executed', JSON.stringify(v));
      const denyPath = join(data, 'denied.txt');
      const denied = agent.call('write_file', { path: denyPath, content: 'no' });
      const q = await receiver.next((x) => x.arguments.path === denyPath);
      await decide(q, 'deny');
      assert.equal(verdictOf(await denied)?.outcome, 'denied');
      await agent.close();

      const callId = String(v?.call_id);
      const { file, r } = receiptOf(receipts, callId);
      const who = r.who as Record<string, unknown>;
      assert.equal(who.actor, 'webhook:oncall-bot');
      assert.equal(who.trust, 'shared-secret');
      assert.equal((r.how as { method: string }).method, 'webhook');
      assert.equal((r.what as { args_sha256: string }).args_sha256, v?.args_sha256);
      assert.deepEqual(
        (r.checks as { name: string; ok: boolean }[]).map((c) => [c.name, c.ok]),
        [
          ['shared_secret', true],
          ['action_unchanged', true],
          ['call_open', true],
        ],
      );
      const when = r.when as { proposed?: string; shown?: string; confirmed: string; executed: string };
      assert.ok(when.proposed && when.proposed <= when.confirmed && when.confirmed <= when.executed, JSON.stringify(when));
      // Linked to its executed entry, and the log names the receipt's SHA-256.
      const entries = auditEntries(dir);
      const link = r.audit as { seq: number; event: string };
      assert.equal(entries[link.seq]?.event, 'executed');
      assert.equal(entries[link.seq]?.call_id, callId);
      assert.ok(entries.some((e) => e.event === 'receipt_issued' && e.call_id === callId));
      // The denied call: nothing ran, no receipt.
      assert.equal(existsSync(join(receipts, `${q.call_id}.json`)), false);
      assert.deepEqual(readdirSync(receipts), [`${callId}.json`]);

      const ok = runCli(['receipt', 'verify', file, '--config', config]);
      assert.equal(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /receipt verified/);
      const json = runCli(['receipt', 'verify', file, '--config', config, '--json']);
      assert.equal(JSON.parse(json.stdout).ok, true);
      const shown = runCli(['receipt', 'show', file]);
      assert.equal(shown.status, 0, shown.stderr);
      assert.match(shown.stdout, /who: {3}webhook:oncall-bot.*\(channel webhook, trust shared-secret\)/);
      assert.match(shown.stdout, /ok {5}shared_secret/);
      webhookGate = { dir, config, file, seq: link.seq };
    } finally {
      await agent.close().catch(() => {});
    }
  });

  it('one edited byte is named: the receipt was edited after signing (exit 2)', () => {
    assert.ok(webhookGate, 'the webhook test runs first');
    const text = readFileSync(webhookGate.file, 'utf8');
    // One hex digit of the arguments' hash: still a well-formed receipt, no longer the one signed.
    const at = text.indexOf('"args_sha256":"') + '"args_sha256":"'.length;
    const edited = join(webhookGate.dir, 'edited.json');
    writeFileSync(edited, text.slice(0, at) + (text[at] === '0' ? '1' : '0') + text.slice(at + 1));
    const r = runCli(['receipt', 'verify', edited, '--config', webhookGate.config]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /FAILED signature: the receipt was edited after signing: its signature does not match/);
    assert.match(r.stdout, /receipt NOT verified/);
  });

  it("a receipt checked with another gate's audit.pub leads with the other key, not with an edit (exit 2)", () => {
    assert.ok(webhookGate, 'the webhook test runs first');
    const other = tmp('lf-other-key-');
    dirs.push(other);
    generateAuditKey(join(other, 'audit.key'), join(other, 'audit.pub'));
    const r = runCli(['receipt', 'verify', webhookGate.file, '--log', join(webhookGate.dir, 'audit.jsonl'), '--pub', join(other, 'audit.pub')]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /FAILED signature: signed by another key \("lookfirst\/[0-9a-f]+"\), not this gate's audit\.pub \(lookfirst\/[0-9a-f]+ in /);
    assert.match(r.stdout, /FAILED key: names the key/);
  });

  it('a receipt file that is not there, or is a folder, is named in words (exit 1)', () => {
    const missing = runCli(['receipt', 'verify', 'nope.json', '--log', 'x', '--pub', 'y']);
    assert.equal(missing.status, 1, missing.stdout + missing.stderr);
    assert.match(missing.stderr, /no such file: nope\.json/);
    assert.doesNotMatch(missing.stderr, /ENOENT/);
    const empty = tmp('lf-receipt-folder-');
    dirs.push(empty);
    const folder = runCli(['receipt', 'show', empty]);
    assert.equal(folder.status, 1, folder.stdout + folder.stderr);
    assert.match(folder.stderr, /is a folder, not a receipt/);
  });

  it("a receipt under another call's file name (files swapped or copied) is named: it is no receipt of that call (exit 2)", () => {
    assert.ok(webhookGate, 'the webhook test runs first');
    const other = join(webhookGate.dir, '00000000-0000-4000-8000-000000000000.json');
    copyFileSync(webhookGate.file, other);
    const r = runCli(['receipt', 'verify', other, '--config', webhookGate.config]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /FAILED file_name: the file is named for call 00000000-0000-4000-8000-000000000000, but holds the receipt of call /);
    const own = runCli(['receipt', 'verify', webhookGate.file, '--config', webhookGate.config]);
    assert.match(own.stdout, /ok +file_name/);
    // A name that names no call (a copy kept as evidence) is not judged by its name.
    const kept = join(webhookGate.dir, 'kept-copy.json');
    copyFileSync(webhookGate.file, kept);
    const k = runCli(['receipt', 'verify', kept, '--config', webhookGate.config]);
    assert.equal(k.status, 0, k.stdout + k.stderr);
  });

  it('a log cut before its entry is named: its audit entry is missing from the log (exit 2)', () => {
    assert.ok(webhookGate, 'the webhook test runs first');
    const log = readFileSync(join(webhookGate.dir, 'audit.jsonl'), 'utf8').split('\n');
    const cut = join(webhookGate.dir, 'cut.jsonl');
    writeFileSync(cut, `${log.slice(0, webhookGate.seq).join('\n')}\n`);
    const r = runCli(['receipt', 'verify', webhookGate.file, '--log', cut, '--pub', join(webhookGate.dir, 'audit.pub')]);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout, new RegExp(`FAILED entry_in_log: its audit entry \\(seq ${webhookGate.seq}\\) is missing from the log`));
    // The log file itself cut in place (its head remembers more): the entry is missing, and the log is tampered.
    const own = join(webhookGate.dir, 'audit.jsonl');
    copyFileSync(own, `${own}.bak`);
    writeFileSync(own, `${log.slice(0, webhookGate.seq).join('\n')}\n`);
    const inPlace = runCli(['receipt', 'verify', webhookGate.file, '--config', webhookGate.config]);
    copyFileSync(`${own}.bak`, own);
    assert.equal(inPlace.status, 2, inPlace.stdout + inPlace.stderr);
    assert.match(inPlace.stdout, /FAILED entry_in_log: its audit entry \(seq \d+\) is missing from the log/);
    assert.match(inPlace.stdout, /FAILED log_intact/);
  });

  it('a write approved in the client (elicitation) leaves a receipt: method elicitation, trust client, the prompt shown', async () => {
    const dir = tmp();
    dirs.push(dir);
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    const config = writeConfig(dir, `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n`);
    const agent = await startAgent(config, approve);
    let callId: string;
    try {
      const v = verdictOf(await agent.call('write_file', { path: join(data, 'asked.txt'), content: 'asked in the client' }));
      assert.equal(v?.outcome, 'executed', JSON.stringify(v));
      callId = String(v?.call_id);
    } finally {
      await agent.close();
    }
    const { file, r } = receiptOf(join(dir, 'receipts'), callId);
    assert.equal((r.how as { method: string }).method, 'elicitation');
    assert.equal((r.who as { trust: string }).trust, 'client');
    assert.match(String((r.what as { shown?: string }).shown), /asked\.txt/);
    assert.deepEqual(
      (r.checks as { name: string }[]).map((c) => c.name),
      ['in_client_answer', 'action_unchanged'],
    );
    const ok = runCli(['receipt', 'verify', file, '--config', config]);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  });

  it('a write whose outcome is unknown (no answer in time) gets a receipt linked to its execution_failed entry', async () => {
    // The fake upstream stands in for a server that never answers (no real one does so on demand).
    const dir = tmp();
    dirs.push(dir);
    const config = writeConfig(
      dir,
      `upstreams:\n${nodeUpstream('fake', FAKE_UPSTREAM)}rules:\n  tools:\n    hang_write: { action: allow }\nexecution:\n  timeout_seconds: 1\nconfirm:\n  elicitation: false\n`,
    );
    const agent = await startAgent(config);
    let callId: string;
    try {
      const v = verdictOf(await agent.call('hang_write', { n: 1 }));
      assert.equal(v?.readback, 'unclear', JSON.stringify(v));
      callId = String(v?.call_id);
    } finally {
      await agent.close();
    }
    const { file, r } = receiptOf(join(dir, 'receipts'), callId);
    assert.equal((r.audit as { event: string }).event, 'execution_failed');
    assert.equal((r.outcome as { executed: string }).executed, 'unknown');
    const ok = runCli(['receipt', 'verify', file, '--config', config]);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
  });

  it('a receipt that cannot be written does not undo the call: it ran, the log says receipt_failed, the operator is told', async () => {
    const dir = tmp();
    dirs.push(dir);
    const data = join(dir, 'data');
    mkdirSync(data, { recursive: true });
    // The receipts folder's path is taken by a file: no folder can be made there.
    writeFileSync(join(dir, 'blocked'), 'not a folder');
    const config = writeConfig(
      dir,
      `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nrules:\n  tools:\n    write_file: { action: allow }\naudit:\n  receipts: blocked\nconfirm:\n  elicitation: false\n`,
    );
    const agent = await startAgent(config);
    const path = join(data, 'ran.txt');
    let v: Record<string, unknown> | undefined;
    try {
      v = verdictOf(await agent.call('write_file', { path, content: 'it ran' }));
    } finally {
      await agent.close();
    }
    assert.equal(v?.outcome, 'executed', JSON.stringify(v));
    assert.equal(readFileSync(path, 'utf8'), 'it ran');
    const entries = auditEntries(dir).filter((e) => e.call_id === v?.call_id);
    const failed = entries.find((e) => e.event === 'receipt_failed');
    assert.ok(failed, JSON.stringify(entries.map((e) => e.event)));
    assert.match(String(failed.reason), /blocked/);
    assert.equal(
      entries.some((e) => e.event === 'receipt_issued'),
      false,
    );
    assert.match(agent.stderr(), /receipt: no receipt for call/);
  });

  it('a write a rule allowed leaves a receipt (method rule, check rule_matched) that verifies; against another gate log it does not', async () => {
    assert.ok(webhookGate, 'the webhook test runs first');
    const dir = tmp();
    dirs.push(dir);
    const { data, config, receipts } = gate(dir, webhookYaml(), 'rules:\n  tools:\n    write_file: { action: allow }\n');
    const agent = await startAgent(config);
    let callId: string;
    try {
      const v = verdictOf(await agent.call('write_file', { path: join(data, 'ruled.txt'), content: 'by rule' }));
      assert.equal(v?.outcome, 'executed', JSON.stringify(v));
      callId = String(v?.call_id);
    } finally {
      await agent.close();
    }
    const { file, r } = receiptOf(receipts, callId);
    assert.equal((r.how as { method: string }).method, 'rule');
    assert.equal((r.who as { trust: string }).trust, 'rule');
    assert.deepEqual(
      (r.checks as { name: string; ok: boolean }[]).map((c) => [c.name, c.ok]),
      [['rule_matched', true]],
    );
    assert.equal((r.what as { shown?: string }).shown, undefined, 'nobody was shown anything');
    const ok = runCli(['receipt', 'verify', file, '--config', config]);
    assert.equal(ok.status, 0, ok.stdout + ok.stderr);
    // Another gate's log (the webhook test's), under that gate's key: nothing of this receipt is there.
    const elsewhere = runCli(['receipt', 'verify', file, '--log', join(webhookGate.dir, 'audit.jsonl'), '--pub', join(dir, 'audit.pub')]);
    assert.equal(elsewhere.status, 2, elsewhere.stdout + elsewhere.stderr);
    assert.match(elsewhere.stdout, /FAILED entry_in_log: its audit entry \(seq \d+\) is missing from the log/);
    // Usage: no config here and no --log/--pub.
    const usage = runCli(['receipt', 'verify', file]);
    assert.equal(usage.status, 1, usage.stdout + usage.stderr);
  });
});
