import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createSelfApprovalNotice, declaresFormElicitation } from './self-approval.js';

describe('the self-approval warning', () => {
  const notice = (confirm: { elicitation: boolean; mode: 'wait' | 'pending' }) => {
    const lines: string[] = [];
    return { lines, note: createSelfApprovalNotice(confirm, (l) => lines.push(l)) };
  };

  it('says nothing for a client that cannot elicit', () => {
    const n = notice({ elicitation: true, mode: 'wait' });
    n.note('agent', undefined);
    n.note('agent', { url: {} });
    assert.deepEqual(n.lines, []);
  });

  it('warns once per gate, naming the first client that can elicit', () => {
    const n = notice({ elicitation: true, mode: 'wait' });
    n.note('first', {});
    n.note('second', { form: {} });
    assert.equal(n.lines.length, 1);
    assert.match(n.lines[0]!, /^warning: the client "first" can answer elicitation .*\(self-approval\)\. For such clients set confirm\.elicitation: false/);
  });

  it('says nothing when elicitation is off or the gate runs in pending mode (the client is never asked)', () => {
    for (const confirm of [
      { elicitation: false, mode: 'wait' as const },
      { elicitation: true, mode: 'pending' as const },
    ]) {
      const n = notice(confirm);
      n.note('agent', { form: {} });
      assert.deepEqual(n.lines, []);
    }
  });

  it('reads a bare elicitation: {} as form mode, and url alone as not', () => {
    assert.equal(declaresFormElicitation({}), true);
    assert.equal(declaresFormElicitation({ form: {}, url: {} }), true);
    assert.equal(declaresFormElicitation({ url: {} }), false);
    assert.equal(declaresFormElicitation(null), false);
    assert.equal(declaresFormElicitation([]), false);
  });

  it('quotes the claimed client name, so control characters cannot forge log lines', () => {
    const n = notice({ elicitation: true, mode: 'wait' });
    n.note('evil\nlookfirst: all clear', {});
    assert.doesNotMatch(n.lines[0]!, /\n/);
  });
});
