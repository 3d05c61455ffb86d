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
  it('reads escaped, encoded, full-width and invisible-split values, masking their original span', () => {
    const cases: [string, string][] = [
      ['{"text": "mail jane\\u0040corp.example"}', 'jane\\u0040corp.example'],
      ['to=jane%40corp.example', 'jane%40corp.example'],
      ['<p>jane&#64;corp.example</p>', 'jane&#64;corp.example'],
      ['jane&commat;corp.example', 'jane&commat;corp.example'],
      ['jane＠corp.example', 'jane＠corp.example'],
      ['mail jo\u200Bhn@corp\u202E.example', 'jo\u200Bhn@corp\u202E.example'],
      ['mail jöhn@corp.example', 'jöhn@corp.example'],
      ['https://x.example/u/jane@corp.example', 'jane@corp.example'],
      ['card 5555.5555.5555.4444 ok', '5555.5555.5555.4444'],
      ['card 5555\u20095555\u20095555\u20094444 ok', '5555\u20095555\u20095555\u20094444'],
      ['card ٥٥٥٥ ٥٥٥٥ ٥٥٥٥ ٤٤٤٤ ok', '٥٥٥٥ ٥٥٥٥ ٥٥٥٥ ٤٤٤٤'],
      ['iban GB82\u202EWEST1234\u202C5698765432 ok', 'GB82\u202EWEST1234\u202C5698765432'],
      ['iban ＧＢ82ＷＥＳＴ12345698765432 ok', 'ＧＢ82ＷＥＳＴ12345698765432'],
      ['call 0033 1 42 68 53 00', '0033 1 42 68 53 00'],
      ['<a href="tel:+442079460958">', '+442079460958'],
      ['by Jane_Doe', 'Jane_Doe'],
      ['by Ja\u200Bne Doe', 'Ja\u200Bne Doe'],
      ['pass\u200Bword=hunter2', 'hunter2'],
      ['-----begin rsa private key-----\nMIIabc\n-----end rsa private key-----', '-----begin rsa private key-----\nMIIabc\n-----end rsa private key-----'],
    ];
    for (const [t, v] of cases)
      assert.deepEqual(
        found(t).map((f) => f[0]),
        [v],
        JSON.stringify(t),
      );
  });
  it('does not read file names, %-amounts or escaped text as values', () => {
    for (const t of ['icon@2x.png logo@3x.webp', '100%40 off', 'C:\\new\\table', 'a &amp; b', '[[wiki]] \\u005b']) assert.deepEqual(found(t), [], t);
  });
});
