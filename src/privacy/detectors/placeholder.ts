/**
 * Placeholders: `[[LABEL_<32 lowercase hex>]]`, the text the privacy filter puts where a private value was
 * (label: the kind of value; the id: 128 random bits issued by the vault). Here, the exact form, and the
 * look-alikes an agent may send by mistake or to probe the vault, which the caller refuses (fail closed):
 * a wrong-length or upper-case id (`[[IBAN_3f9a]]`, `[[IBAN_3F9A…]]`), an id cut with an ellipsis
 * (`[[IBAN_3f9a1c2b…]]`, `[[IBAN_3f9a...]]`, also without the closing brackets), spaces inside the brackets,
 * a lower-case label. `[[Some Page]]` (a wiki link) is not a look-alike: there is no `_<hex>` after a label.
 *
 * Disguised attempts too, read in the decoded view (./normalize.ts: escapes decoded, full-width folded,
 * invisible characters dropped): any opening bracket-like character (\p{Ps} or `<`, once or twice, also
 * `%5B`, `\u005b`, `&#91;`, `［`), a label of letters of any script, digits and `_` with an upper-case
 * letter (or no label and 16+ hex digits), a `_`, `-` or `:`, then 8 or more hex digits (with a letter
 * a–f, or 16 or more): `[[EMAIL-<id>]]`, `[[EMAIL_<id>]`, `［［EMAIL_<id>］］`, `[[9X_<id>]]`, a Cyrillic
 * letter in the label, a zero-width character inside, `%5B%5BIBAN_<id>%5D%5D`. Not attempts: wiki links,
 * `[[1]]`, git SHAs and UUIDs (no bracket and label before them), `[PROJ-12345678]` (digits only, short),
 * `{sha256:<hex>}` (a lower-case label).
 */
import { decodeView, needsView } from './normalize.js';

/** The exact placeholder form, global: reset `lastIndex` before use. Group 1: the label; group 2: the id. */
export const PLACEHOLDER_RE = /\[\[([A-Z][A-Z0-9_]*)_([0-9a-f]{32})\]\]/g;

const EXACT_RE = /^\[\[([A-Z][A-Z0-9_]*)_([0-9a-f]{32})\]\]$/;
/** Bounded quantifiers: a hostile text of `[[a_a_a_…` costs a bounded amount per `[[`. */
const LOOKALIKE_RE =
  /\[\[\s{0,4}([A-Za-z][A-Za-z0-9_]{0,40}?)_([0-9A-Fa-f]{1,64})\s{0,4}(?:…|\.{2,4})?\s{0,4}\]\]|\[\[\s{0,4}([A-Za-z][A-Za-z0-9_]{0,40}?)_([0-9A-Fa-f]{0,64})\s{0,4}(?:…|\.{2,4})/g;

/** One placeholder or look-alike in a text: [start, end) UTF-16 offsets; `id` undefined for a look-alike. */
export interface PlaceholderSpan {
  start: number;
  end: number;
  label: string;
  id: string | undefined;
}

/** True when the whole text is exactly one placeholder. */
export function isPlaceholder(text: string): boolean {
  return EXACT_RE.test(text);
}

/** A bracket, a label, a separator and 8–64 hex digits: a placeholder attempt (bounded: linear on hostile text). */
const ATTEMPT_RE = /[\p{Ps}<]\s{0,4}(?:[\p{Ps}<]\s{0,4})?([\p{L}\p{N}_]{0,40}?)[-_:]\s{0,4}([0-9A-Fa-f]{8,64})/gu;
const HEX8_RE = /[0-9A-Fa-f]{8}/;
const UPPER_RE = /\p{Lu}/u;
const HEX_LETTER_RE = /[A-Fa-f]/;
/** After the id: an ellipsis, spaces and up to two closing brackets belong to the attempt. */
const TAIL_RE = /(?:…|\.{2,4})?\s{0,4}[\p{Pe}>]{0,2}/uy;

/** Disguised placeholder attempts (see the file header) in `text` not overlapping `known` (sorted), pushed onto `out`. */
function findAttempts(text: string, known: readonly PlaceholderSpan[], out: PlaceholderSpan[]): void {
  if (!HEX8_RE.test(text)) return;
  const view = needsView(text) ? decodeView(text) : undefined;
  const t = view ? view.text : text;
  let p = 0;
  ATTEMPT_RE.lastIndex = 0;
  for (let m = ATTEMPT_RE.exec(t); m !== null; m = ATTEMPT_RE.exec(t)) {
    const [, label, hex] = m as unknown as [string, string, string];
    if (!(UPPER_RE.test(label) || (label === '' && hex.length >= 16)) || !(HEX_LETTER_RE.test(hex) || hex.length >= 16)) {
      ATTEMPT_RE.lastIndex = m.index + 1;
      continue;
    }
    TAIL_RE.lastIndex = m.index + m[0].length;
    const e = m.index + m[0].length + (TAIL_RE.exec(t)?.[0].length ?? 0);
    const start = view ? view.start[m.index]! : m.index;
    const end = view ? view.end[e - 1]! : e;
    while (p < known.length && known[p]!.end <= start) p++;
    if (p === known.length || known[p]!.start >= end) out.push({ start, end, label, id: undefined });
    ATTEMPT_RE.lastIndex = e;
  }
}

/** Every exact placeholder and look-alike in `text`, by start offset. */
export function findPlaceholders(text: string): PlaceholderSpan[] {
  const out: PlaceholderSpan[] = [];
  if (text.includes('[[')) findLookalikes(text, out);
  const attempts: PlaceholderSpan[] = [];
  findAttempts(text, out, attempts);
  if (attempts.length === 0) return out;
  return out.concat(attempts).sort((a, b) => a.start - b.start);
}

function findLookalikes(text: string, out: PlaceholderSpan[]): void {
  LOOKALIKE_RE.lastIndex = 0;
  for (let m = LOOKALIKE_RE.exec(text); m !== null; m = LOOKALIKE_RE.exec(text)) {
    const exact = EXACT_RE.exec(m[0]);
    out.push({ start: m.index, end: m.index + m[0].length, label: exact ? exact[1]! : (m[1] ?? m[3]!), id: exact ? exact[2] : undefined });
  }
}

/** [start, end) spans of the exact placeholders in `text` (what detectors must never look inside). */
export function placeholderSpans(text: string): [number, number][] {
  if (!text.includes('[[')) return [];
  const out: [number, number][] = [];
  PLACEHOLDER_RE.lastIndex = 0;
  for (let m = PLACEHOLDER_RE.exec(text); m !== null; m = PLACEHOLDER_RE.exec(text)) out.push([m.index, m.index + m[0].length]);
  return out;
}
