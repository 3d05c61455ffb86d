import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CountryCode } from 'libphonenumber-js';
import { DEFAULT_PHONE_REGIONS, findPhones } from './phone.js';
import type { Candidate } from './types.js';

const values = (text: string, regions = DEFAULT_PHONE_REGIONS) => {
  const out: Candidate[] = [];
  findPhones(text, out, regions as CountryCode[]);
  return out.map((c) => text.slice(c.start, c.end));
};

describe('phone numbers', () => {
  it('finds international numbers of any region, with their punctuation', () => {
    assert.deepEqual(values('ring +49 30 1234567 or +1 (202) 555-0143, +44 20 7946 0958.'), ['+49 30 1234567', '+1 (202) 555-0143', '+44 20 7946 0958']);
    assert.deepEqual(values('+81 3-1234-5678'), ['+81 3-1234-5678']);
  });
  it('finds national forms in a phone grouping', () => {
    assert.deepEqual(values('office (030) 1234567'), ['(030) 1234567']);
    assert.deepEqual(values('office 030 1234 5678'), ['030 1234 5678']);
    assert.deepEqual(values('office 202-555-0143'), ['202-555-0143']);
    assert.deepEqual(values('Paris 01 23 45 67 89'), ['01 23 45 67 89']);
  });
  it('finds bare national digits only after a phone word', () => {
    assert.deepEqual(values('Tel: 0301234567'), ['0301234567']);
    assert.deepEqual(values('Fax-Nr. 030/1234567'), ['030/1234567']);
    assert.deepEqual(values('reference 0301234567'), []);
    assert.deepEqual(values('0301234567'), []);
  });
  it('tries national forms only against the configured regions', () => {
    assert.deepEqual(values('office (030) 1234567', ['US']), []);
    assert.deepEqual(values('office (030) 1234567', ['DE']), ['(030) 1234567']);
  });
  it('reads full-width digits and the full-width plus', () => {
    assert.deepEqual(values('\uFF0B\uFF14\uFF19 30 1234567'), ['\uFF0B\uFF14\uFF19 30 1234567']);
  });
  it('does not take ids, timestamps, dates, versions, amounts, addresses or the 00 prefix', () => {
    const negatives = [
      'Order 0301234567',
      'Invoice no. 030 1234 5678',
      '1700000000000',
      '2024-01-15T10:30:00Z',
      '15.01.2024',
      '1.13.16',
      '$1,234,567.00',
      '192.168.100.200',
      'ref 0049 30 1234567',
      'ticket 555-123-4567',
      'x/030 1234567',
    ];
    for (const n of negatives) assert.deepEqual(values(n), [], n);
  });
  it('drops trailing groups that are not part of the number', () => {
    assert.deepEqual(values('call +1 202-555-0143 2024'), ['+1 202-555-0143']);
  });
  it('reads the 00 international prefix like +, and tel:/callto:/sms: URIs', () => {
    assert.deepEqual(values('call 0033 1 42 68 53 00'), ['0033 1 42 68 53 00']);
    assert.deepEqual(values('phone: 0044 20 7946 0958'), ['0044 20 7946 0958']);
    assert.deepEqual(values('tel:+442079460958 callto:+14155552671 sms:+442079460958'), ['+442079460958', '+14155552671', '+442079460958']);
    assert.deepEqual(values('ref 0049 30 1234567, id 000123456789, 10:30:00+0100'), []);
  });
});
