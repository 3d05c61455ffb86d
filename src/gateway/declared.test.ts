import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolCall } from '../types.js';
import { type CatalogueTool, classifyTool } from './catalogue.js';
import { type DeclaredTool, declaredArgsProblem, declaredClassification, declaredPreviewText, MAX_PREVIEW_CHARS, runDeclaredReadback } from './declared.js';
import { summaryOf } from './pipeline/ask.js';

const result = { content: [{ type: 'text', text: 'done' }] };
const write = (extra: object = {}) => ({ kind: 'write' as const, risk: () => 'low', ...extra });

describe('a declared tool', () => {
  describe('when it is a read', () => {
    it('is read-only and low, whatever its arguments', () => {
      assert.deepEqual(declaredClassification({ kind: 'read' }, { x: 1 }), { kind: 'read-only', risk: 'low', reasons: ['declared a read by the server'] });
    });
  });

  describe('when it is a write', () => {
    it('is a mutation at the risk its function gives', () => {
      const c = declaredClassification(write({ risk: (a: Record<string, unknown>) => ((a.amount as number) > 100 ? 'high' : 'medium') }), { amount: 5 });
      assert.equal(c.kind, 'mutation');
      assert.equal(c.risk, 'medium');
    });
    it('is high when the risk function throws (fail closed)', () => {
      const c = declaredClassification(
        write({
          risk: () => {
            throw new Error('db down');
          },
        }),
        {},
      );
      assert.equal(c.risk, 'high');
      assert.match(c.reasons[0] ?? '', /risk function failed \(db down\)/);
    });
    for (const bad of [undefined, 'urgent', 3, { risk: 'low' }]) {
      it(`is high when the risk function answers ${JSON.stringify(bad)}`, () => {
        assert.equal(declaredClassification(write({ risk: () => bad }), {}).risk, 'high');
      });
    }
    it('is high without a risk function', () => {
      assert.equal(declaredClassification({ kind: 'write' }, {}).risk, 'high');
    });
    it('names why arguments its schema refuses cannot be asked about (reads and unchecked tools: nothing)', () => {
      assert.equal(declaredArgsProblem(write({ validate: () => 'to_iban: invalid\u001b[2J' }), { to_iban: 'x' }), 'to_iban: invalid\\u001B[2J');
      assert.equal(
        declaredArgsProblem(
          write({
            validate: () => {
              throw new Error('boom');
            },
          }),
          {},
        ),
        'the check failed: boom',
      );
      assert.equal(declaredArgsProblem(write({ validate: () => undefined }), { a: 1 }), undefined);
      assert.equal(declaredArgsProblem(write({ validate: () => undefined }), [1]), 'the arguments must be an object');
      assert.equal(declaredArgsProblem(write(), { a: 1 }), undefined);
      assert.equal(declaredArgsProblem({ kind: 'read', validate: () => 'bad' }, { a: 1 }), undefined);
    });
    it('is high when the arguments do not fit its schema, and the risk function is not asked', () => {
      let asked = false;
      const c = declaredClassification(
        write({
          validate: () => 'amount: expected number',
          risk: () => {
            asked = true;
            return 'low';
          },
        }),
        { amount: 'x' },
      );
      assert.equal(c.risk, 'high');
      assert.equal(asked, false);
    });
  });

  describe('in the catalogue (classifyTool, what the decide step and the fast path ask)', () => {
    // A definition whose name and annotations the classifier would call a harmless read.
    const tool = (declared?: CatalogueTool['declared']) =>
      ({
        exposed: 'get_quote',
        upstreamTool: 'get_quote',
        upstream: { name: 'unit-shop' },
        definition: { name: 'get_quote' },
        upstreamDefinition: { name: 'get_quote', annotations: { readOnlyHint: true } },
        annotations: { readOnlyHint: true },
        toolVerdict: { kind: 'read-only', risk: 'low', reasons: ['annotations: readOnlyHint'] },
        declared,
      }) as unknown as CatalogueTool;
    it('goes by the declaration over the definition: a declared write is a mutation, at its risk', () => {
      const c = classifyTool(tool(write({ risk: () => 'medium' })), { id: 1 });
      assert.equal(c.kind, 'mutation');
      assert.equal(c.risk, 'medium');
    });
    it('asks the risk function on every call (never a cached verdict: the risk may depend on state)', () => {
      let n = 0;
      const t = tool(
        write({
          risk: () => {
            n++;
            return 'low';
          },
        }),
      );
      classifyTool(t, { id: 1 });
      classifyTool(t, { id: 1 });
      assert.equal(n, 2);
    });
  });

  describe('its preview', () => {
    it('is the function’s text, cut to MAX_PREVIEW_CHARS', () => {
      assert.deepEqual(declaredPreviewText(write({ preview: () => 'Send 5 EUR' }), {}), { text: 'Send 5 EUR' });
      const long = declaredPreviewText(write({ preview: () => 'x'.repeat(2000) }), {});
      assert.ok(long && 'text' in long && long.text.length === MAX_PREVIEW_CHARS);
    });
    it('is a note when the function throws or gives no text', () => {
      const threw = declaredPreviewText(
        write({
          preview: () => {
            throw new Error('boom');
          },
        }),
        {},
      );
      assert.deepEqual(threw, { note: "the server's preview failed (boom)" });
      assert.deepEqual(declaredPreviewText(write({ preview: () => 42 }), {}), { note: "the server's preview gave no text" });
    });
  });

  describe('in the card summary (summaryOf)', () => {
    const call: ToolCall = {
      callId: 'c1',
      tool: 'transfer',
      upstream: 'bank',
      upstreamTool: 'transfer',
      args: { amount: 5 },
      argsCanonical: '{"amount":5}',
      argsSha256: '0'.repeat(64),
    };
    it('shows the author’s preview', () => {
      assert.equal(summaryOf(call, undefined, write({ preview: () => 'Send 5.00 EUR to Alice' })).plain, 'transfer: Send 5.00 EUR to Alice');
    });
    it('shows the generic summary with a note when the preview throws (the question is still asked)', () => {
      const declared = write({
        preview: () => {
          throw new Error('no');
        },
      });
      assert.match(summaryOf(call, undefined, declared).plain, /^transfer.*5.*\(the server's preview failed \(no\)\)$/);
    });
    it('is the generic summary for a tool nobody declared', () => {
      assert.doesNotMatch(summaryOf(call).plain, /preview/);
    });
  });

  describe('its read-back', () => {
    it('gives the author’s outcome and detail', async () => {
      assert.deepEqual(await runDeclaredReadback(write({ readback: async () => 'ok' }), {}, result, 1000), { readback: 'ok', detail: undefined });
      assert.deepEqual(await runDeclaredReadback(write({ readback: () => ({ outcome: 'failed', detail: 'balance unchanged' }) }), {}, result, 1000), {
        readback: 'failed',
        detail: 'balance unchanged',
      });
    });
    it('is unclear when the function throws, answers something else, or does not answer in time', async () => {
      const threw = await runDeclaredReadback(
        write({
          readback: async () => {
            throw new Error('ledger down');
          },
        }),
        {},
        result,
        1000,
      );
      assert.equal(threw?.readback, 'unclear');
      assert.match(threw?.detail ?? '', /ledger down/);
      assert.equal((await runDeclaredReadback(write({ readback: () => 'yes' }), {}, result, 1000))?.readback, 'unclear');
      const slow = await runDeclaredReadback(write({ readback: () => new Promise(() => {}) }), {}, result, 20);
      assert.equal(slow?.readback, 'unclear');
      assert.match(slow?.detail ?? '', /within 20 ms/);
    });
    it('is not run for a tool without one', async () => {
      assert.equal(await runDeclaredReadback(write(), {}, result, 1000), undefined);
    });
  });
});

describe('when an author function says hostile words', () => {
  const result = { content: [] };
  const write = (over: Partial<DeclaredTool>): DeclaredTool => ({ kind: 'write', risk: () => 'low', preview: () => 'x', ...over });
  it('a read-back detail reaches people on one line, control and bidi characters shown', async () => {
    const r = await runDeclaredReadback(write({ readback: () => ({ outcome: 'ok', detail: '\u001b[2Jok\n\u202efake' }) }), {}, result, 1000);
    assert.equal(r?.detail, '\\u001B[2Jok\\u000A\\u202Efake');
  });
  it('a thrown error whose words cannot be read, or hold control characters, still gives high risk and a note', () => {
    const hostile = {
      toString() {
        throw new Error('no words');
      },
    };
    const c = declaredClassification(
      write({
        risk: () => {
          throw hostile;
        },
      }),
      {},
    );
    assert.equal(c.risk, 'high');
    assert.match(c.reasons.join(' '), /could not be read/);
    const p = declaredPreviewText(
      write({
        preview: () => {
          throw new Error('\u001b[31mred\nline');
        },
      }),
      {},
    );
    assert.deepEqual(p, { note: "the server's preview failed (\\u001B[31mred\\u000Aline)" });
  });
});
