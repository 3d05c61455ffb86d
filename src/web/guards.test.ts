import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { describe, it } from 'node:test';
import { allowedHosts, checkCsrf, checkHost, checkSameOrigin } from './guards.js';

describe('approval page guards', () => {
  const hosts = allowedHosts('127.0.0.1', 8471);

  it('accepts its own Host and refuses any other (DNS rebinding)', () => {
    assert.deepEqual(checkHost('127.0.0.1:8471', hosts), { ok: true });
    assert.deepEqual(checkHost('localhost:8471', hosts), { ok: true });
    for (const h of ['attacker.example:8471', '127.0.0.1:8472', '127.0.0.1', undefined]) assert.equal(checkHost(h, hosts).ok, false, String(h));
  });

  it('accepts same-origin and header-less (CLI) requests, refuses cross-site ones', () => {
    assert.equal(checkSameOrigin(undefined, undefined, hosts).ok, true);
    assert.equal(checkSameOrigin('http://127.0.0.1:8471', 'same-origin', hosts).ok, true);
    assert.equal(checkSameOrigin('http://localhost:8471', undefined, hosts).ok, true);
    for (const [o, s] of [
      ['https://attacker.example', undefined],
      ['null', undefined],
      ['http://127.0.0.1:8471', 'cross-site'],
      ['http://127.0.0.1:8471', 'same-site'],
      ['https://127.0.0.1:8471', undefined],
      ['http://127.0.0.1:8471/', undefined],
    ] as const) {
      assert.equal(checkSameOrigin(o, s, hosts).ok, false, `${o} ${s}`);
    }
  });

  it('needs the exact CSRF token', () => {
    assert.equal(checkCsrf('abc', 'abc').ok, true);
    for (const t of [undefined, '', 'abd', 'abcd']) assert.equal(checkCsrf(t, 'abc').ok, false, String(t));
  });

  it('answers on [::1] with bracketed Host values', () => {
    const v6 = allowedHosts('::1', 9000);
    assert.equal(checkHost('[::1]:9000', v6).ok, true);
    assert.equal(checkHost('::1:9000', v6).ok, false);
  });

  it("bound to every interface, accepts this machine's own addresses and still refuses names", () => {
    const any = allowedHosts('0.0.0.0', 9000);
    const own = Object.values(networkInterfaces())
      .flat()
      .find((a) => a?.family === 'IPv4');
    if (own) assert.equal(checkHost(`${own.address}:9000`, any).ok, true);
    assert.equal(checkHost('localhost:9000', any).ok, true);
    assert.equal(checkHost('evil.test:9000', any).ok, false);
    assert.equal(checkHost('203.0.113.9:9000', any).ok, false);
  });
});
