/**
 * What a tool's description says it does: the verb of its first sentence ("Returns the list of …",
 * "Deletes …"), after the boilerplate tools put before it ("Use this tool to", "This tool"), and
 * statements anywhere that a call cannot be taken back. Pure.
 */
import { judgeSentenceWords, type PhraseSignal } from './phrase.js';
import { DESTRUCTIVE, LIGHT_VERBS, MUTATING, OUTBOUND, SOFT_WRITE } from './words.js';

/** Longest description read (characters): the first sentence is at its start. */
const MAX_CHARS = 4000;

/** Lead-ins before the verb, removed repeatedly ("Use this tool to …", "[Beta] Tool that …"). */
const LEAD_INS = [
  /^\s*(\[[^\]]{0,40}\]|\([^)]{0,40}\)|[#*>`\-\s]+)/u,
  /^\s*(?:tool|name|action|function|purpose|description|summary|usage)\s*:\s*/i,
  /^\s*[\w.-]{2,40}\s*:\s+(?=[A-Z])/u,
  /^\s*(?:please\s+)?use\s+(?:this|the)\s+(?:tool|function|endpoint|command)\s+(?:to|when|for)\s+/i,
  /^\s*(?:this|the|a|an)\s+(?:\w+\s+){0,3}?(?:tool|function|endpoint|command|api|method)\s+(?:that\s+|which\s+|to\s+|will\s+|can\s+|lets\s+you\s+|allows\s+you\s+to\s+|is\s+used\s+to\s+|for\s+)?/i,
  /^\s*(?:tool|function)\s+(?:to|that|for)\s+/i,
  /^\s*(?:allows?|lets?|enables?|helps?)\s+(?:you|the\s+(?:user|agent|model|assistant|llm|ai)|users|agents|clients)?\s*(?:to\s+)?/i,
  /^\s*(?:can\s+be\s+)?used\s+(?:to|for)\s+/i,
  /^\s*(?:you\s+can|we|i\s+will|will|can|should|must)\s+/i,
  /^\s*(?:quickly|easily|efficiently|safely|securely|directly|simply|automatically|programmatically|optionally)\s+/i,
  /^\s*(?:uses?|using|via|through|with)\s+(?:\S+\s+){0,6}?to\s+/i,
];

/** The first sentence of a description, without its lead-ins, as lower-case words ("," kept). */
export function firstSentenceWords(description: string): { sentence: string; words: string[] } {
  let text = description
    .slice(0, MAX_CHARS)
    .normalize('NFKC')
    .replace(/\*\*|__|`/g, '');
  text = text.split(/(?<=[.!?])\s+|\n\s*\n|\n(?=\s*[-*#\d])/u)[0] ?? '';
  for (let pass = 0; pass < 4; pass++) {
    const before = text;
    for (const re of LEAD_INS) text = text.replace(re, '');
    if (text === before) break;
  }
  const sentence = text.trim().replace(/\s+/g, ' ');
  const words = sentence
    .toLowerCase()
    .replace(/([,/])/g, ' $1 ')
    .split(/[^a-z0-9,/']+/)
    .filter(Boolean)
    .map((w) => w.replace(/'s$|'/g, ''));
  return { sentence, words };
}

/** Statements that a call changes something for good, anywhere in the description. */
const IRREVERSIBLE =
  /(?<![-\w])(?:permanently|irreversibl[ey]|cannot\s+be\s+(?:undone|reversed|recovered)|can(?:'|no)t\s+be\s+(?:undone|reversed)|destructive\s+(?:operation|action))/i;

/** A sentence that says the call only reads. */
const READ_ONLY = /\bread[- ]only\b|\bread\s+operations?\b|\bwithout\s+(?:making\s+|modifying\s+)?(?:any\s+)?changes\b|\bno\s+side[- ]effects\b/i;

/** A denial right before a statement (`non-destructive`, `does not permanently`) takes it back. */
const NEGATED = /(?:\bnot|\bnon|\bno|n't|\bnever|\bwithout)[\s-]+(?:\w+\s+){0,2}$/i;

/**
 * Judges a description: the first sentence's verb decides; a statement anywhere that a call cannot be
 * taken back makes a write. No description, or none with a verb, says nothing (`unknown`).
 */
export function judgeDescription(description: string | undefined): PhraseSignal & { sentence?: string } {
  if (!description?.trim()) return { kind: 'doubt', risk: 'medium', why: 'no description' };
  const text = description.slice(0, MAX_CHARS);
  const m = IRREVERSIBLE.exec(text);
  if (m && !NEGATED.test(text.slice(Math.max(0, m.index - 30), m.index)))
    return { kind: 'write', risk: 'high', soft: false, why: `description says "${m[0]}"` };
  const { sentence, words } = firstSentenceWords(description);
  let s = judgeSentenceWords(words);
  // "Execute read-only GraphQL queries", "Select and run one of the following read operations": a soft
  // or light verb whose sentence says the call only reads.
  const readOnly = READ_ONLY.exec(sentence);
  const onlyLightVerbs = words.every((w) => !(DESTRUCTIVE.has(w) || OUTBOUND.has(w) || MUTATING.has(w)) || SOFT_WRITE.has(w) || LIGHT_VERBS.has(w));
  if (s.kind === 'write' && onlyLightVerbs && readOnly && !NEGATED.test(sentence.slice(Math.max(0, readOnly.index - 30), readOnly.index)))
    s = { kind: 'read', why: `description says "${readOnly[0]}"` };
  const quoted = `"${sentence.length > 60 ? `${sentence.slice(0, 59)}…` : sentence}"`;
  if (s.kind === 'doubt' && /no verb/.test(s.why)) return { ...s, why: `description ${quoted} names no verb the classifier knows` };
  return { ...s, why: `${s.why.replace(/^description/, `description ${quoted}:`)}`, sentence };
}
