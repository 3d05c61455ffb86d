/**
 * Paired devices through the real gate (`lookfirst serve` over stdio, the real server-filesystem, a
 * SQLite store): `lookfirst pair --json` opens a pairing on the store the running gate uses, a phone (this
 * test, speaking docs/device-api.md with its own key) pairs, sees the held call as a card, and decides it.
 * Wait mode: a tap runs the call, approved with trust device-key and every named check. A rule's high
 * risk needs a second, separately nonced yes. Pending mode: lookfirst_confirm runs the call with the
 * device's evidence, refuses evidence of another card by name, and runs nothing twice.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { signedHeaders } from '../src/confirm/devices/signature.js';
import { type Agent, auditEntries, FS_SERVER, NODE, runCli, startAgent, tmp, verdictOf, waitFor, writeConfig } from './helpers.js';

const dirs: string[] = [];
const agents: Agent[] = [];
after(async () => {
  for (const a of agents) await a.close().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Phone {
  base: string;
  id: string;
  key: string;
  get(path: string): Promise<{ status: number; body: Record<string, unknown> }>;
  post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** A signed POST of raw bytes (a voice recording). */
  upload(path: string, body: Buffer, type: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

type CardJson = { position: number; call_id: string; nonce: string; stage: string; summary: string; risk: string };
type SetJson = { set_id: string; cards: CardJson[] };

async function gate(mode: 'wait' | 'pending', rules = '', device = ''): Promise<{ agent: Agent; data: string; dir: string; config: string }> {
  const dir = tmp('lf-devgate-');
  dirs.push(dir);
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${rules}confirm:\n  mode: ${mode}\n  timeout_seconds: 60\n  hold_seconds: 30\n  elicitation: false\n  device:\n    enabled: true\n    port: 0\n${device}`,
  );
  const agent = await startAgent(config);
  agents.push(agent);
  return { agent, data, dir, config };
}

/** Pairs a phone the way a person would: the code from `lookfirst pair`, typed on the phone. */
async function pairPhone(agent: Agent, config: string): Promise<Phone> {
  assert.ok(await waitFor(() => /device page at http:\/\/127\.0\.0\.1:\d+\/device\//.test(agent.stderr()), 10_000), agent.stderr());
  const base = /device page at (http:\/\/127\.0\.0\.1:\d+)\/device\//.exec(agent.stderr())![1]!;
  const pair = runCli(['pair', '--config', config, '--json']);
  assert.equal(pair.status, 0, pair.stderr);
  const opened = JSON.parse(pair.stdout) as { pairing_id: string; code: string; url: string };
  assert.match(opened.code, /^\d{6}$/);
  const key = randomBytes(32).toString('base64url');
  const res = await fetch(`${base}/device/api/pair`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ pairing_id: opened.pairing_id, code: opened.code, key, name: 'test phone' }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  const id = ((await res.json()) as { device_id: string }).device_id;
  const signed = async (method: string, path: string, body?: string | Buffer, type = 'application/json') => {
    const headers = { ...signedHeaders({ id, key }, method, path, Date.now(), body ?? ''), ...(body ? { 'content-type': type } : {}) };
    const send = () => fetch(`${base}${path}`, { method, headers, body: typeof body === 'string' || body === undefined ? body : new Uint8Array(body) });
    // A kept-alive socket the server closes as fetch reuses it (a loaded machine, an idle of about 5 s)
    // fails before the request is sent; the same signed request once more on a new socket is not a replay.
    const r = await send().catch((err: Error & { cause?: { code?: string } }) => {
      if (err.message === 'fetch failed' && /ECONNRESET|UND_ERR_SOCKET/.test(String(err.cause?.code))) return send();
      throw err;
    });
    return { status: r.status, body: (await r.json()) as Record<string, unknown> };
  };
  return {
    base,
    id,
    key,
    get: (p) => signed('GET', p),
    post: (p, b) => signed('POST', p, JSON.stringify(b)),
    upload: (p, b, type) => signed('POST', p, b, type),
  };
}

/** Polls the phone's cards until one matches. */
async function cardFor(phone: Phone, match: RegExp): Promise<{ set: SetJson; card: CardJson }> {
  for (let i = 0; i < 100; i++) {
    const r = await phone.get('/device/api/cards');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const set = r.body as unknown as SetJson;
    const card = set.cards.find((c) => match.test(c.summary));
    if (card) return { set, card };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('no card appeared on the phone');
}

const canSpeak = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v espeak-ng && command -v pocketsphinx_continuous'], { stdio: 'ignore' });
    return existsSync('/usr/share/pocketsphinx/model/en-us');
  } catch {
    return false;
  }
})();

describe('paired devices through the gate', () => {
  it('voice: a spoken "yes" heard by the gate\'s own pocketsphinx (voice.pocketsphinx: true) approves the last card', {
    skip: canSpeak ? false : 'needs espeak-ng, pocketsphinx and pocketsphinx-en-us (.ci/run installs them)',
  }, async () => {
    const { agent, data, dir, config } = await gate('wait', '', '    voice:\n      pocketsphinx: true\n');
    const phone = await pairPhone(agent, config);
    const path = join(data, 'spoken');
    const result = agent.call('create_directory', { path });
    const { set } = await cardFor(phone, /spoken/);
    const wav = join(dir, 'yes.wav');
    execFileSync('espeak-ng', ['-m', '-v', 'en', '-s', '150', '-w', wav, '<speak><break time="300ms"/>yes<break time="300ms"/></speak>']);
    const answer = await phone.upload(`/device/api/voice?set=${set.set_id}`, readFileSync(wav), 'audio/wav');
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.transcript, 'yes');
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'executed', JSON.stringify(v));
    assert.equal(existsSync(path), true);
    // The same recording again decides nothing.
    const again = await phone.upload(`/device/api/voice?set=${set.set_id}`, readFileSync(wav), 'audio/wav');
    assert.notEqual(again.status, 200);
  });

  it('a tap on the paired phone runs the held call, approved by device key with every named check', async () => {
    const { agent, data, dir, config } = await gate('wait');
    const phone = await pairPhone(agent, config);
    // create_directory is medium risk: one yes decides it (write_file, high risk, needs two).
    const path = join(data, 'tapped');
    const result = agent.call('create_directory', { path });
    const { set, card } = await cardFor(phone, /tapped/);
    assert.equal(card.risk, 'medium');
    assert.equal(card.position, 1);
    const answer = await phone.post('/device/api/decide', { set_id: set.set_id, call_id: card.call_id, nonce: card.nonce, decision: 'approve' });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.match(String(answer.body.evidence_ref), /^ev_[0-9a-f]{16}$/, JSON.stringify(answer.body));
    const v = verdictOf(await result);
    assert.equal(v?.outcome, 'executed', JSON.stringify(v));
    assert.equal(v?.approved_by, 'device:owner/test phone');
    assert.equal(existsSync(path), true);
    const approval = auditEntries(dir).find((e) => e.event === 'approval' && e.call_id === card.call_id);
    assert.equal(approval?.trust, 'device-key');
    // Its receipt names the device and every check, the decision's and those before execution, and verifies.
    const file = join(dir, 'receipts', `${card.call_id}.json`);
    const receipt = JSON.parse(readFileSync(file, 'utf8')) as {
      who: { trust: string; device?: string };
      how: { method: string };
      checks: { name: string; ok: boolean }[];
    };
    assert.equal(receipt.who.trust, 'device-key');
    assert.equal(receipt.how.method, 'tap');
    const names = receipt.checks.map((c) => c.name);
    for (const n of [
      'device_paired',
      'card_set_open',
      'not_expired',
      'words_choose_card',
      'action_unchanged',
      'nonce_consumed_once',
      'evidence_exists',
      'evidence_for_card_set',
      'evidence_unused',
    ])
      assert.ok(names.includes(n), `the receipt records ${n}: ${names.join(',')}`);
    assert.ok(receipt.checks.every((c) => c.ok));
    const verified = runCli(['receipt', 'verify', file, '--config', config]);
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
    // The same nonce again decides nothing.
    const again = await phone.post('/device/api/decide', { set_id: set.set_id, call_id: card.call_id, nonce: card.nonce, decision: 'approve' });
    assert.notEqual(again.status, 200);
  });

  it('a call a rule marks high risk needs a second, separately nonced yes', async () => {
    const { agent, data, dir, config } = await gate('wait', 'rules:\n  tools:\n    create_directory:\n      action: confirm\n      risk: high\n');
    const phone = await pairPhone(agent, config);
    const path = join(data, 'high');
    const result = agent.call('create_directory', { path });
    const first = await cardFor(phone, /high/);
    assert.equal(first.card.risk, 'high');
    assert.equal(first.card.stage, 'first');
    const yes = await phone.post('/device/api/decide', { set_id: first.set.set_id, call_id: first.card.call_id, nonce: first.card.nonce, decision: 'approve' });
    assert.equal(yes.status, 200, JSON.stringify(yes.body));
    assert.equal(yes.body.outcome, 'second');
    assert.equal(existsSync(path), false, 'one yes is not enough for a high-risk call');
    const second = await cardFor(phone, /high/);
    assert.equal(second.card.stage, 'second');
    assert.notEqual(second.card.nonce, first.card.nonce, 'the second yes carries its own nonce');
    const again = await phone.post('/device/api/decide', {
      set_id: second.set.set_id,
      call_id: second.card.call_id,
      nonce: second.card.nonce,
      decision: 'approve',
    });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(verdictOf(await result)?.outcome, 'executed');
    assert.equal(existsSync(path), true);
    // Both yeses are in the receipt: the second as `how.method`, the first as `how.first`.
    const file = join(dir, 'receipts', `${first.card.call_id}.json`);
    const receipt = JSON.parse(readFileSync(file, 'utf8')) as { how: { method: string; first?: { method: string; confirmed: string } } };
    assert.equal(receipt.how.method, 'tap');
    assert.equal(receipt.how.first?.method, 'tap', JSON.stringify(receipt.how));
    assert.match(String(receipt.how.first?.confirmed), /^\d{4}-\d{2}-\d{2}T.*Z$/);
    const verified = runCli(['receipt', 'verify', file, '--config', config]);
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
  });

  it('pending mode: lookfirst_confirm runs with the device evidence, refuses another card’s evidence, and runs once', async () => {
    const { agent, data, dir, config } = await gate('pending');
    const phone = await pairPhone(agent, config);
    const a = join(data, 'dir-a');
    const b = join(data, 'dir-b');
    const pa = ((await agent.call('create_directory', { path: a }))._meta as Record<string, { pending_id: string }>).lookfirst_answer!;
    const pb = ((await agent.call('create_directory', { path: b }))._meta as Record<string, { pending_id: string }>).lookfirst_answer!;
    const ca = await cardFor(phone, /dir-a/);
    assert.equal(ca.set.cards.length, 2, 'both calls are cards, numbered');
    const yesA = await phone.post('/device/api/decide', { set_id: ca.set.set_id, call_id: ca.card.call_id, nonce: ca.card.nonce, decision: 'approve' });
    assert.equal(yesA.status, 200, JSON.stringify(yesA.body));
    assert.equal(yesA.body.message, 'Approved: runs when the agent collects it', 'pending mode: nothing runs until the agent collects it');
    const cb = await cardFor(phone, /dir-b/);
    const yesB = await phone.post('/device/api/decide', { set_id: cb.set.set_id, call_id: cb.card.call_id, nonce: cb.card.nonce, decision: 'approve' });
    assert.equal(yesB.status, 200, JSON.stringify(yesB.body));
    // B's evidence offered for A: refused by name, nothing runs.
    const swapped = await agent.call('lookfirst_confirm', { pending_id: pa.pending_id, evidence_ref: yesB.body.evidence_ref });
    assert.equal(swapped.isError, true);
    assert.match(JSON.stringify(swapped), /evidence_for_card_set/);
    assert.equal(existsSync(a), false);
    const ranA = await agent.call('lookfirst_confirm', { pending_id: pa.pending_id, evidence_ref: yesA.body.evidence_ref });
    assert.equal(verdictOf(ranA)?.outcome, 'executed', JSON.stringify(ranA));
    assert.equal(existsSync(a), true);
    const replay = await agent.call('lookfirst_confirm', { pending_id: pa.pending_id, evidence_ref: yesA.body.evidence_ref });
    assert.equal(replay.isError, true, 'a used confirmation runs nothing');
    const ranB = await agent.call('lookfirst_confirm', { pending_id: pb.pending_id });
    assert.equal(verdictOf(ranB)?.outcome, 'executed', JSON.stringify(ranB));
    const started = auditEntries(dir).filter((e) => e.event === 'execution_started');
    assert.equal(started.length, 2, 'each call ran exactly once');
  });
});
