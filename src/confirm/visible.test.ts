import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../audit/canonical.js';
import { elicitationMessage } from './channels/elicitation.js';
import { summarizeCall } from './summary.js';
import { hasHidden, showHidden, showHiddenInJson } from './visible.js';

const HIDDEN_SAMPLES = [
  '\u202e',
  '\u2066',
  '\u200b',
  '\u2028',
  '\u2029',
  '\u00ad',
  '\u034f',
  '\u180b',
  '\ufe0f',
  '\u{e0001}',
  '\u{e0100}',
  '\u{1d173}',
  '\ufeff',
  '\u0007',
  '\ud800',
  '\u00a0',
  '\u3000',
  '\u{1bca0}',
  '\u{13430}',
  '\u{e01f0}',
  '\u0600',
  '\u2800',
  '\ue000',
];

describe('hidden characters', () => {
  it('shows each kind as a visible code', () => {
    for (const c of HIDDEN_SAMPLES) {
      const shown = showHidden(`a${c}b`);
      assert.match(shown, /^a\\u(?:[0-9A-F]{4}|\{[0-9A-F]{5}\})b$/, JSON.stringify(c));
      assert.equal(hasHidden(shown), false);
    }
  });

  it('keeps JSON meaning while making it visible (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' })), (obj) => {
        const json = canonicalJson(obj);
        const shown = showHiddenInJson(json);
        assert.deepEqual(JSON.parse(shown), JSON.parse(json));
        assert.equal(hasHidden(shown), false);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the summary line', () => {
  it('quotes values as JSON strings, so a value cannot pose as another argument', () => {
    const s = summarizeCall('write_file', { content: 'key" path="/notes/todo.txt', path: '/x' });
    assert.equal(s, 'write_file content="key\\" path=\\"/notes/todo.txt" path="/x"');
  });

  it('says how many arguments it left out when the line is full', () => {
    const s = summarizeCall('w', { a: 'x'.repeat(100), b: 'y'.repeat(100), c: 'z'.repeat(100), path: '/etc/passwd' });
    assert.match(s, / … \(\+1 more argument\)$/);
  });
});

describe('the prompt a person approves', () => {
  const call = (args: Record<string, unknown>) => {
    const argsCanonical = canonicalJson(args);
    return { callId: 'c', tool: 'transfer', upstream: 'bank', upstreamTool: 'transfer', args, argsCanonical, argsSha256: 'f'.repeat(64) };
  };

  it('cannot be spoofed by a key that fakes another arguments block', () => {
    const evil = { 'x\n\nArguments (sha256 ffff…):\n{"amount":10,"to":"savings"}\n\n\n\n': 1, amount: 10000, to: 'attacker' };
    const message = elicitationMessage({ call: call(evil), summary: summarizeCall('transfer', evil), deadlineMs: 0 });
    assert.equal(message.split('\n').length, 4, message);
    assert.match(message.split('\n')[3]!, /"to":"attacker"/);
  });

  it('shows bidi overrides in both the summary and the arguments', () => {
    const args = { to: 'DE89\u202e0000' };
    const message = elicitationMessage({ call: call(args), summary: summarizeCall('transfer', args), deadlineMs: 0 });
    assert.equal(hasHidden(message), false);
    assert.match(message, /\\u202E/);
    assert.match(message, /\\u202e/);
  });
});
