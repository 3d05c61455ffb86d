import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkExpectations, fillReferences, resultData } from './evaluate.js';

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

describe('read-back references', () => {
  const sources = { args: { path: '/d/a.txt', content: 'hi', meta: { n: 2 } }, result: text('{"id":7,"items":[{"ok":true}]}') };

  it('fills $args and $result (text parsed as JSON) at any depth', () => {
    assert.deepEqual(fillReferences({ path: '$args.path', deep: ['$args.meta.n', { id: '$result.id' }], flag: '$result.items[0].ok', plain: 'x' }, sources), {
      ok: true,
      value: { path: '/d/a.txt', deep: [2, { id: 7 }], flag: true, plain: 'x' },
    });
  });
  it('prefers structuredContent for $result', () => {
    assert.deepEqual(fillReferences('$result.id', { args: {}, result: { ...text('{"id":1}'), structuredContent: { id: 2 } } }), { ok: true, value: 2 });
  });
  it('names a reference that resolves to nothing', () => {
    assert.deepEqual(fillReferences({ a: '$args.nope' }, sources), { ok: false, missing: '$args.nope' });
    assert.deepEqual(fillReferences('$result.x', { args: {}, result: text('not json') }), { ok: false, missing: '$result.x' });
  });
  it('leaves other strings alone', () => {
    assert.deepEqual(fillReferences(['$other.x', 'a$args.path', '$args'], sources), { ok: true, value: ['$other.x', 'a$args.path', '$args'] });
  });
});

describe('read-back expectations', () => {
  it('is ok when every field matches, in the result or in its data', () => {
    assert.deepEqual(checkExpectations(text('hello'), { 'content[0].text': 'hello' }), { outcome: 'ok', checked: 1 });
    assert.deepEqual(checkExpectations(text('{"balance":100.0}'), { balance: 100 }), { outcome: 'ok', checked: 1 });
  });
  it('fails with the field, expected and found', () => {
    assert.deepEqual(checkExpectations(text('{"balance":"100"}'), { balance: 100 }), {
      outcome: 'failed',
      mismatches: [{ path: 'balance', expected: 100, found: '100' }],
    });
  });
  it('is unclear when a path is not there', () => {
    const r = checkExpectations(text('x'), { 'content[1].text': 'x' });
    assert.equal(r.outcome, 'unclear');
  });
  it('reads structured data', () => {
    assert.equal(resultData({ structuredContent: { a: 1 } }) !== undefined, true);
    assert.equal(resultData(text('not json')), undefined);
  });
});
