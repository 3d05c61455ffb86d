import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findIbans } from './iban.js';
import type { Candidate } from './types.js';

const found = (text: string) => {
  const out: Candidate[] = [];
  findIbans(text, out);
  return out.map((c) => [text.slice(c.start, c.end), c.label, c.detail]);
};

describe('IBANs (ISO 13616)', () => {
  it('finds the electronic and the printed form, with the country in the detail', () => {
    assert.deepEqual(found('pay DE89370400440532013000 now'), [['DE89370400440532013000', 'IBAN', 'IBAN (DE)']]);
    assert.deepEqual(found('pay GB82 WEST 1234 5698 7654 32.'), [['GB82 WEST 1234 5698 7654 32', 'IBAN', 'IBAN (GB)']]);
  });
  it('takes lower case, full-width digits, line breaks and zero-width characters inside', () => {
    assert.equal(found('fr14 2004 1010 0505 0001 3m02 606')[0]?.[1], 'IBAN');
    assert.equal(found('DE\uFF18\uFF19 3704 0044 0532 0130 00')[0]?.[1], 'IBAN');
    assert.equal(found('DE89 3704\n0044 0532\u200B0130 00')[0]?.[0], 'DE89 3704\n0044 0532\u200B0130 00');
  });
  it('labels an IBAN-shaped value with a bad mod-97 checksum IBAN_INVALID', () => {
    assert.deepEqual(found('DE88 3704 0044 0532 0130 00'), [['DE88 3704 0044 0532 0130 00', 'IBAN_INVALID', 'IBAN with a bad checksum']]);
  });
  it('is strict with unverifiable values: no lower case or odd grouping for IBAN_INVALID', () => {
    assert.deepEqual(found('de88 3704 0044 0532 0130 00'), []);
    assert.deepEqual(found('DE88 3704 00 440532 0130 00'), []);
    assert.deepEqual(found('qa12 this text goes on and on and on and on'), []);
  });
  it('takes exactly the country length and refuses a value glued to more', () => {
    assert.deepEqual(found('DE89370400440532013000 1'), [['DE89370400440532013000', 'IBAN', 'IBAN (DE)']]);
    assert.deepEqual(found('DE893704004405320130001'), []);
    assert.deepEqual(found('xDE89370400440532013000'), []);
    assert.deepEqual(found('DE8937040044053201'), []);
  });
});
