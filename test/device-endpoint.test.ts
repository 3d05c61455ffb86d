/**
 * The device endpoint over plain HTTP, as a third-party app speaks it (docs/device-api.md): requests
 * signed with `signRequest` against a real SQLite store and the real registry, pairing and cards. Every
 * forged, stale, replayed, altered or oversized request is refused and decides nothing; a right one
 * decides the held call with trust `device-key` and every named check passed.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { signedHeaders } from '../src/confirm/devices/signature.js';
import { call, type DeviceRig, pairDevice, startDeviceRig } from './device-rig.js';
import { removeTemp, tempDir } from './temp.js';

type Device = { id: string; key: string };
const JSON_TYPE = { 'content-type': 'application/json' };

function signed(rig: DeviceRig, d: Device, method: string, path: string, body?: string | Buffer, opts: { ts?: number; type?: string } = {}) {
  const headers = {
    ...signedHeaders(d, method, path, opts.ts ?? Date.now(), body),
    ...(body === undefined ? {} : { 'content-type': opts.type ?? 'application/json' }),
  };
  return call(rig.endpoint.port, method, path, headers, body);
}

async function cardsOf(rig: DeviceRig, d: Device) {
  const r = await signed(rig, d, 'GET', '/device/api/cards');
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json as { set_id: string; cards: { position: number; call_id: string; nonce: string; stage: string; risk: string }[] };
}

const decideBody = (setId: string, c: { call_id: string; nonce: string }, decision = 'approve') =>
  JSON.stringify({ set_id: setId, call_id: c.call_id, nonce: c.nonce, decision });

describe('device endpoint', () => {
  let rig: DeviceRig;
  let phone: Device;
  before(async () => {
    rig = await startDeviceRig();
    phone = await pairDevice(rig);
  });
  after(async () => {
    await rig?.close();
  });

  it('serves the page and its files without a key, under the page CSP, and never an API answer from a cache', async () => {
    for (const [path, type] of [
      ['/device/', /text\/html/],
      ['/device/app.js', /javascript/],
      ['/device/voice.js', /javascript/],
      ['/device/app.css', /text\/css/],
      ['/device/manifest.webmanifest', /manifest\+json/],
      ['/device/sw.js', /javascript/],
      ['/device/icon.svg', /svg/],
    ] as const) {
      const r = await call(rig.endpoint.port, 'GET', path);
      assert.equal(r.status, 200, path);
      assert.match(String(r.headers['content-type']), type);
      assert.match(String(r.headers['content-security-policy']), /default-src 'none'; script-src 'self'/);
      assert.equal(r.headers['x-frame-options'], 'DENY');
      assert.equal(r.headers['access-control-allow-origin'], undefined);
    }
    const me = await signed(rig, phone, 'GET', '/device/api/me');
    assert.equal(me.status, 200);
    assert.equal(me.headers['cache-control'], 'no-store');
    assert.equal(me.json.device_id, phone.id);
    assert.equal(me.json.user, 'owner');
    assert.equal(me.json.key, undefined, 'the key is never sent back');
    assert.equal(me.json.voice, false, 'no recogniser: the page hides "Hold to speak"');
  });

  it('refuses a foreign Host before anything else', async () => {
    const r = await call(rig.endpoint.port, 'GET', '/device/', { host: 'evil.test' });
    assert.equal(r.status, 403);
  });

  it('refuses a wrong pairing code with the tries left, and malformed JSON with a sentence', async () => {
    const started = await rig.pairing.start('owner');
    const wrong = started.code === '000000' ? '111111' : '000000';
    const body = JSON.stringify({ pairing_id: started.pairingId, code: wrong, key: randomBytes(32).toString('base64url'), name: 'x' });
    let r = await call(rig.endpoint.port, 'POST', '/device/api/pair', JSON_TYPE, body);
    assert.equal(r.status, 403);
    assert.equal(r.json.tries_left, 4);
    // The gate logs "refused <this>": the reason alone, not "device endpoint: …" again.
    assert.ok(
      rig.refused.some((x) => /^pairing refused: /.test(x)),
      JSON.stringify(rig.refused),
    );
    r = await call(rig.endpoint.port, 'POST', '/device/api/pair', JSON_TYPE, '{"code": ');
    assert.equal(r.status, 400);
    assert.match(String(r.json.error), /not valid JSON/);
    r = await signed(rig, phone, 'POST', '/device/api/decide', '[1,');
    assert.equal(r.status, 400);
    assert.match(String(r.json.error), /not valid JSON/);
  });

  it('refuses unsigned, stale, replayed and altered requests (401)', async () => {
    let r = await call(rig.endpoint.port, 'GET', '/device/api/cards');
    assert.equal(r.status, 401);
    assert.match(String(r.json.error), /not signed/);
    r = await signed(rig, phone, 'GET', '/device/api/cards', undefined, { ts: Date.now() - 61_000 });
    assert.equal(r.status, 401);
    assert.match(String(r.json.error), /60 s/);
    const headers = signedHeaders(phone, 'GET', '/device/api/me', Date.now());
    assert.equal((await call(rig.endpoint.port, 'GET', '/device/api/me', headers)).status, 200);
    r = await call(rig.endpoint.port, 'GET', '/device/api/me', headers);
    assert.equal(r.status, 401);
    assert.match(String(r.json.error), /used before/);
    const body = JSON.stringify({ set_id: 'cs_0000000000000000', call_id: 'x', nonce: '0'.repeat(32), decision: 'deny' });
    const h = { ...signedHeaders(phone, 'POST', '/device/api/decide', Date.now(), body), ...JSON_TYPE };
    r = await call(rig.endpoint.port, 'POST', '/device/api/decide', h, body.replace('deny', 'approve').replace('"x"', '"y"'));
    assert.equal(r.status, 401);
    assert.match(String(r.json.error), /does not match/);
    const foreign = { id: phone.id, key: Buffer.alloc(32, 7).toString('base64url') };
    assert.equal((await signed(rig, foreign, 'GET', '/device/api/cards')).status, 401);
    assert.ok(
      rig.refused.some((x) => /not signed/.test(x)),
      'refusals are reported',
    );
  });

  it('refuses a body over the limit (413) before reading it all', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(40_000) });
    const r = await signed(rig, phone, 'POST', '/device/api/decide', big);
    assert.equal(r.status, 413);
    const wav = Buffer.alloc(3_000_000);
    const v = await signed(rig, phone, 'POST', '/device/api/voice?set=cs_0000000000000000', wav, { type: 'audio/wav' });
    assert.equal(v.status, 413);
  });

  it('refuses a target that is not its own parsed form (400), however it is signed: what is signed is what is routed', async () => {
    const port = rig.endpoint.port;
    for (const target of [
      '/device/api/../api/cards',
      '/device/x/../api/cards',
      '/device/api/./cards',
      '/device/api\\cards',
      '/device/api/cards#frag',
      `http://127.0.0.1:${port}/device/api/cards`,
    ]) {
      const r = await call(port, 'GET', target, signedHeaders(phone, 'GET', target, Date.now()));
      assert.equal(r.status, 400, `${target}: ${JSON.stringify(r.json)}`);
      assert.match(String(r.json.error), /plain path/);
    }
    assert.equal((await signed(rig, phone, 'GET', '/device/api/cards?x=1')).status, 200, 'a plain path with a query is taken');
  });

  it('refuses a decide body that names a field twice (400), and the call stays held for the plain one', async () => {
    const held = rig.hold('write_file', { path: 'dup.txt' });
    const set = await cardsOf(rig, phone);
    const c = set.cards.find((x) => x.call_id === held.callId);
    assert.ok(c);
    const head = `{"set_id":"${set.set_id}","call_id":"${c.call_id}","nonce":"${c.nonce}"`;
    for (const body of [`${head},"decision":"deny","decision":"approve"}`, `${head},"decision":"deny","\\u0064ecision":"approve"}`]) {
      const r = await signed(rig, phone, 'POST', '/device/api/decide', body);
      assert.equal(r.status, 400, JSON.stringify(r.json));
      assert.match(String(r.json.error), /names "decision" twice/);
    }
    const r = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(set.set_id, c, 'deny'));
    assert.equal(r.json.outcome, 'denied', JSON.stringify(r.json));
    assert.equal((await held.answer).kind, 'denied');
  });

  it('refuses a request no paired device could have sent before taking in its body', async () => {
    const other = await pairDevice(rig, 'owner', 'to revoke');
    await rig.registry.revoke(other.id);
    const cases: [Record<string, string>, number][] = [
      [{}, 401],
      [{ 'x-lookfirst-device': 'dev_0000000000000000', 'x-lookfirst-timestamp': String(Date.now()), 'x-lookfirst-signature': 'A'.repeat(43) }, 401],
      [signedHeaders(phone, 'POST', '/device/api/voice?set=cs_0000000000000000', Date.now() - 120_000, ''), 401],
      [signedHeaders(other, 'POST', '/device/api/voice?set=cs_0000000000000000', Date.now(), ''), 403],
    ];
    for (const [headers, status] of cases) {
      // Announce 2 MB and send none of it: the answer must come from the headers alone.
      const got = await new Promise<number>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: rig.endpoint.port,
            method: 'POST',
            path: '/device/api/voice?set=cs_0000000000000000',
            headers: { host: `127.0.0.1:${rig.endpoint.port}`, 'content-type': 'audio/wav', 'content-length': '2000000', ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
            req.destroy();
          },
        );
        req.on('error', reject);
        req.flushHeaders();
        setTimeout(() => reject(new Error('no answer without the body: the endpoint waited for it')), 3000).unref();
      });
      assert.equal(got, status);
    }
  });

  it('approves a held call by tap: trust device-key, every named check passed', async () => {
    const held = rig.hold('write_file', { path: 'a.txt', content: 'hello' });
    const set = await cardsOf(rig, phone);
    const card = set.cards.find((c) => c.call_id === held.callId)!;
    assert.equal(card.position, 1);
    const r = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(set.set_id, card));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.outcome, 'approved');
    assert.equal(r.json.message, 'Approved: executes now');
    assert.match(String(r.json.evidence_ref), /^ev_[0-9a-f]{16}$/);
    const answer = await held.answer;
    assert.equal(answer.kind, 'approved');
    if (answer.kind !== 'approved') return;
    assert.equal(answer.trust, 'device-key');
    assert.equal(answer.channel, 'device');
    assert.match(answer.actor, /^device:owner\/test phone$/);
    assert.equal(answer.evidence?.method, 'tap');
    assert.ok(answer.evidence!.checks.length >= 5);
    assert.ok(
      answer.evidence!.checks.every((c) => c.ok),
      JSON.stringify(answer.evidence!.checks),
    );
    for (const name of ['device_paired', 'card_set_open', 'not_expired', 'words_choose_card', 'action_unchanged', 'nonce_consumed_once'])
      assert.ok(
        answer.evidence!.checks.some((c) => c.name === name),
        name,
      );

    // The same decision again (newly signed): the set is closed, nothing changes.
    const again = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(set.set_id, card));
    assert.equal(again.status, 409);
    assert.equal(again.json.failed_check, 'card_set_open');
  });

  it("refuses a nonce that is not the card's (409 naming nonce_consumed_once) and the call stays held", async () => {
    const held = rig.hold('write_file', { path: 'b.txt', content: 'x' });
    const set = await cardsOf(rig, phone);
    const card = set.cards.find((c) => c.call_id === held.callId)!;
    const r = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(set.set_id, { call_id: card.call_id, nonce: 'f'.repeat(32) }));
    assert.equal(r.status, 409, JSON.stringify(r.json));
    assert.equal(r.json.failed_check, 'nonce_consumed_once');
    assert.match(String(r.json.error), /nonce_consumed_once/);
    assert.ok(rig.pending.get(held.callId), 'still waiting');
    const fresh = await cardsOf(rig, phone);
    const c2 = fresh.cards.find((c) => c.call_id === held.callId)!;
    const d = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(fresh.set_id, c2, 'deny'));
    assert.equal(d.json.outcome, 'denied');
    assert.equal((await held.answer).kind, 'denied');
  });

  it('asks a high-risk call twice, each yes with its own nonce', async () => {
    const held = rig.hold('delete_file', { path: 'c.txt' }, { risk: 'high', riskReason: 'deletes a file' });
    const set = await cardsOf(rig, phone);
    const first = set.cards.find((c) => c.call_id === held.callId)!;
    assert.equal(first.stage, 'first');
    const r = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(set.set_id, first));
    assert.equal(r.json.outcome, 'second', JSON.stringify(r.json));
    assert.ok(rig.pending.get(held.callId), 'the first yes decides nothing');
    const next = await cardsOf(rig, phone);
    const second = next.cards.find((c) => c.call_id === held.callId)!;
    assert.equal(second.stage, 'second');
    assert.notEqual(second.nonce, first.nonce);
    const d = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(next.set_id, second));
    assert.equal(d.json.outcome, 'approved', JSON.stringify(d.json));
    assert.equal((await held.answer).kind, 'approved');
  });

  it('refuses a revoked device (403) on every signed route', async () => {
    const other = await pairDevice(rig, 'owner', 'old phone');
    assert.equal((await signed(rig, other, 'GET', '/device/api/me')).status, 200);
    await rig.registry.revoke(other.id);
    for (const path of ['/device/api/me', '/device/api/cards']) {
      const r = await signed(rig, other, 'GET', path);
      assert.equal(r.status, 403, path);
      assert.match(String(r.json.error), /revoked/);
    }
  });

  it('answers voice with 501 when no recogniser is configured', async () => {
    const r = await signed(rig, phone, 'POST', '/device/api/voice?set=cs_0000000000000000', Buffer.alloc(100), { type: 'audio/wav' });
    assert.equal(r.status, 501);
  });
});

describe('device endpoint in pending mode', () => {
  it('says an approved call runs when the agent collects it, not now', async () => {
    const rig = await startDeviceRig({ pendingMode: true });
    try {
      const phone = await pairDevice(rig);
      const held = rig.hold('write_file', { path: 'b.txt', content: 'x' });
      const set = await cardsOf(rig, phone);
      const card = set.cards.find((c) => c.call_id === held.callId)!;
      const r = await signed(rig, phone, 'POST', '/device/api/decide', decideBody(set.set_id, card));
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.equal(r.json.outcome, 'approved');
      assert.equal(r.json.message, 'Approved: runs when the agent collects it');
    } finally {
      await rig.close();
    }
  });
});

describe('device endpoint over TLS', () => {
  it('serves the page and takes signed requests over HTTPS with the given certificate', async (t) => {
    // Removed after the rig (hooks run in the order given), and at exit if the test stops before that.
    const dir = tempDir('lf-device-tls-');
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:prime256v1',
          '-nodes',
          '-keyout',
          'key.pem',
          '-out',
          'cert.pem',
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
        ],
        { cwd: dir, stdio: 'ignore' },
      );
    } catch {
      t.skip('openssl is not installed: it makes the test certificate');
      return;
    }
    const tls = { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8') };
    const rig = await startDeviceRig({ tls });
    t.after(() => rig.close());
    t.after(() => removeTemp(dir));
    assert.match(rig.endpoint.url, /^https:\/\/127\.0\.0\.1:\d+$/);
    const get = (path: string, headers: Record<string, string> = {}) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port: rig.endpoint.port, path, ca: tls.cert, headers: { host: `127.0.0.1:${rig.endpoint.port}`, ...headers } },
          (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('error', reject);
        req.end();
      });
    const page = await get('/device/');
    assert.equal(page.status, 200);
    assert.match(page.body, /Pair this phone/);
    const key = Buffer.alloc(32, 3).toString('base64url');
    const paired = await rig.registry.register({ user: 'owner', name: 'tls phone', key });
    const me = await get('/device/api/me', signedHeaders({ id: paired.id, key }, 'GET', '/device/api/me', Date.now()));
    assert.equal(me.status, 200, me.body);
    assert.equal(JSON.parse(me.body).name, 'tls phone');
  });
});

describe('device endpoint voice route (espeak-ng speech, pocketsphinx)', () => {
  it('denies the final card on a spoken "no", refuses the same recording again (evidence_unused) and a silent one (evidence_exists)', async (t) => {
    const missing = ['espeak-ng', 'pocketsphinx_continuous'].filter((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0);
    if (missing.length) {
      t.skip(`${missing.join(' and ')} not installed (apt-get install espeak-ng pocketsphinx pocketsphinx-en-us)`);
      return;
    }
    const dir = tempDir('lf-device-voice-');
    execFileSync('espeak-ng', ['-v', 'en-us+f2', '-s', '120', '-w', join(dir, 'no.wav'), 'no']);
    const no = readFileSync(join(dir, 'no.wav'));
    const rig = await startDeviceRig({ recogniserArgv: ['pocketsphinx_continuous', '-infile', '{file}', '-logfn', '/dev/null'] });
    t.after(() => rig.close());
    t.after(() => removeTemp(dir));
    const phone = await pairDevice(rig);
    const held = rig.hold('write_file', { path: 'v.txt', content: 'x' });
    const set = await cardsOf(rig, phone);
    const target = `/device/api/voice?set=${set.set_id}`;
    const r = await signed(rig, phone, 'POST', target, no, { type: 'audio/wav' });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.outcome, 'denied');
    assert.equal(r.json.transcript, 'no');
    const answer = await held.answer;
    assert.equal(answer.kind, 'denied');
    const again = await signed(rig, phone, 'POST', target, no, { type: 'audio/wav' });
    assert.equal(again.status, 409);
    assert.equal(again.json.failed_check, 'evidence_unused');
    const silent = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVEfmt ')]);
    const bad = await signed(rig, phone, 'POST', target, silent, { type: 'audio/wav' });
    assert.equal(bad.status, 409);
    assert.equal(bad.json.failed_check, 'evidence_exists');
    const wrongType = await signed(rig, phone, 'POST', target, no, { type: 'audio/mpeg' });
    assert.equal(wrongType.status, 415);
  });
});
