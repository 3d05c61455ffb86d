/**
 * HTML for the approval page. Every interpolated value goes through `html`'s escaping: there is no way to
 * insert raw markup except another `html` fragment. Invisible and bidi control characters are shown as
 * visible escapes, so arguments cannot hide text from the person approving them.
 */
import type { PendingView } from '../confirm/pending.js';
import { showHidden } from '../confirm/visible.js';

/** A fragment of trusted HTML. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for HTML and makes invisible/bidi characters visible as `<U+XXXX>`. */
export function escapeHtml(text: string): string {
  return showHidden(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Tagged template: values are escaped unless they are SafeHtml (or arrays of it). */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((v, i) => {
    out += render(v) + strings[i + 1]!;
  });
  return new SafeHtml(out);
}

function render(v: unknown): string {
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  if (v === undefined || v === null) return '';
  return escapeHtml(String(v));
}

/** The whole page: pending calls with Approve and Deny forms bound to call id and args hash. */
export function pendingPage(items: PendingView[], csrf: string, accessKey: string, approver: string, nowMs: number, flash?: string): string {
  const rows = items.map(
    (p) => html`<section class="call">
  <h2>${p.tool} <small>on ${p.upstream}</small></h2>
  <p class="summary">${p.summary}</p>
  <pre class="args">${prettyArgs(p.argsCanonical)}</pre>
  <p class="meta">call ${p.callId} · args sha256 <code>${p.argsSha256}</code> · waiting ${Math.round((nowMs - p.sinceMs) / 1000)} s, ${Math.max(0, Math.round((p.deadlineMs - nowMs) / 1000))} s left</p>
  <form method="post" action="/decide?k=${accessKey}">
    <input type="hidden" name="csrf" value="${csrf}">
    <input type="hidden" name="call_id" value="${p.callId}">
    <input type="hidden" name="args_sha256" value="${p.argsSha256}">
    <label>Your name <input name="approver" value="${approver}" maxlength="64"></label>
    <button name="decision" value="approve" class="approve">Approve</button>
    <button name="decision" value="deny" class="deny">Deny</button>
  </form>
</section>`,
  );
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lookfirst: ${items.length} waiting</title>
<meta http-equiv="refresh" content="5">
<style>body{font:15px system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
.call{border:1px solid #999;border-radius:6px;padding:0 1rem 1rem;margin:1rem 0}
pre{background:#f4f4f4;padding:.5rem;white-space:pre-wrap;word-break:break-all;max-height:30rem;overflow:auto}
.approve{background:#1a7f37;color:#fff}.deny{background:#cf222e;color:#fff}button{padding:.4rem 1rem;margin-left:.5rem}
.flash{background:#fff8c5;padding:.5rem}</style></head>
<body><h1>lookfirst: calls waiting for you</h1>
${flash ? html`<p class="flash">${flash}</p>` : ''}
${items.length === 0 ? html`<p>Nothing is waiting. This page refreshes itself.</p>` : rows}
</body></html>`.value;
}

function prettyArgs(canonical: string): string {
  try {
    return JSON.stringify(JSON.parse(canonical), null, 2);
  } catch {
    return canonical;
  }
}
