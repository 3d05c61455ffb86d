import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { escapeHtml, html, pendingPage } from './views.js';

const DANGEROUS = /[<>"'\u202a-\u202e\u2066-\u2069\u200b-\u200f\u0000-\u0008\ufeff]/u;

describe('approval page escaping', () => {
  it('never renders markup, bidi or invisible characters from any input (property)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        assert.doesNotMatch(escapeHtml(s), DANGEROUS);
      }),
      { numRuns: 2000 },
    );
  });

  it('shows a right-to-left override as a visible code', () => {
    assert.equal(escapeHtml('pay\u202eevil'), 'pay&lt;U+202E&gt;evil');
  });

  it('escapes interpolations but keeps nested fragments', () => {
    assert.equal(html`<p>${'<b>'}${html`<i>x</i>`}</p>`.value, '<p>&lt;b&gt;<i>x</i></p>');
  });

  it('renders a pending call with its arguments escaped and its hash in the form', () => {
    const page = pendingPage(
      [
        {
          callId: 'c1',
          tool: 'write_file',
          upstream: 'files',
          summary: 'write_file path="<script>"',
          argsCanonical: '{"path":"<script>alert(1)</script>"}',
          argsSha256: 'ab'.repeat(32),
          sinceMs: 0,
          deadlineMs: 10_000,
        },
      ],
      'tok',
      'key',
      'alice',
      1000,
    );
    assert.doesNotMatch(page, /<script>/);
    assert.match(page, /name="args_sha256" value="(ab){32}"/);
    assert.match(page, /name="call_id" value="c1"/);
  });
});
