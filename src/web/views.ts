/**
 * HTML for the approval page: a static shell; the page's script (static/app.js) fills it from the
 * state stream, through text nodes only. Every value interpolated here goes through `html`'s escaping:
 * there is no way to insert raw markup except another `html` fragment. Invisible and bidi control
 * characters are shown as visible escapes.
 */
import { showHidden } from '../confirm/visible.js';

/** A fragment of trusted HTML. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Escapes text for HTML and makes invisible/bidi characters visible as `\uXXXX`. */
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

/**
 * The page shell.
 * @param csrf the per-process token the script sends with each decision.
 * @param identity the proxy's name for the person, or undefined when the page asks for a name.
 * @param reconnect `retryMs,giveUpMs`: how the page's script retries a lost event stream.
 * @param pairing whether the page offers "Pair a phone" (the gate has a device endpoint).
 */
export function shellPage(csrf: string, identity: string | undefined, reconnect = '2000,60000', pairing = false): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lookfirst</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="lookfirst-csrf" content="${csrf}">
<meta name="lookfirst-identity" content="${identity ?? ''}">
<meta name="lookfirst-reconnect" content="${reconnect}">
<meta name="lookfirst-pairing" content="${pairing ? 'on' : ''}">
<link rel="stylesheet" href="/static/app.css">
<script src="/static/app.js" defer></script>
</head>
<body>
<header><h1>lookfirst <span id="count" aria-live="polite"></span></h1>
<p id="who"></p>
<p id="status" role="status">connecting…</p>
<div id="pair-area"></div>
<p class="hint">Approve runs the call shown, exactly as shown, once. Deny, or no decision before the countdown ends, runs nothing.</p></header>
<main>
<section aria-labelledby="pending-h"><h2 id="pending-h" tabindex="-1">Waiting for you</h2>
<p id="empty">Nothing is waiting. New calls appear here by themselves.</p>
<div id="pending"></div></section>
<section aria-labelledby="history-h"><h2 id="history-h">Recent decisions</h2>
<ol id="history"></ol></section>
</main>
<noscript><p>This page needs JavaScript to show calls as they arrive.</p></noscript>
</body></html>`.value;
}

/**
 * The page a browser gets instead of a JSON refusal (a missing or wrong access key, a foreign Host): the
 * same sentence as the JSON `error`, as text. It has no script and loads only the page's own style sheet
 * (served without the key), so it needs no CSP allowance beyond `style-src 'self'`.
 * @param status the HTTP status it is sent with (shown in the title).
 * @param message the sentence, escaped here like every other value.
 */
export function errorPage(status: number, message: string): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>lookfirst: ${status === 403 ? 'refused' : `error ${status}`}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/static/app.css">
</head>
<body>
<header><h1>lookfirst</h1></header>
<main><p id="error" class="error-page">${message}</p>
<p class="hint">Nothing was shown and nothing was decided.</p></main>
</body></html>`.value;
}
