import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileDetector, DEFAULT_PHONE_REGIONS } from './detect.js';

const detector = compileDetector({ names: ['Jane Doe'], patterns: [{ label: 'EMPLOYEE_ID', pattern: 'EMP-\\d{6}' }] });
const found = (text: string, d = detector) => d.find(text).map((f) => [text.slice(f.start, f.end), f.label, f.detail]);
const ID = '3f9a1c2b5e7d90a1b2c3d4e5f6a7b8c9';

describe('the detector', () => {
  it('finds every kind in one text, sorted by start', () => {
    const text = `Jane Doe (jane@example.com, +49 30 1234567) pays DE89 3704 0044 0532 0130 00 with 4111 1111 1111 1111; password=hunter2 EMP-123456`;
    assert.deepEqual(found(text), [
      ['Jane Doe', 'NAME', 'name'],
      ['jane@example.com', 'EMAIL', 'e-mail address'],
      ['+49 30 1234567', 'PHONE', 'phone number'],
      ['DE89 3704 0044 0532 0130 00', 'IBAN', 'IBAN (DE)'],
      ['4111 1111 1111 1111', 'CARD', 'payment card number'],
      ['hunter2', 'SECRET', 'password'],
      ['EMP-123456', 'EMPLOYEE_ID', 'EMPLOYEE_ID'],
    ]);
  });
  it('keeps the most specific of equal spans: a known token over "the value of a key"', () => {
    const jwt = `${Buffer.from('{"alg":"HS256"}').toString('base64url')}.${Buffer.from('{"sub":"1"}').toString('base64url')}.c2ln`;
    assert.deepEqual(found(`Authorization: Bearer ${jwt}`), [[jwt, 'SECRET', 'JWT']]);
  });
  it('keeps the longest of overlapping findings', () => {
    const d = compileDetector({ patterns: [{ label: 'ACCT', pattern: '\\d{4}' }] });
    assert.deepEqual(found('card 4111 1111 1111 1111', d), [['4111 1111 1111 1111', 'CARD', 'payment card number']]);
  });
  it('never finds anything inside or across a placeholder', () => {
    const d = compileDetector({ names: ['IBAN'], patterns: [{ label: 'HEX', pattern: '[0-9a-f]{8}' }] });
    assert.deepEqual(found(`[[IBAN_${ID}]] and password=[[SECRET_${ID}]]`, d), []);
  });
  it('uses North America, the UK and large EU markets for national phone forms unless told otherwise', () => {
    assert.deepEqual(DEFAULT_PHONE_REGIONS, ['US', 'GB', 'DE', 'FR', 'IT', 'ES', 'NL', 'AT', 'CH']);
    assert.deepEqual(found('office (030) 1234567', compileDetector({ phoneRegions: ['us'] })), []);
  });
  it('caches key verdicts without changing them', () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(detector.isSecretKey('db_password'), true);
      assert.equal(detector.isSecretKey('max_tokens'), false);
    }
  });
  it('finds nothing in the empty text and in short texts without values', () => {
    assert.deepEqual(found(''), []);
    assert.deepEqual(found('ok'), []);
  });
  it('refuses an unknown phone region when compiled, naming it', () => {
    assert.throws(() => compileDetector({ phoneRegions: ['DE', 'XX'] }), /privacy\.phoneRegions\[1\] \(XX\)/);
  });
  it('refuses a bad custom pattern when compiled, naming it', () => {
    assert.throws(
      () =>
        compileDetector({
          patterns: [
            { label: 'OK', pattern: 'x' },
            { label: 'BROKEN', pattern: '[' },
          ],
        }),
      /privacy\.patterns\[1\] \(BROKEN\)/,
    );
  });
});
