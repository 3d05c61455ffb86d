import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalJson } from '../audit/canonical.js';
import { elicitationMessage } from './channels/elicitation.js';
import { terminalPrompt } from './channels/terminal.js';
import { webhookPreview } from './channels/webhook.js';
import { findLookalikes, lookalikeLines, mixedScriptWords } from './lookalike.js';
import { summarizeCall } from './summary.js';
import { oneLine, showHidden } from './visible.js';

/** Format (bidi, zero-width, tags…), default-ignorable, separator, private-use and unassigned characters, and every space but U+0020. */
const FORBIDDEN = /[\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Co}\p{Cn}]|[^\P{Zs} ]|[^\P{Cc}\t\n\r]/u;

describe('look-alike words', () => {
  it('flags a Cyrillic letter inside a Latin word, with the letter escaped', () => {
    const found = findLookalikes('transfer', { to: 'p\u0430ypal.com', memo: 'rent' });
    assert.deepEqual(found, [{ where: 'to', shown: 'p\\u0430ypal', scripts: ['Latin', 'Cyrillic'] }]);
    assert.deepEqual(lookalikeLines(found), ['look-alike in to: "p\\u0430ypal" mixes Latin and Cyrillic letters']);
  });

  it('flags tool names, keys and nested values; leaves honest text alone', () => {
    assert.equal(findLookalikes('delete_\u0435verything', {})[0]?.where, 'tool name');
    assert.equal(findLookalikes('t', { 'p\u0430th': 'x' })[0]?.where, 'key p\u0430th');
    assert.equal(findLookalikes('t', { a: [{ b: 'Gre\u03bfk' }] })[0]?.where, 'a[0].b');
    for (const honest of ['Grüße aus Köln', 'Привет мир', 'naïve café', '東京タワーへ行く', '서울特別市', 'ΑΒΓ abc', 'x1y2 CO₂ 3.5kg', 'e\u0301t\u0301e'])
      assert.deepEqual(mixedScriptWords(honest), [], honest);
  });

  it('flags whole-script look-alikes and compatibility letters, in text that is otherwise Latin or alone', () => {
    const lines = (v: string) => lookalikeLines(findLookalikes('t', { v }));
    assert.deepEqual(lines('https://\u0440\u0430\u0443\u0440\u0430\u04cf.com/login'), [
      'look-alike in v: "\\u0440\\u0430\\u0443\\u0440\\u0430\\u04CF" is all Cyrillic letters that look like Latin "paypal"',
    ]);
    assert.match(lines('setup.\u0435\u0445\u0435')[0]!, /look like Latin "exe"/);
    assert.match(lines('\u0391\u03a1\u0399')[0]!, /all Greek letters that look like Latin "API"/);
    assert.deepEqual(lines('p\u{1d5ba}ypal'), ['look-alike in v: "p\\u{1D5BA}ypal" uses compatibility letters; it reads as "paypal"']);
    assert.match(lines('\uff50\uff41\uff59')[0]!, /reads as "pay"/);
    for (const honest of ['оса и рак', 'Привет мир', 'CO₂ 3.5kg', 'x²', 'Ⅻ'] as const) assert.deepEqual(lines(honest), [], honest);
  });

  it('no input renders a bidi, invisible or look-alike-space character on any channel (property)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(text, fc.dictionary(text, fc.oneof(text, fc.array(text, { maxLength: 3 }))), (tool, args) => {
        const argsCanonical = canonicalJson(args);
        const call = { callId: 'c', tool, upstream: 'u', upstreamTool: tool, args: JSON.parse(argsCanonical), argsCanonical, argsSha256: 'f'.repeat(64) };
        const lookalikes = findLookalikes(tool, call.args);
        const req = { call, summary: summarizeCall(tool, call.args), deadlineMs: Date.now(), client: tool, lookalikes };
        const preview = webhookPreview(req, 's'.repeat(32), 'http://127.0.0.1:1');
        const shown = [
          elicitationMessage(req),
          terminalPrompt(req),
          preview.tool_display,
          preview.summary,
          preview.arguments_display,
          preview.client_display,
          ...preview.warnings,
          ...lookalikeLines(lookalikes),
          showHidden(tool),
          oneLine(tool),
        ];
        for (const s of shown) assert.doesNotMatch(s, FORBIDDEN, JSON.stringify(s));
      }),
      { numRuns: 500 },
    );
  });
});
