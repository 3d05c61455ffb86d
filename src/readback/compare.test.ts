import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { jsonEqual } from './compare.js';
import { parsePath, valueAt } from './path.js';

describe('read-back comparison', () => {
  it('compares numbers as numbers, also when parsed from text', () => {
    assert.equal(jsonEqual(100, 100.0), true);
    assert.equal(jsonEqual(JSON.parse('100.0'), 100), true);
    assert.equal(jsonEqual(JSON.parse('1e2'), 100), true);
    assert.equal(jsonEqual(100, 101), false);
  });
  it('never equates a string with a number', () => {
    assert.equal(jsonEqual('100', 100), false);
    assert.equal(jsonEqual(100, '100'), false);
  });
  it('compares strings exactly, and null, booleans only with themselves', () => {
    assert.equal(jsonEqual('a', 'a'), true);
    assert.equal(jsonEqual('a', 'A'), false);
    assert.equal(jsonEqual('e\u0301', '\u00e9'), false);
    assert.equal(jsonEqual(null, null), true);
    assert.equal(jsonEqual(null, false), false);
    assert.equal(jsonEqual(true, 1), false);
  });
  it('compares arrays in order and objects by keys in any order', () => {
    assert.equal(jsonEqual([1, { a: 2, b: [3] }], [1.0, { b: [3], a: 2 }]), true);
    assert.equal(jsonEqual([1, 2], [2, 1]), false);
    assert.equal(jsonEqual({ a: 1 }, { a: 1, b: undefined }), false);
    assert.equal(jsonEqual({}, []), false);
  });
  it('is reflexive and symmetric on any JSON (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        assert.equal(jsonEqual(a, JSON.parse(JSON.stringify(a))), true);
        assert.equal(jsonEqual(a, b), jsonEqual(b, a));
      }),
    );
  });
});

describe('read-back paths', () => {
  it('parses dots and indexes', () => {
    assert.deepEqual(parsePath('content[0].text'), [{ key: 'content' }, { index: 0 }, { key: 'text' }]);
    assert.deepEqual(parsePath('a.b[12][3]'), [{ key: 'a' }, { key: 'b' }, { index: 12 }, { index: 3 }]);
  });
  it('names the position of a malformed path', () => {
    for (const bad of ['', 'a.', '.a', 'a..b', 'a[', 'a[x]', 'a[01]', 'a]b', 'a[0]b']) assert.throws(() => parsePath(bad), /path ".*" at character \d+/, bad);
  });
  it('finds values and says where a path stops', () => {
    const root = { content: [{ type: 'text', text: 'hi' }], n: 0 };
    assert.deepEqual(valueAt(root, parsePath('content[0].text')), { found: true, value: 'hi' });
    assert.deepEqual(valueAt(root, parsePath('n')), { found: true, value: 0 });
    assert.deepEqual(valueAt(root, parsePath('content[1].text')), { found: false, at: 'content[1]' });
    assert.deepEqual(valueAt(root, parsePath('content.text')), { found: false, at: 'content.text' });
    assert.deepEqual(valueAt({}, parsePath('constructor')), { found: false, at: 'constructor' });
  });
});
