import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileDetector, type Finding } from './detect.js';
import { findPlaceholders, type Issuer, isPlaceholder, maskJson, maskText, PLACEHOLDER_RE, placeholderIdsIn, restoreJson, restoreText } from './mask.js';

/** A deterministic issuer: `[[LABEL_<counter as 32 hex>]]`, the same placeholder for the same value. */
function testIssuer(): Issuer & { values: Map<string, string>; issued: { value: string; finding: Finding }[] } {
  const byValue = new Map<string, string>();
  const values = new Map<string, string>();
  const issued: { value: string; finding: Finding }[] = [];
  return {
    values,
    issued,
    issue(value, finding) {
      issued.push({ value, finding });
      let p = byValue.get(value);
      if (p === undefined) {
        const id = byValue.size.toString(16).padStart(32, '0');
        p = `[[${finding.label}_${id}]]`;
        byValue.set(value, p);
        values.set(id, value);
      }
      return p;
    },
  };
}

const detector = compileDetector();
const ID = '3f9a1c2b5e7d90a1b2c3d4e5f6a7b8c9';

// ── Generators ─────────────────────────────────────────────────────────────────────────────────────────
const luhnComplete = (body: string) => {
  for (let d = 0; d < 10; d++) {
    const n = body + d;
    let sum = 0;
    for (let i = 0; i < n.length; i++) {
      let x = Number(n[n.length - 1 - i]);
      if (i % 2) x = x * 2 > 9 ? x * 2 - 9 : x * 2;
      sum += x;
    }
    if (sum % 10 === 0) return n;
  }
  throw new Error('unreachable');
};
const digits = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: n, maxLength: n });
const lower = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz'), minLength: min, maxLength: max });
const alnum = (n: number) =>
  fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'), minLength: n, maxLength: n });
const card = fc.tuple(fc.constantFrom('4', '51', '55', '2221'), digits(14)).map(([p, rest]) => luhnComplete((p + rest).slice(0, 15)));
const cardPrinted = fc.tuple(card, fc.constantFrom('', ' ', '-', '\u200B')).map(([c, sep]) => c.replace(/(\d{4})(?=\d)/g, `$1${sep}`));
const iban = fc
  .tuple(
    fc.constantFrom('DE89370400440532013000', 'GB82WEST12345698765432', 'NL91ABNA0417164300', 'FR1420041010050500013M02606', 'CH9300762011623852957'),
    fc.boolean(),
    fc.boolean(),
  )
  .map(([i, printed, low]) => {
    const p = printed ? i.replace(/(.{4})(?=.)/g, '$1 ') : i;
    return low ? p.toLowerCase() : p;
  });
const email = fc.tuple(lower(1, 8), lower(1, 8), fc.constantFrom('com', 'de', 'org')).map(([l, d, t]) => `${l}@${d}.${t}`);
const token = fc.oneof(
  alnum(36).map((s) => `ghp_${s}`),
  alnum(15).map((s) => `AKIA${s.toUpperCase()}7`),
  alnum(30).map((s) => `sk_live_${s}0aA`),
);
const secretValue = fc.oneof(cardPrinted, iban, email, token);
const filler = fc.string({ unit: fc.constantFrom(...'abcdefgh XYZ.,;!?\n'), maxLength: 30 });
const mixed = fc.array(fc.tuple(filler, secretValue), { maxLength: 5 }).map((parts) => ({
  text: parts.map(([f, v]) => ` ${f} ${v} `).join(''),
  values: parts.map(([, v]) => v),
}));
const anyText = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  mixed.map((m) => m.text),
);

