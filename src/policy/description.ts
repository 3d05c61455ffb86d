/**
 * What a tool's description says it does: the verb of its first sentence ("Returns the list of …",
 * "Deletes …"), after the boilerplate tools put before it ("Use this tool to", "This tool"), and
 * statements anywhere that a call cannot be taken back. Pure.
 */

import { lemma } from './lemma.js';
import { foreignWrite, isStrongVerb, judgeSentenceWords, knownWord, type PhraseSignal } from './phrase.js';
import { AMBIGUOUS, DESTRUCTIVE, DETERMINERS, LIGHT_VERBS, MUTATING, OUTBOUND, SOFT_WRITE } from './words.js';

/** Longest description read (characters): the first sentence is at its start. */
const MAX_CHARS = 4000;

/** Lead-ins before the verb, removed repeatedly ("Use this tool to …", "[Beta] Tool that …"). */
const LEAD_INS = [
  /^\s*(\[[^\]]{0,120}\]|\([^)]{0,40}\)|[#*>`\-\s]+)/u,
  /^\s*(?:tool|name|action|function|purpose|description|summary|usage|when to use|use when|note)\s*:\s*/i,
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

/** The sentences of a description, markdown emphasis, links and addresses reduced to their words. */
function sentencesOf(description: string): string[] {
  const text = description
    .slice(0, MAX_CHARS)
    .normalize('NFKC')
    .replace(/\*\*|__|`/g, '')
    .replace(/\[([^\]]{0,200})\]\([^)]{0,500}\)/g, '$1')
    .replace(/\bhttps?:\/\/\S+/g, 'link')
    // Names of tools and fields (`create_column`, `get_issue`) are references, not verbs.
    .replace(/\b[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+\b/g, 'identifier')
    // Examples in parentheses are not what the call does ("(for example, evaluate the performance)").
    .replace(/\((?:e\.g\.|eg|i\.e\.|for example|for instance|such as|like)\b[^)]{0,300}\)/gi, '');
  // Sentences end at . ! ? and their CJK forms, at a line break, and at a dash or an arrow that starts
  // another statement ("Gets the user — deletes it", "… -> deletes").
  return text.split(/(?<=[.!?。！？])\s*|\n+|\s+(?:—|–|->|=>|\|)\s+/u).filter((x) => x.trim() !== '');
}

/** A sentence without its lead-ins, and its lower-case words (`, ; : / & +` kept as tokens). */
function wordsOf(raw: string): { sentence: string; words: string[] } {
  let text = raw;
  for (let pass = 0; pass < 4; pass++) {
    const before = text;
    for (const re of LEAD_INS) text = text.replace(re, '');
    if (text === before) break;
  }
  const sentence = text.trim().replace(/\s+/g, ' ');
  // "as well as", "along with" join actions as "and" does.
  const joined = sentence.replace(/\b(?:as well as|along with|and also)\b/gi, 'and');
  const words = joined
    .toLowerCase()
    .replace(/([,;:/&+])/g, ' $1 ')
    .split(/[^a-z0-9,;:/&+']+/)
    .filter(Boolean)
    .map((w) => w.replace(/'s$|'/g, ''));
  return { sentence, words };
}

/** The first sentence of a description, without its lead-ins, as lower-case words (`, ; : /` kept). */
export function firstSentenceWords(description: string): { sentence: string; words: string[] } {
  return wordsOf(sentencesOf(description)[0] ?? '');
}

/** Statements that a call changes something for good, anywhere in the description. */
const IRREVERSIBLE =
  /(?<![-\w])(?:permanently|destructively|irreversibl[ey]|cannot\s+be\s+(?:undone|reversed|recovered)|can(?:'|no)t\s+be\s+(?:undone|reversed)|destructive\s+(?:operation|action))/i;

/** A sentence that says the call only reads. */
const READ_ONLY = /\bread[- ]only\b|\bread\s+operations?\b|\bwithout\s+(?:making\s+|modifying\s+)?(?:any\s+)?changes\b|\bno\s+side[- ]effects\b/i;

/** A denial right before a statement (`non-destructive`, `does not permanently`) takes it back. */
const NEGATED = /(?:\bnot|\bnon|\bno|n't|\bnever|\bwithout)[\s-]+(?:\w+\s+){0,2}$/i;

/**
 * A later sentence of a description that opens with a writing verb stating what the tool does: in the
 * third person with an object ("Archives every newsletter"), or a verb seldom used as a noun ("Deletes
 * …", "Refund payments.").
 */
function judgeLaterSentence(words: readonly string[]): (PhraseSignal & { kind: 'write' }) | undefined {
  const [verb = '', next = ''] = words;
  // "Updates are streamed" (a plural subject), "Format: …" (a label).
  if (/^(?:is|are|was|were|will|can|may|must|should|have|has|:)$/.test(next)) return undefined;
  const l = lemma(verb, knownWord);
  const strong = isStrongVerb(l.base);
  const stated =
    l.inflection === 's' && (MUTATING.has(l.base) || OUTBOUND.has(l.base)) && !LIGHT_VERBS.has(l.base) && !SOFT_WRITE.has(l.base) && DETERMINERS.has(next);
  if ((l.inflection === undefined || l.inflection === 's') && (strong || stated))
    return { kind: 'write', risk: DESTRUCTIVE.has(l.base) || OUTBOUND.has(l.base) ? 'high' : 'medium', soft: false, why: `verb "${verb}"` };
  return undefined;
}

/**
 * Verbs whose statement anywhere in a description means the call changes data (not how it shapes its
 * output: "results are truncated", "formats the output", "executes the query" are left to the grammar).
 */
const STATED_WRITES = new Set(
  'delete remove destroy erase wipe purge drop kill terminate revoke uninstall unpublish send publish pay refund withdraw transfer charge overwrite'.split(' '),
);

/** Words that take back a statement right after them ("does not delete", "never removes"). */
const NEGATIONS = new Set(['not', 'never', 'nt', 'cannot', 'doesnt', 'dont', 'wont', 'isnt']);
/** Words that make the next word a verb with its subject implied ("will delete", "then deletes"). */
const VERB_LEADS = new Set(['will', 'may', 'might', 'can', 'could', 'then', 'also', 'additionally', 'afterwards', 'automatically', 'tries', 'attempts']);
/** What may stand before a verb whose subject is the tool ("it also charges", "and emails them"). */
const SUBJECTS = new Set(['it', 'this', 'then', 'also', 'and', 'tool', 'server', 'additionally', 'afterwards', 'automatically']);

/** Noun-or-verb words that move money or send a message as verbs ("by charging $1"). */
const MONEY_OR_MESSAGE = new Set(['charge', 'transfer', 'email', 'post', 'order', 'trade', 'sms', 'deposit']);

/** Adverbs between an auxiliary and its participle ("is then deleted", "are automatically removed"). */
const ADVERBISH = /^(?:then|also|all|both|each|automatically|immediately|permanently|eventually|subsequently|afterwards|[a-z]{3,}ly)$/;

/** Words before a noun, not a verb ("the deletes", "all sends"); unlike DETERMINERS, no pronouns: "It deletes". */
const ARTICLES = new Set([
  'the',
  'a',
  'an',
  'its',
  'their',
  'his',
  'her',
  'your',
  'my',
  'our',
  'all',
  'every',
  'each',
  'some',
  'any',
  'no',
  'many',
  'several',
  'these',
  'those',
]);

/** Relative words: "items that were deleted" describes the items, not what the call does. */
const RELATIVES = new Set(['that', 'which', 'who', 'whose', 'were', 'been']);

/**
 * A writing verb stated anywhere in a description, not negated: the third person of a verb seldom used as
 * a noun ("… this also deletes the account"), a passive of one ("the account is removed"), one after a
 * modal or an adverb ("will delete", "then delete"), or a noun-or-verb word of high risk in the third
 * person with its object ("Charges their card").
 */
function statedWrite(words: readonly string[]): (PhraseSignal & { kind: 'write' }) | undefined {
  for (let i = 0; i < words.length; i++) {
    const t = words[i] as string;
    // A negation governs the words after it up to a comma or a colon ("Never prompts, deletes them").
    const window = words.slice(Math.max(0, i - 3), i);
    const cut = Math.max(window.lastIndexOf(','), window.lastIndexOf(';'), window.lastIndexOf(':'));
    if (window.slice(cut + 1).some((b) => NEGATIONS.has(b))) continue;
    const l = lemma(t, knownWord);
    const prev = words[i - 1] ?? '';
    const next = words[i + 1] ?? '';
    const strong = STATED_WRITES.has(l.base);
    const risk = DESTRUCTIVE.has(l.base) || OUTBOUND.has(l.base) ? 'high' : 'medium';
    // "… also deletes it": not a plural noun ("the deletes", "number of sends"), nor a subject ("deletes are").
    if (strong && l.inflection === 's' && !ARTICLES.has(prev) && prev !== 'of' && !/^(?:is|are|was|were|will|can|may|:)$/.test(next))
      return { kind: 'write', risk, soft: false, why: `description verb "${t}"` };
    // "the account is removed", not "items that were deleted".
    // A passive, maybe with an adverb between ("is then deleted"); a past one after a relative word
    // describes the things listed ("items that were deleted"), a present one what the call does.
    const AUX = /^(?:is|are|gets|get|got|was|being)$/;
    let aux = AUX.test(prev) ? i - 1 : ADVERBISH.test(prev) && AUX.test(words[i - 2] ?? '') ? i - 2 : -1;
    // "… will be deleted", unless it is the tool that will be removed (a deprecation notice).
    if (
      aux < 0 &&
      prev === 'be' &&
      words[i - 2] === 'will' &&
      !words.slice(Math.max(0, i - 6), i).some((b) => /^(?:tool|it|this|version|endpoint|feature|api)$/.test(b))
    )
      aux = i - 1;
    const past = aux >= 0 && /^(?:was|got)$/.test(words[aux] ?? '');
    if (strong && l.inflection === 'ed' && aux >= 0 && !(past && RELATIVES.has(words[aux - 1] ?? '')))
      return { kind: 'write', risk, soft: false, why: `description says "${prev} ${t}"` };
    if (strong && l.inflection === undefined && VERB_LEADS.has(prev)) return { kind: 'write', risk, soft: false, why: `description says "${prev} ${t}"` };
    // "… to delete it", "tries to delete it", not an instruction ("Use identifier to delete a user").
    if (strong && l.inflection === undefined && prev === 'to' && DETERMINERS.has(next) && !/^(?:use|call|see|try|run|prefer)$/.test(words[0] ?? ''))
      return { kind: 'write', risk, soft: false, why: `description says "to ${t} ${next}"` };
    // "… by charging $1", "by sending a sample event".
    if (prev === 'by' && l.inflection === 'ing' && (strong || MONEY_OR_MESSAGE.has(l.base)))
      return { kind: 'write', risk: 'high', soft: false, why: `description says "by ${t}"` };
    if (t === 'rid' && /^get(?:s|ting)?$|^got$/.test(prev)) return { kind: 'write', risk: 'high', soft: false, why: 'description says "get rid of"' };
    if (t === 'place' && prev === 'in' && i > 1) return { kind: 'write', risk: 'medium', soft: false, why: 'description says "in place"' };
    if ((t === 'trash' || t === 'bin') && /^(?:the|to|into)$/.test(prev) && /^(?:to|into|in|the)$/.test(words[i - 2] ?? prev))
      return { kind: 'write', risk: 'high', soft: false, why: 'description says "to the trash"' };
    if (l.inflection === 's' && AMBIGUOUS.get(l.base) === 'high' && DETERMINERS.has(next) && (i === 0 || SUBJECTS.has(prev)))
      return { kind: 'write', risk: 'high', soft: false, why: `description verb "${t}"` };
  }
  return undefined;
}

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
  // A description in another language that destroys, sends or pays ("Löscht den Benutzer", "删除用户").
  const foreign = text
    .toLowerCase()
    .normalize('NFKC')
    .split(/[^\p{L}]+/u)
    .find((w) => foreignWrite(w));
  if (foreign) return { kind: 'write', risk: 'high', soft: false, why: `description word "${foreign}" destroys, sends or pays (in another language)` };
  const [first = '', ...rest] = sentencesOf(description);
  const { sentence, words } = wordsOf(first);
  const readOnly = READ_ONLY.exec(sentence);
  const saysReadOnly = readOnly !== null && !NEGATED.test(sentence.slice(Math.max(0, readOnly.index - 30), readOnly.index));
  const s = judgeSentenceWords(words, saysReadOnly);
  // The next sentences, when they state what the tool does ("Scans the inbox. Archives every newsletter.",
  // "Get payments. Refund payments."), write too; instructions to the agent ("Use create_label first.",
  // "Call it again to page") and plural subjects ("Updates are streamed") do not count.
  for (const later of rest.slice(0, 12)) {
    const t = judgeLaterSentence(wordsOf(later).words);
    if (t) {
      const q = later.trim().slice(0, 50);
      return { ...t, why: `description "${q}${later.trim().length > 50 ? '…' : ''}": ${t.why}` };
    }
  }
  // Anywhere in it: a writing verb stated, not negated ("Note: this also deletes the account", "the
  // account is removed", "will then delete it").
  if (s.kind !== 'write' || s.soft)
    for (const one of sentencesOf(description).slice(0, 40)) {
      const stated = statedWrite(wordsOf(one).words);
      if (stated)
        return { ...stated, why: `description "${one.trim().slice(0, 50)}${one.trim().length > 50 ? '…' : ''}": ${stated.why.replace(/^description /, '')}` };
    }
  const quoted = `"${sentence.length > 60 ? `${sentence.slice(0, 59)}…` : sentence}"`;
  if (s.kind === 'doubt' && /no verb/.test(s.why)) return { ...s, why: `description ${quoted} names no verb the classifier knows` };
  return { ...s, why: `${s.why.replace(/^description/, `description ${quoted}:`)}`, sentence };
}
