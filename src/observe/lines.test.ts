import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEntryLine } from './decisions.js';
import { createLineSplitter, MAX_LINE_BYTES, TOO_LONG } from './lines.js';

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

describe('when a line is longer than the limit (a hostile or broken log)', () => {
  it('drops its bytes as they come and reports it once, as TOO_LONG, then reads on', () => {
    const s = createLineSplitter(10);
    assert.deepEqual(s.push(Buffer.from('short\n0123456')), ['short']);
    assert.deepEqual(s.push(Buffer.from('789abcdef')), []);
    assert.equal(s.pendingBytes(), 0);
    assert.deepEqual(s.push(Buffer.from('more\nnext\n')), [TOO_LONG, 'next']);
    assert.equal(parseEntryLine(TOO_LONG), undefined);
  });

  it('holds at most the limit of a line that never ends, and reads it in linear time', () => {
    const s = createLineSplitter();
    const chunk = Buffer.alloc(64 * 1024);
    const t0 = performance.now();
    // 256 MiB of zeros with no newline: a sparse file, say.
    for (let i = 0; i < 4096; i++) assert.deepEqual(s.push(chunk), []);
    assert.ok(s.pendingBytes() <= MAX_LINE_BYTES);
    assert.deepEqual(s.push(Buffer.from('\n{"a":1}\n')), [TOO_LONG, '{"a":1}']);
    assert.ok(performance.now() - t0 < 10_000, 'a long line is read in linear time');
  });
});
