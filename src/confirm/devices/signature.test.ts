import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { DeviceRegistry } from './registry.js';
import { SEEN_SIGNATURE_TTL_MS, SIGNATURE_WINDOW_MS, signedHeaders, signingString, signRequest, verifyDeviceRequest } from './signature.js';
import { newKey, storeKits, testClock } from './test-kit.js';

const kits = storeKits();
after(() => {
  for (const k of kits) k.cleanup();
});

describe('the signing string', () => {
  it('is the scheme, method, path, timestamp and body hash on their own lines (known answer)', () => {
    assert.equal(
      signingString('get', '/device/api/cards?x=1', 1_800_000_000_000, ''),
      'LOOKFIRST-DEVICE-1\nGET\n/device/api/cards?x=1\n1800000000000\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
    );
  });

  it('signs with HMAC-SHA256 under the decoded key, base64url without padding', () => {
    const key = Buffer.alloc(32, 1).toString('base64url');
    const expected = createHmac('sha256', Buffer.alloc(32, 1))
      .update(signingString('POST', '/p', 5, '{}'))
      .digest('base64url');
    assert.equal(signRequest(key, 'POST', '/p', 5, '{}'), expected);
    assert.doesNotMatch(expected, /[=+/]/);
  });

  it('fails for any change of method, path, timestamp or body (property)', () => {
    const key = newKey();
    const req = fc.record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE'),
      path: fc.string({ minLength: 1, maxLength: 40 }).map((s) => `/${s}`),
      ts: fc.integer({ min: 0, max: 2 ** 45 }),
      body: fc.uint8Array({ maxLength: 64 }),
    });
    fc.assert(
      fc.property(req, req, (a, b) => {
        const same = a.method === b.method && a.path === b.path && a.ts === b.ts && Buffer.from(a.body).equals(Buffer.from(b.body));
        fc.pre(!same);
        assert.notEqual(signRequest(key, a.method, a.path, a.ts, a.body), signRequest(key, b.method, b.path, b.ts, b.body));
      }),
    );
  });
});

for (const kit of kits) {
  describe(`verifying a device request (${kit.name} store)`, () => {
    const setup = async () => {
      const clock = testClock();
      const { store } = kit.open(clock);
      const registry = new DeviceRegistry({ store, clock });
      const device = await registry.register({ user: 'alice', name: 'p', key: newKey() });
      const deps = { registry, store, clock };
      const req = (headers: Record<string, string>, body = '{"a":1}', method = 'POST', path = '/device/api/decide') => ({ method, path, headers, body });
      return { clock, store, registry, device, deps, req };
    };

    it('accepts a signed request once, and refuses the same signature again (401)', async () => {
      const { store, device, deps, req, clock } = await setup();
      const h = signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs(), '{"a":1}');
      const first = await verifyDeviceRequest(deps, req(h));
      assert.equal(first.ok && first.device.id, device.id);
      const again = await verifyDeviceRequest(deps, req(h));
      assert.deepEqual([again.ok, again.ok ? 0 : again.status], [false, 401]);
      assert.match(again.ok ? '' : again.reason, /used before/);
      assert.ok(SEEN_SIGNATURE_TTL_MS > 2 * SIGNATURE_WINDOW_MS);
      await store.close();
    });

    it('refuses every other spelling of a used signature (the last base64url character has two spare bits)', async () => {
      const { store, device, deps, req, clock } = await setup();
      const h = signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs(), '{"a":1}');
      const sig = h['x-lookfirst-signature'] as string;
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const at = alphabet.indexOf(sig.at(-1) as string);
      const respelt = [0, 1, 2, 3].map((low) => sig.slice(0, -1) + alphabet[(at & ~3) | low]).filter((s) => s !== sig);
      assert.equal(respelt.length, 3);
      for (const s of respelt) assert.deepEqual(Buffer.from(s, 'base64url'), Buffer.from(sig, 'base64url'), 'the same MAC bytes');
      // Before the real one is used: a respelling is refused and does not spend it.
      const before = await verifyDeviceRequest(deps, req({ ...h, 'x-lookfirst-signature': respelt[0] as string }));
      assert.deepEqual([before.ok, before.ok ? 0 : before.status], [false, 401]);
      assert.equal((await verifyDeviceRequest(deps, req(h))).ok, true);
      for (const s of respelt) {
        const r = await verifyDeviceRequest(deps, req({ ...h, 'x-lookfirst-signature': s }));
        assert.deepEqual([r.ok, r.ok ? 0 : r.status], [false, 401], `respelt ${s} was accepted again`);
      }
      await store.close();
    });

    it('refuses a timestamp more than 60 s away, either way (401)', async () => {
      const { store, device, deps, req, clock } = await setup();
      for (const skew of [SIGNATURE_WINDOW_MS + 1, -SIGNATURE_WINDOW_MS - 1]) {
        const r = await verifyDeviceRequest(deps, req(signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs() + skew, '{"a":1}')));
        assert.equal(r.ok ? 0 : r.status, 401);
      }
      const edge = await verifyDeviceRequest(deps, req(signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs() - SIGNATURE_WINDOW_MS, '{"a":1}')));
      assert.equal(edge.ok, true);
      await store.close();
    });

    it('refuses a missing header, an unknown device, another body, another path, and another key (401)', async () => {
      const { store, device, deps, req, clock } = await setup();
      const h = signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs(), '{"a":1}');
      const cases = [
        req({ ...h, 'x-lookfirst-signature': '' }),
        req({ 'x-lookfirst-device': h['x-lookfirst-device'] as string, 'x-lookfirst-timestamp': h['x-lookfirst-timestamp'] as string }),
        req({ ...h, 'x-lookfirst-device': 'dev_0000000000000000' }),
        req(h, '{"a":2}'),
        req(h, '{"a":1}', 'POST', '/device/api/decide?x'),
        req(h, '{"a":1}', 'GET'),
        req(signedHeaders({ id: device.id, key: newKey() }, 'POST', '/device/api/decide', clock.nowMs(), '{"a":1}')),
      ];
      for (const c of cases) {
        const r = await verifyDeviceRequest(deps, c);
        assert.equal(r.ok ? 0 : r.status, 401);
      }
      assert.equal((await verifyDeviceRequest(deps, req(h))).ok, true, 'the refusals did not spend the right signature');
      await store.close();
    });

    it("refuses a revoked device's next request with 403 and a sentence saying it was revoked", async () => {
      const { store, device, deps, req, clock, registry } = await setup();
      await registry.revoke(device.id);
      const r = await verifyDeviceRequest(deps, req(signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs(), '{"a":1}')));
      assert.equal(r.ok ? 0 : r.status, 403);
      assert.match(r.ok ? '' : r.reason, /revoked/);
      await store.close();
    });

    it('refuses (401) when the store cannot be read', async () => {
      const { store, device, deps, req, clock } = await setup();
      const h = signedHeaders(device, 'POST', '/device/api/decide', clock.nowMs(), '{"a":1}');
      await store.close();
      const r = await verifyDeviceRequest(deps, req(h));
      assert.equal(r.ok ? 0 : r.status, 401);
    });
  });
}
