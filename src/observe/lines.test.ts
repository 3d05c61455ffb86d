import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLineSplitter } from './lines.js';

describe('createLineSplitter', () => {
  it('gives complete lines and holds back the unfinished rest until its newline', () => {
    const s = createLineSplitter();
    assert.deepEqual(s.push(Buffer.from('one\ntw')), ['one']);
    assert.equal(s.pendingBytes(), 2);
    assert.deepEqual(s.push(Buffer.from('o')), []);
    assert.deepEqual(s.push(Buffer.from('\nthree\n\n')), ['two', 'three', '']);
    assert.equal(s.pendingBytes(), 0);
  });

  it('joins a UTF-8 character split across two reads before decoding it', () => {
    const s = createLineSplitter();
    const bytes = Buffer.from('caf\u00e9 \u{1f600}\n');
    const lines = [...s.push(bytes.subarray(0, 4)), ...s.push(bytes.subarray(4, 7)), ...s.push(bytes.subarray(7))];
    assert.deepEqual(lines, ['caf\u00e9 \u{1f600}']);
  });

  it('forgets what it held on reset', () => {
    const s = createLineSplitter();
    s.push(Buffer.from('half'));
    s.reset();
    assert.deepEqual(s.push(Buffer.from('new\n')), ['new']);
  });
});