// ── Properties ────────────────────────────────────────────────────────────────────────────────────────
describe('maskText', () => {
  it('never leaves a detected value in clear', () => {
    fc.assert(
      fc.property(mixed, ({ text, values }) => {
        const masked = maskText(text, detector, testIssuer());
        for (const v of values) assert.ok(!masked.includes(v), `${JSON.stringify(v)} left in ${JSON.stringify(masked)}`);
      }),
      { numRuns: 300 },
    );
  });
  it('is idempotent: masking masked text changes nothing', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const issuer = testIssuer();
        const once = maskText(text, detector, issuer);
        assert.equal(maskText(once, detector, issuer), once);
      }),
      { numRuns: 300 },
    );
  });
  it('gives back the same string when nothing is found', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        if (detector.find(text).length === 0) assert.equal(maskText(text, detector, testIssuer()), text);
      }),
    );
    const plain = 'nothing private here, just 42 words.';
    assert.equal(maskText(plain, detector, testIssuer()), plain);
  });
  it('restores to the exact original text, separators and zero-width characters included', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const issuer = testIssuer();
        assert.equal(restoreText(maskText(text, detector, issuer), issuer.values), text);
      }),
      { numRuns: 300 },
    );
  });
  it('never detects anything inside a placeholder', () => {
    const placeholder = fc
      .tuple(
        fc.constantFrom('IBAN', 'CARD', 'EMAIL', 'PHONE', 'SECRET', 'NAME', 'IBAN_INVALID', 'X1'),
        fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }),
      )
      .map(([l, id]) => `[[${l}_${id}]]`);
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('', ' ', 'password=', 'x', '+49 ', '4111 '), placeholder)), (parts) => {
        const text = parts.map(([a, b]) => a + b).join('');
        const spans = findPlaceholders(text);
        for (const f of detector.find(text)) for (const p of spans) assert.ok(f.end <= p.start || p.end <= f.start, `${JSON.stringify(text)}`);
      }),
    );
  });
});

