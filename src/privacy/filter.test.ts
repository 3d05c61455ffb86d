import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStore } from '../store/memory/memory.js';
import type { Store } from '../store/store.js';
import { MAX_MISSES, PrivacyFilter, type PrivacyOptions } from './filter.js';

const IBAN = 'DE89 3704 0044 0532 0130 00';
const EMAIL = 'jane.doe@example.org';
const OPTIONS: PrivacyOptions = { ttlMs: 60_000, names: [], patterns: [], allowBinary: false };

/** A clock the test moves. */
function manualClock(start = 1_000_000) {
  let now = start;
  return { nowMs: () => now, advance: (ms: number) => (now += ms) };
}

async function filterOn(store: Store = createMemoryStore()) {
  return PrivacyFilter.open(OPTIONS, store);
}

const placeholderIn = (text: string, label: string) => new RegExp(`\\[\\[${label}_[0-9a-f]{32}\\]\\]`).exec(text)?.[0];

describe('PrivacyFilter', () => {
  describe('when a session masks what an upstream answered', () => {
    it('gives each value a random placeholder, the same one for the same value, and puts it back', async () => {
      const filter = await filterOn();
      const s = filter.session('stdio');
      const masked = await s.mask('tools/call', { content: [{ type: 'text', text: `pay ${IBAN} and mail ${EMAIL}, again ${IBAN}` }] });
      const text = masked.content[0]?.text ?? '';
      const iban = placeholderIn(text, 'IBAN');
      assert.ok(iban && placeholderIn(text, 'EMAIL'), text);
      assert.equal(text.split(iban).length, 3, 'the same IBAN twice is one placeholder');
      const again = await s.mask('tools/call', `${IBAN}`);
      assert.equal(again, iban, 'and stays so in a later message');
      const r = await s.resolve({ to: iban, note: `for ${iban}` }, 'always');
      assert.equal(r.kind, 'resolved');
      assert.deepEqual(r.kind === 'resolved' && r.args, { to: IBAN, note: `for ${IBAN}` });
      assert.deepEqual(r.kind === 'resolved' && r.placeholders.map((p) => p.label), ['IBAN']);
    });

    it('leaves a message without private values as the same object', async () => {
      const s = (await filterOn()).session('stdio');
      const msg = { content: [{ type: 'text', text: 'nothing to see' }] };
      assert.equal(await s.mask('tools/call', msg), msg);
    });

    it('ids are not derived from the value: two sessions get different placeholders for one value', async () => {
      const filter = await filterOn();
      const a = await filter.session('stdio').mask('text', IBAN);
      const b = await filter.session('stdio').mask('text', IBAN);
      assert.notEqual(a, b);
    });
  });

  describe('when a placeholder is not this session’s', () => {
    it('refuses another session’s, a made-up one and a cut one alike, and locks after three', async () => {
      const filter = await filterOn();
      const mine = filter.session('token:alice');
      const other = filter.session('token:alice');
      const p = await mine.mask('text', IBAN);
      const r1 = await other.resolve({ to: p }, 'always');
      assert.equal(r1.kind, 'refused');
      assert.equal(r1.kind === 'refused' && r1.locked, false);
      const r2 = await other.resolve({ to: `[[IBAN_${'a'.repeat(32)}]]` }, 'always');
      assert.equal(r2.kind, 'refused');
      const r3 = await other.resolve({ to: '[[IBAN_3f9a1c2b…]]' }, 'always');
      assert.ok(r3.kind === 'refused' && r3.locked, `after ${MAX_MISSES} unknown placeholders the session is locked`);
      // Locked: even its own placeholders no longer resolve.
      const own = await other.mask('text', EMAIL);
      const r4 = await other.resolve({ to: own }, 'always');
      assert.ok(r4.kind === 'refused' && r4.locked);
      // The first session is not affected.
      assert.equal((await mine.resolve({ to: p }, 'always')).kind, 'resolved');
    });

    it('binds to the principal too: a shared session key under another principal resolves nothing', async () => {
      const store = createMemoryStore();
      const filter = await filterOn(store);
      const p = await filter.session('token:alice', 'alice:client').mask('text', IBAN);
      assert.equal((await filter.session('token:mallory', 'alice:client').resolve({ to: p }, 'always')).kind, 'refused');
      assert.equal((await filter.session('token:alice', 'alice:client').resolve({ to: p }, 'always')).kind, 'resolved');
    });

    it('refuses an expired placeholder (privacy.ttl_seconds), and shows the value afresh past half its life', async () => {
      const clock = manualClock();
      const filter = await PrivacyFilter.open(OPTIONS, createMemoryStore({ clock }), clock);
      const s = filter.session('stdio');
      const p = await s.mask('text', IBAN);
      clock.advance(OPTIONS.ttlMs / 2 + 1);
      const fresh = await s.mask('text', IBAN);
      assert.notEqual(fresh, p, 'past half its life, a value gets a new placeholder');
      clock.advance(OPTIONS.ttlMs / 2);
      assert.equal((await s.resolve({ to: p }, 'always')).kind, 'refused');
      assert.equal((await s.resolve({ to: fresh }, 'always')).kind, 'resolved', 'the fresh one still resolves');
    });

    it('refuses a call carrying more placeholders than one call may', async () => {
      const s = (await filterOn()).session('stdio');
      const many = Array.from({ length: 1001 }, (_, i) => `[[IBAN_${i.toString(16).padStart(32, '0')}]]`).join(' ');
      const r = await s.resolve({ many }, 'always');
      assert.ok(r.kind === 'refused' && /more than 1000/.test(r.reason));
    });
  });

  describe('toward an upstream under resolve: never', () => {
    it('keeps the placeholder text and counts nothing', async () => {
      const s = (await filterOn()).session('stdio');
      for (let i = 0; i < 5; i++) assert.equal((await s.resolve({ to: `[[IBAN_${'b'.repeat(32)}]]` }, 'never')).kind, 'kept');
      assert.equal((await s.resolve({ plain: 'x' }, 'always')).kind, 'none');
    });
  });

  describe('when replicas share a 2026 session', () => {
    it('issues the same placeholder for the same value on both, and either resolves it', async () => {
      const store = createMemoryStore();
      const one = (await filterOn(store)).session('token:alice', 'k1');
      const two = (await filterOn(store)).session('token:alice', 'k1');
      const a = await one.mask('text', `x ${IBAN}`);
      const b = await two.mask('text', `y ${IBAN}`);
      assert.equal(placeholderIn(a, 'IBAN'), placeholderIn(b, 'IBAN'));
      const r = await two.resolve({ to: placeholderIn(a, 'IBAN') }, 'always');
      assert.deepEqual(r.kind === 'resolved' && r.args, { to: IBAN });
    });
  });

  describe('when the store fails', () => {
    it('refuses to send a message whose placeholders it cannot store', async () => {
      const store = createMemoryStore();
      const s = (await filterOn(store)).session('stdio');
      await store.close();
      await assert.rejects(s.mask('text', IBAN), /closed/);
      await assert.rejects(s.resolve({ to: `[[IBAN_${'c'.repeat(32)}]]` }, 'always'), /closed/);
    });
  });

  describe('when a tool list is masked', () => {
    it('keeps schema structure under property names that name secrets, and masks values found in it', async () => {
      const s = (await filterOn()).session('stdio');
      const schema = { type: 'object', properties: { password: { type: 'string', description: `ask ${EMAIL}` }, token: { type: 'number' } } };
      const out = await s.mask('tools/list', { tools: [{ name: 'login', description: `by ${EMAIL}`, inputSchema: schema }] });
      const tool = out.tools[0] as { name: string; description: string; inputSchema: typeof schema };
      assert.equal(tool.name, 'login');
      assert.match(tool.description, /^by \[\[EMAIL_[0-9a-f]{32}\]\]$/);
      assert.equal(tool.inputSchema.properties.password.type, 'string');
      assert.equal(tool.inputSchema.properties.token.type, 'number');
      assert.match(tool.inputSchema.properties.password.description, /^ask \[\[EMAIL_/);
    });
  });

  describe('when a message hides a value found only by its context', () => {
    it('hides it everywhere in that message, and in later ones', async () => {
      const s = (await filterOn()).session('stdio');
      const masked = await s.mask('tools/call', { content: [{ type: 'text', text: 'backup copy: Hunter2Secret99\npassword=Hunter2Secret99' }] });
      const text = masked.content[0]?.text ?? '';
      assert.ok(!text.includes('Hunter2Secret99'), text);
      assert.equal(text.match(/\[\[SECRET_[0-9a-f]{32}\]\]/g)?.length, 2);
      assert.ok(!(await s.maskText('later: Hunter2Secret99')).includes('Hunter2Secret99'));
      assert.equal(s.forLog('log: xHunter2Secret99y'), 'log: x[[SECRET]]y', 'the log sees what the session hides');
    });

    it('masks thousands of new values in separate strings in one message (one recall pattern per pass)', async () => {
      const s = (await filterOn()).session('stdio');
      const contacts = Array.from({ length: 2000 }, (_, i) => ({ email: `person${i}@example.org` }));
      const masked = await s.mask('tools/call', { structuredContent: { contacts } });
      const text = JSON.stringify(masked);
      assert.doesNotMatch(text, /@example\.org/);
      assert.equal(text.match(/\[\[EMAIL_/g)?.length, 2000);
    });
  });

  describe('when an elicitation asks for a password', () => {
    it('keeps its requested schema intact', async () => {
      const s = (await filterOn()).session('stdio');
      const q = { message: `Log in as ${EMAIL}`, requestedSchema: { type: 'object', properties: { password: { type: 'string', title: 'Password' } } } };
      const out = await s.mask('elicitation/create', q);
      assert.deepEqual(out.requestedSchema, q.requestedSchema);
      assert.match(out.message, /\[\[EMAIL_/);
    });
  });

  describe('when the store fails while a message is masked', () => {
    it('withholds it and forgets its placeholders, so the next message gets stored ones', async () => {
      const store = createMemoryStore();
      let failPuts = 1;
      const flaky: Store = {
        ...store,
        put: (kind, key, value, opts) => {
          if (kind === 'placeholder' && failPuts-- > 0) return Promise.reject(new Error('disk full'));
          return store.put(kind, key, value, opts);
        },
      };
      const s = (await PrivacyFilter.open(OPTIONS, flaky)).session('stdio');
      await assert.rejects(s.mask('text', IBAN), /disk full/);
      const p = await s.mask('text', IBAN);
      assert.equal((await s.resolve({ to: p }, 'always')).kind, 'resolved');
    });
  });

  describe('forLog', () => {
    it('masks with the label alone, no id', async () => {
      const filter = await filterOn();
      assert.equal(filter.forLog(`no account for ${EMAIL}`), 'no account for [[EMAIL]]');
    });
  });
});
