import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileNames, compilePattern, findNames, findPattern } from './custom.js';
import type { Candidate } from './types.js';

describe('privacy.names', () => {
  const re = compileNames(['Jane Doe', 'Zoë', 'Jane'])!;
  const names = (text: string) => {
    const out: Candidate[] = [];
    findNames(text, re, out);
    return out.map((c) => text.slice(c.start, c.end));
  };
  it('finds whole words, case-insensitive, longest first, any whitespace inside', () => {
    assert.deepEqual(names('JANE DOE and jane\n doe and Jane'), ['JANE DOE', 'jane\n doe', 'Jane']);
    assert.deepEqual(names('zoë wrote'), ['zoë']);
  });
  it('does not find a name inside a longer word', () => {
    assert.deepEqual(names('Janet Zoëlla'), []);
  });
  it('has no regex when no names are configured', () => {
    assert.equal(compileNames([' ', '']), undefined);
  });
});

describe('privacy.patterns', () => {
  const run = (p: { label: string; pattern: string }, text: string) => {
    const out: Candidate[] = [];
    findPattern(text, compilePattern(p, 0), out);
    return out.map((c) => [text.slice(c.start, c.end), c.label]);
  };
  it('masks the whole match, or group 1 when there is a group', () => {
    assert.deepEqual(run({ label: 'EMP', pattern: 'EMP-\\d{4}' }, 'EMP-1234 EMP-5678'), [
      ['EMP-1234', 'EMP'],
      ['EMP-5678', 'EMP'],
    ]);
    assert.deepEqual(run({ label: 'CASE', pattern: 'case #(\\d+)' }, 'see case #42'), [['42', 'CASE']]);
  });
  it('refuses a pattern that does not compile, can match empty, or has a bad label, naming it', () => {
    assert.throws(() => compilePattern({ label: 'BAD', pattern: '(' }, 3), /privacy\.patterns\[3\] \(BAD\): the pattern does not compile/);
    assert.throws(() => compilePattern({ label: 'EMPTY', pattern: 'a*' }, 0), /EMPTY.*empty string/);
    assert.throws(() => compilePattern({ label: 'EMPTY', pattern: '\\b' }, 0), /empty string/);
    assert.throws(() => compilePattern({ label: 'lower', pattern: 'x' }, 0), /label/);
  });
});