/** What restoring masked data gives back: a number under a secret-naming key was masked as a string. */
function numbersUnderSecretsAsStrings(v: unknown, under = false): unknown {
  if (typeof v === 'number') return under ? String(v) : v;
  if (Array.isArray(v)) return v.map((x) => numbersUnderSecretsAsStrings(x, under));
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = Object.getPrototypeOf(v) === null ? Object.create(null) : {};
  for (const [k, x] of Object.entries(v))
    Object.defineProperty(out, k, {
      value: numbersUnderSecretsAsStrings(x, under || detector.isSecretKey(k)),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}

describe('maskJson and restoreJson', () => {
  it('round-trip any JSON value exactly, keys included', () => {
    const withValues = fc.letrec((tie) => ({
      v: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue(),
        secretValue,
        mixed.map((m) => m.text),
        fc.array(tie('v')),
        fc.dictionary(fc.oneof(fc.string(), email, fc.constantFrom('password', 'api_key', 'token')), tie('v')),
      ),
    })).v;
    fc.assert(
      fc.property(withValues, (value) => {
        const before = JSON.stringify(value);
        const issuer = testIssuer();
        const masked = maskJson(value, detector, issuer);
        assert.equal(JSON.stringify(value), before, 'the input is not mutated');
        assert.deepEqual(restoreJson(masked, issuer.values), numbersUnderSecretsAsStrings(value));
      }),
      { numRuns: 300 },
    );
  });
  it('gives back the same instance when nothing changed', () => {
    const v = { a: ['x', 1, null, { b: 'plain text' }], n: 3, t: true };
    assert.equal(maskJson(v, detector, testIssuer()), v);
    assert.equal(restoreJson(v, new Map()), v);
  });
  it('masks string values and keys, copying only changed branches', () => {
    const untouched = { x: 'y' };
    const v = { 'jane@example.com': 1, list: ['call +49 30 1234567', untouched] };
    const issuer = testIssuer();
    const m = maskJson(v, detector, issuer) as Record<string, unknown>;
    assert.deepEqual(Object.keys(m), [`[[EMAIL_${'0'.repeat(32)}]]`, 'list']);
    assert.equal((m.list as unknown[])[0], `call [[PHONE_${'0'.repeat(31)}1]]`);
    assert.equal((m.list as unknown[])[1], untouched);
  });
  it('masks a string under a secret key whole, unless empty or already a placeholder', () => {
    const issuer = testIssuer();
    const m = maskJson(
      { db_password: 'hunter2', token: '', apiKey: `[[SECRET_${ID}]]`, max_tokens: 'x', nested: { Authorization: 'Bearer abc' } },
      detector,
      issuer,
    );
    assert.deepEqual(m, {
      db_password: `[[SECRET_${'0'.repeat(32)}]]`,
      token: '',
      apiKey: `[[SECRET_${ID}]]`,
      max_tokens: 'x',
      nested: { Authorization: `[[SECRET_${'0'.repeat(31)}1]]` },
    });
    assert.deepEqual(issuer.issued[0]!.finding, { start: 0, end: 7, label: 'SECRET', detail: 'value of "db_password"' });
  });
  it('masks the whole subtree under a secret key: strings, numbers, nested arrays and objects; not booleans or null', () => {
    const issuer = testIssuer();
    const v = {
      password: 918273645,
      api_key: ['zq9XKv7LmN2pQ4rT', 7, true, null],
      token: { value: 'abc', 'jane@example.com': 'x', n: { deep: 1.5 } },
      other: 42,
    };
    const m = maskJson(v, detector, issuer) as Record<string, unknown>;
    const p = (n: number) => `[[SECRET_${n.toString(16).padStart(32, '0')}]]`;
    assert.equal(m.password, p(0));
    assert.deepEqual(m.api_key, [p(1), p(2), true, null]);
    const token = m.token as Record<string, unknown>;
    assert.equal(token.value, p(3));
    assert.deepEqual(Object.keys(token)[1]!.startsWith('[[EMAIL_'), true);
    assert.deepEqual(token.n, { deep: p(6) });
    assert.equal(m.other, 42);
    assert.equal(issuer.issued[0]!.value, '918273645');
    assert.equal(issuer.issued[0]!.finding.detail, 'value of "password"');
    assert.equal(issuer.issued[3]!.finding.detail, 'value of "token"');
  });
  it('leaves the subtrees `skip` names alone, with paths of keys and indices', () => {
    const seen: string[] = [];
    const v = { a: [{ email: 'jane@example.com' }], b: 'jane@example.com' };
    const m = maskJson(v, detector, testIssuer(), (path) => {
      seen.push(path.join('.'));
      return path[0] === 'a';
    }) as typeof v;
    assert.equal(m.a, v.a);
    assert.notEqual(m.b, v.b);
    assert.deepEqual(seen, ['', 'a', 'b']);
  });
  it('keeps a __proto__ key as an own key', () => {
    const v = JSON.parse('{"__proto__": "jane@example.com"}') as object;
    const m = maskJson(v, detector, testIssuer()) as object;
    assert.deepEqual(Object.keys(m), ['__proto__']);
    assert.equal(Object.getPrototypeOf(m), Object.prototype);
  });
});

describe('placeholders in what an agent sends', () => {
  it('exposes the exact form as a global regex', () => {
    assert.equal(PLACEHOLDER_RE.global, true);
    assert.equal(isPlaceholder(`[[CARD_${ID}]]`), true);
  });
  it('counts ids and look-alike attempts over strings and keys', () => {
    const v = { [`[[EMAIL_${ID}]]`]: [`to [[IBAN_${ID}]]`, '[[IBAN_3f9a…]]', '[[CARD_3F9A]]'], n: 1 };
    assert.deepEqual(placeholderIdsIn(v), { ids: new Set([ID]), attempts: 2 });
  });
  it('restores only exact placeholders with a known id', () => {
    const values = new Map([[ID, 'DE89 3704 0044 0532 0130 00']]);
    assert.equal(restoreText(`pay [[IBAN_${ID}]] now`, values), 'pay DE89 3704 0044 0532 0130 00 now');
    const other = `[[IBAN_${'1'.repeat(32)}]] [[IBAN_3f9a…]]`;
    assert.equal(restoreText(other, values), other);
  });
});
