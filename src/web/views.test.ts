import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { escapeHtml, html, shellPage } from './views.js';

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
    assert.equal(escapeHtml('pay\u202eevil'), 'pay\\u202Eevil');
  });

  it('escapes interpolations but keeps nested fragments', () => {
    assert.equal(html`<p>${'<b>'}${html`<i>x</i>`}</p>`.value, '<p>&lt;b&gt;<i>x</i></p>');
  });

  it('renders the shell with its CSRF token and no markup from a proxy-given name', () => {
    const page = shellPage('tok', '<img src=x onerror=alert(1)>');
    assert.match(page, /name="lookfirst-csrf" content="tok"/);
    assert.doesNotMatch(page, /<img/);
  });
});
