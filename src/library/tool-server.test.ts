/**
 * A handler's answer as the gate receives it (`toToolResult`): JSON only, as over a real transport, and a
 * valid tool result; an answer that is neither becomes an error result saying why, never a value handed
 * over by reference (a getter, a Proxy, a Date) nor a protocol error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toToolResult } from './tool-server.js';

describe('toToolResult', () => {
  it('gives an object as JSON text and structured content, as plain data', () => {
    const date = new Date(0);
    const r = toToolResult({ at: date, n: 1 });
    assert.deepEqual(r, {
      content: [{ type: 'text', text: '{"at":"1970-01-01T00:00:00.000Z","n":1}' }],
      structuredContent: { at: '1970-01-01T00:00:00.000Z', n: 1 },
    });
    assert.equal(Object.getPrototypeOf(r.structuredContent), Object.prototype);
  });

  it('gives text for a string, a number, and nothing', () => {
    assert.deepEqual(toToolResult('done!'), { content: [{ type: 'text', text: 'done!' }] });
    assert.deepEqual(toToolResult(7), { content: [{ type: 'text', text: '7' }] });
    assert.deepEqual(toToolResult(undefined), { content: [{ type: 'text', text: 'done' }] });
    assert.deepEqual(toToolResult(new Date(0)), { content: [{ type: 'text', text: '1970-01-01T00:00:00.000Z' }] });
  });

  it('answers an error result, saying why, for what is not JSON', () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const getter = {
      get x() {
        throw new Error('getter boom');
      },
    };
    for (const [value, why] of [
      [10n, /not JSON.*BigInt/],
      [{ amount: 5n }, /not JSON.*BigInt/],
      [cycle, /not JSON.*circular/],
      [getter, /not JSON \(getter boom\)/],
    ] as const) {
      const r = toToolResult(value);
      assert.equal(r.isError, true);
      assert.match(String((r.content[0] as { text: string }).text), why);
    }
  });

  it('answers an error result for a result-shaped answer that is not a tool result', () => {
    const r = toToolResult({ content: [{ type: 'text', text: 5 }] });
    assert.equal(r.isError, true);
    assert.match(String((r.content[0] as { text: string }).text), /not a tool result \(content\.0/);
  });

  it('passes a valid result on as data', () => {
    const given = { content: [{ type: 'text' as const, text: 'hi' }], structuredContent: { ok: true } };
    const r = toToolResult(given);
    assert.deepEqual(r, given);
    assert.notEqual(r, given, 'a copy, not the handler object');
  });
});
