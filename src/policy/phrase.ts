/**
 * The grammar of a tool's name or of its description's first sentence: which word is the verb (the head),
 * which are its objects, and what that says. Pure; the vocabulary is policy/words.ts.
 *
 * - The head is the first clear verb (`get_actor_run`: get; `brave_web_search`: search; `user_create`:
 *   create), or a last word that names a reading agent (`…_services_reader`), or, when no clear verb is
 *   there, a word that is a noun as often as a verb (`git_log`, `email_user`).
 * - The head decides. An object decides only when it is a verb in every reading (VERB_ONLY):
 *   `search_replace` writes, `get_key_value_store` reads.
 * - Every action after a conjunction is judged as its own head, and deny wins (`get_and_delete`).
 * - A name without a verb reads when it ends in a report noun or a plural (`directory_tree`, `pg_locks`).
 * - Anything else is unknown, and unknown is a mutation whose reason names the word.
 *
 * Over 400 lines: the name grammar and the sentence grammar share the head, object and coordination rules;
 * split apart, each half would import the other's helpers (the layering test forbids the cycle).
 */
import type { Risk } from '../types.js';
import { type Inflection, lemma } from './lemma.js';
import { higher } from './rank.js';
import {
  AMBIGUOUS,
  AUXILIARIES,
  BOOKKEEPING_OBJECTS,
  CONJUNCTIONS,
  DESTRUCTIVE,
  DETERMINERS,
  FOREIGN_WRITE_STEMS,
  FOREIGN_WRITES,
  GIT_WRITES,
  LIGHT_VERBS,
  MUTATING,
  OBJECT_NOUNS,
  OUTBOUND,
  PARTICLES,
  READ_ACTIONS,
  READ_AGENTS,
  READ_NOUN_VERBS,
  READ_NOUNS,
  READ_VERBS,
  SAFE_OBJECTS,
  SENSITIVE,
  SOFT_ON_ANY,
  SOFT_WRITE,
  STOPWORDS,
  VERB_ONLY,
  WEAK_NOT_ON,
  WEAK_ONLY_ON,
  WEAK_READ_VERBS,
} from './words.js';

/**
 * What a phrase says: it reads; it writes (`soft` when only a bookkeeping verb says so); or it leaves a
 * doubt another signal may settle (an unknown word, a noun-or-verb word as the verb, a weak read verb on an
 * object not known to be harmless), with the risk it carries if it is a write.
 */
export type PhraseSignal =
  | { kind: 'read'; why: string; head?: string; object?: string }
  | { kind: 'write'; risk: Risk; soft: boolean; why: string }
  | { kind: 'doubt'; risk: Risk; why: string };

/** Weak read verbs that read with no object at all (`ping`, `n8n_health_check` after its prefix). */
const WEAK_ALONE = new Set(['ping', 'check', 'validate', 'lint', 'map', 'extract', 'scrape', 'compute', 'calculate', 'monitor', 'audit', 'review', 'verify']);

/** Query languages that cannot write (their object makes a light verb read: "Executes a LogQL query"). */
const READ_ONLY_LANGUAGE = /^(?:promql|logql|jq|jsonpath|jmespath|xpath|traceql|kql)$/;

/** Whether a word (or text, for scripts without spaces) destroys, sends or pays in another language. */
export function foreignWrite(text: string): boolean {
  return FOREIGN_WRITES.has(text) || FOREIGN_WRITE_STEMS.some((stem) => text.includes(stem));
}

/** Whether the vocabulary knows a word in any list. */
export function knownWord(w: string): boolean {
  return (
    DESTRUCTIVE.has(w) ||
    OUTBOUND.has(w) ||
    MUTATING.has(w) ||
    AMBIGUOUS.has(w) ||
    READ_VERBS.has(w) ||
    READ_NOUNS.has(w) ||
    SAFE_OBJECTS.has(w) ||
    OBJECT_NOUNS.has(w) ||
    READ_AGENTS.has(w) ||
    READ_ACTIONS.has(w)
  );
}

/** One word with its base form and what it can be. */
interface Word {
  text: string;
  base: string;
  inflection: Inflection;
}

/** Whether a word (in its base form) is a verb of any list: read, weak read or write. */
export const isVerbWord = (w: string): boolean => DESTRUCTIVE.has(w) || OUTBOUND.has(w) || MUTATING.has(w) || READ_VERBS.has(w) || WEAK_READ_VERBS.has(w);

function word(text: string): Word {
  const l = lemma(text, knownWord);
  return { text, base: l.base, inflection: l.inflection };
}

/** The risk a write verb carries (destructive and outbound high, the rest medium). */
function writeRisk(w: string): Risk | undefined {
  if (DESTRUCTIVE.has(w) || OUTBOUND.has(w)) return 'high';
  if (MUTATING.has(w)) return 'medium';
  return undefined;
}

/**
 * Whether a word acts as a clear verb here. In a name, an inflected form is a noun or an adjective
 * (`list_updates`, `pg_locks`, `get_deleted_items`); in a sentence, the inflected first word is the verb
 * ("Returns …", "Deletes …").
 */
function clearVerb(w: Word, sentenceHead: boolean): boolean {
  // A noun-or-verb word is not a clear verb, unless it is a read verb (`health_check`, `test_connection`).
  if (!isVerbWord(w.base) || (AMBIGUOUS.has(w.base) && !READ_VERBS.has(w.base))) return false;
  if (w.inflection === undefined) return true;
  return sentenceHead && (w.inflection === 's' || w.inflection === 'ing');
}

/** Whether every object is one of the server's own contexts (a bookkeeping verb on it stays soft). */
const bookkeeping = (objects: readonly Word[]) => {
  const last = objects[objects.length - 1];
  return (!last || BOOKKEEPING_OBJECTS.has(last.base) || BOOKKEEPING_OBJECTS.has(last.text)) && !objects.some((o) => SENSITIVE.has(o.base));
};

/** Whether a weak read verb may act on this object and still only read. */
function harmlessFor(verb: string, o: Word): boolean {
  const only = WEAK_ONLY_ON.get(verb);
  if (only) return only.has(o.text) || only.has(o.base);
  if (WEAK_NOT_ON.get(verb)?.has(o.text)) return false;
  return SAFE_OBJECTS.has(o.base) || READ_NOUNS.has(o.base) || SAFE_OBJECTS.has(o.text) || READ_NOUNS.has(o.text);
}

/** Judges one action: a head word and its objects. */
function judgeAction(head: Word, objects: Word[], where: string): PhraseSignal {
  const h = head.base;
  // An object that is a verb in every reading decides (deny wins): `search_replace`, `read_write_file`.
  const verbObject = objects.find((o) => (o.inflection === undefined && VERB_ONLY.has(o.base)) || compoundVerb(o) !== undefined);
  const risk = writeRisk(h);
  const last = objects[objects.length - 1];
  if (risk) {
    if (LIGHT_VERBS.has(h) && last && !verbObject) {
      // `start_search`, "Performs a web search": a light verb whose object (its last noun) is a reading
      // action; `run_search_campaign` is not one.
      // "Run a find query": a reading action before the query it names.
      // "Run a find query", "Execute a SELECT query", "Perform an HTTP GET request".
      const reading = /^(?:quer(?:y|ies)|requests?|statements?)$/.test(last.text)
        ? objects.find((o) => READ_ACTIONS.has(o.base) || o.text === 'select' || o.text === 'get' || o.text === 'head')
        : undefined;
      if (reading) return { kind: 'read', why: `${where} "${head.text} … ${reading.text} ${last.text}" (a reading action)` };
      if (READ_ACTIONS.has(last.base) || READ_AGENTS.has(last.base)) return { kind: 'read', why: `${where} "${head.text} … ${last.text}" (a reading action)` };
      const language = objects.find((o) => READ_ONLY_LANGUAGE.test(o.text));
      if (language) return { kind: 'read', why: `${where} "${head.text}" runs ${language.text}, which cannot write` };
      // "Run a GraphQL query": a write whose arguments the parsers judge per call; an honest readOnlyHint
      // on it is believed.
      if (/^(?:query|queries|statement|statements)$/.test(last.text))
        return { kind: 'write', risk, soft: true, why: `${where} verb "${head.text}" runs a ${last.text}` };
    }
    return {
      kind: 'write',
      risk,
      soft: SOFT_WRITE.has(h) && !verbObject && (SOFT_ON_ANY.has(h) ? !objects.some((o) => SENSITIVE.has(o.base)) : bookkeeping(objects)),
      why: `${where} verb "${head.text}"`,
    };
  }
  if (verbObject) {
    const r = writeRisk(compoundVerb(verbObject) ?? verbObject.base) ?? 'medium';
    return { kind: 'write', risk: r, soft: false, why: `${where} word "${verbObject.text}" (a verb in every reading)` };
  }
  if (READ_VERBS.has(h) && !WEAK_READ_VERBS.has(h)) return { kind: 'read', why: `${where} verb "${head.text}"`, head: h, object: last?.base };
  if (WEAK_READ_VERBS.has(h)) {
    if (!last)
      return WEAK_ALONE.has(h)
        ? { kind: 'read', why: `${where} verb "${head.text}"` }
        : { kind: 'doubt', risk: 'medium', why: `${where} verb "${head.text}" can act on things; nothing says what it acts on` };
    // The last object is the noun the verb acts on (`take_heap_snapshot`); a sensitive word, a particle
    // (`take_down`), or another verb (`generate_invite_link`) anywhere decides too.
    const odd =
      objects.find(
        (o) =>
          SENSITIVE.has(o.base) ||
          PARTICLES.has(o.text) ||
          (o !== last && AMBIGUOUS.has(o.base)) ||
          (o.inflection === undefined && writeRisk(o.base) && !AMBIGUOUS.has(o.base)),
      ) ?? (harmlessFor(h, last) ? undefined : last);
    if (!odd) return { kind: 'read', why: `${where} verb "${head.text}" on "${objects.map((o) => o.text).join(' ')}"` };
    return { kind: 'doubt', risk: 'medium', why: `${where} verb "${head.text}" can act on things; "${odd.text}" is not a known harmless object` };
  }
  const amb = AMBIGUOUS.get(h);
  if (amb) return { kind: 'doubt', risk: amb, why: `${where} word "${head.text}" can be a verb` };
  if (READ_AGENTS.has(h)) return { kind: 'read', why: `${where} word "${head.text}" names a reader` };
  return { kind: 'doubt', risk: 'medium', why: `${where} word "${head.text}" is unknown` };
}

/** Writing verbs seldom used as nouns, as the last word of a name (`find_user_suspend`). */
const SELDOM_NOUNS = new Set(['suspend', 'unsuspend', 'disable', 'deactivate', 'approve', 'reject', 'restart', 'reboot', 'unlock']);

/** Plurals that name money moving: a bare noun phrase ending in one may well make it move. */
const MONEY_MOVES = new Set(['refunds', 'payouts', 'transfers', 'charges', 'payments', 'withdrawals', 'deposits', 'credits', 'debits', 'disbursements']);

/** Endings that make a noun or a participle of a verb: deletion, removal, deleter, deleting. */
const NOMINAL = /^(.{3,}?)(?:ions?|als?|ers?|ors?|ing)$/;

/**
 * A destructive or outbound verb hidden in a word: a nominal (`deletion`, `removal`, `deleter`), a gerund
 * (`deleting`), or a compound the vocabulary does not know (`userdelete`).
 */
function hiddenVerb(w: Word): { word: string; verb: string } | undefined {
  const strong = (v: string) => DESTRUCTIVE.has(v) || OUTBOUND.has(v) || VERB_ONLY.has(v);
  if (w.inflection === 'ing' && strong(w.base)) return { word: w.text, verb: w.base };
  if (knownWord(w.base)) return undefined;
  const m = NOMINAL.exec(w.text);
  if (m?.[1]) for (const v of [m[1], `${m[1]}e`, m[1].replace(/t$/, 'te')]) if (strong(v)) return { word: w.text, verb: v };
  const v = compoundVerb(w);
  return v ? { word: w.text, verb: v } : undefined;
}

/** A verb in every reading glued into a word the vocabulary does not know (`userdelete`, `dropall`). */
function compoundVerb(w: Word): string | undefined {
  if (knownWord(w.base)) return undefined;
  for (const v of VERB_ONLY) if (v.length >= 5 && w.text.includes(v)) return v;
  return undefined;
}

/** Combines the signals of several actions: deny wins, then doubt, then read. */
export function strictest(signals: readonly PhraseSignal[]): PhraseSignal {
  let write: (PhraseSignal & { kind: 'write' }) | undefined;
  for (const s of signals)
    if (s.kind === 'write') write = write ? { kind: 'write', risk: higher(write.risk, s.risk), soft: write.soft && s.soft, why: write.why } : s;
  if (write) return write;
  return signals.find((s) => s.kind === 'doubt') ?? signals[0] ?? { kind: 'doubt', risk: 'medium', why: 'no words' };
}

/**
 * Judges the words of a tool name (already split, namespace prefixes removed).
 * @param tokens lower-case words, in order.
 * @param all the name's words before prefixes were removed (`git` may be the prefix of `git_fetch`).
 */
export function judgeNameWords(tokens: readonly string[], all: readonly string[] = tokens): PhraseSignal {
  if (all.includes('git')) {
    const sub = tokens.find((w) => GIT_WRITES.has(w));
    if (sub) return { kind: 'write', risk: 'medium', soft: false, why: `name "git … ${sub}" changes the repository (git ${sub})` };
  }
  const written = tokens.find((t) => foreignWrite(t));
  if (written) return { kind: 'write', risk: 'high', soft: false, why: `name word "${written}" destroys, sends or pays (in another language)` };
  const foreign = tokens.find((t) => /[^\x00-\x7f]/.test(t));
  if (foreign) return { kind: 'write', risk: 'medium', soft: false, why: `name word "${foreign}" is not in the vocabulary (another language or script)` };
  const segments: Word[][] = [[]];
  for (const t of tokens) {
    if (CONJUNCTIONS.has(t)) segments.push([]);
    else if (!STOPWORDS.has(t) && !/^\d+$/.test(t)) segments[segments.length - 1]?.push(word(t));
  }
  const signals: PhraseSignal[] = [];
  segments.forEach((seg, i) => {
    if (seg.length === 0) return;
    if (i > 0) {
      // After a conjunction the first word is an action of its own, unless it is a noun that continues
      // the objects (`list_users_and_teams`); an unknown one leaves a doubt.
      const [head, ...rest] = seg as [Word, ...Word[]];
      if (clearVerb(head, false) || (AMBIGUOUS.has(head.base) && head.inflection === undefined)) signals.push(judgeAction(head, rest, 'name'));
      else if (!(head.inflection === 's' || (knownWord(head.base) && !isVerbWord(head.base)) || /[^s]s$/.test(head.text)))
        signals.push({ kind: 'doubt', risk: 'medium', why: `unknown word "${head.text}" after a conjunction` });
      return;
    }
    signals.push(judgeSegment(seg, all[0] ?? ''));
  });
  return strictest(signals);
}

/**
 * The first action of a name: find its head, then judge.
 * @param first the first word of the whole name, before its namespace prefix was removed.
 */
function judgeSegment(seg: Word[], first: string): PhraseSignal {
  const head0 = seg[0] as Word;
  const last = seg[seg.length - 1] as Word;
  // `deletes_users`, `sends_emails`: a writing verb in the third person is still the verb.
  if (head0.inflection === 's' && seg.length > 1 && isStrongVerb(head0.base) && !AMBIGUOUS.has(head0.base))
    return judgeAction({ ...head0, inflection: undefined }, seg.slice(1), 'name');
  // `…_services_reader`: a name that ends in a reader reads, unless it opens with a writing verb
  // (`update_monitor`, `add_validator`) or holds a verb in every reading.
  if (READ_AGENTS.has(last.base) && seg.length > 1) {
    const opener = word(first);
    const opensWithWrite = opener.inflection === undefined && writeRisk(opener.base) && !AMBIGUOUS.has(opener.base);
    // What it reads about must not be an action of risk: `auto_refund_monitor`, `user_ban_checker`.
    const verbObject = seg.find(
      (o) => o !== last && o.inflection === undefined && (VERB_ONLY.has(o.base) || isStrongVerb(o.base) || AMBIGUOUS.get(o.base) === 'high'),
    );
    if (!opensWithWrite && !verbObject) return { kind: 'read', why: `name ends in "${last.text}" (a reader)` };
  }
  const at = seg.findIndex((w) => clearVerb(w, false));
  // `list_push`, `hash_set`, `view_refresh`: a read verb that is also a noun, then a writing verb last:
  // the name is noun-verb, and the last word is the action.
  // `get_user_ban`, `get_cache_flush`: whatever the head, a last word that is a destructive verb seldom
  // used as a noun is the action (`get_actor_run`, `get_broadcast` still read).
  if (
    at >= 0 &&
    at < seg.length - 1 &&
    last.inflection === undefined &&
    (DESTRUCTIVE.has(last.base) || VERB_ONLY.has(last.base) || isStrongVerb(last.base) || SELDOM_NOUNS.has(last.base))
  )
    return judgeAction(last, seg.slice(0, -1), 'name');
  if (at === 0 && seg.length > 1 && READ_NOUN_VERBS.has(head0.base) && clearVerb(last, false) && writeRisk(last.base))
    return judgeAction(last, seg.slice(0, -1), 'name');
  if (at >= 0)
    return judgeAction(
      seg[at] as Word,
      seg.filter((_, i) => i !== at),
      'name',
    );
  // No clear verb: a noun-or-verb word that opens the name is its verb (`email_user`, `git_log`).
  // A single word that names a report reads (`snapshot` after its namespace prefix).
  if (seg.length === 1 && READ_NOUNS.has(head0.text)) return { kind: 'read', why: `name is a report: "${head0.text}"` };
  if (head0.inflection === undefined && AMBIGUOUS.has(head0.base)) return judgeAction(head0, seg.slice(1), 'name');
  // A word that hides a destructive verb (`userdelete`, `account_deletion`, `files_deleter`,
  // `deleting_users`) is too likely the action for a name without a verb to read.
  const hidden = seg.map((w) => hiddenVerb(w)).find((v) => v !== undefined);
  if (hidden) return { kind: 'doubt', risk: 'high', why: `name word "${hidden.word}" hides the verb "${hidden.verb}"` };
  // A noun phrase reads only when every word is known and it names a report or a collection: an unknown
  // word may be a verb the vocabulary lacks (`strip_metadata`, `sweep_balance`).
  // An unknown plural may end it (`coding_rules`): a collection of things the vocabulary does not know.
  const unknown = seg.find((w) => !knownWord(w.base) && !(w === last && seg.length > 1 && /[^s]s$/.test(w.text)));
  if (unknown) return { kind: 'doubt', risk: 'medium', why: `name word "${unknown.text}" is unknown` };
  const phrase = seg.map((w) => w.text).join(' ');
  if (READ_NOUNS.has(last.base) || READ_NOUNS.has(last.text)) return { kind: 'read', why: `name is a report: "${phrase}"` };
  if (last.inflection === 's' || (last.text.length > 3 && /[^s]s$/.test(last.text) && seg.length > 1)) {
    // Not when the plural is of a destructive verb (`user_purges`, `pod_kills`) or of a movement of
    // money (`issue_refunds`), or a word that can be a verb opens it (`queue_jobs`).
    if (last.inflection === 's' && (DESTRUCTIVE.has(last.base) || isStrongVerb(last.base)))
      return { kind: 'doubt', risk: 'high', why: `name word "${last.text}" may be the verb "${last.base}"` };
    if (MONEY_MOVES.has(last.text) && seg.length > 1) return { kind: 'doubt', risk: 'high', why: `name "${phrase}" may move money` };
    return { kind: 'read', why: `name is a collection: "${phrase}"` };
  }
  return { kind: 'doubt', risk: 'medium', why: `name "${phrase}" has no verb` };
}

/** Punctuation kept in a sentence's tokens: it joins actions as "and" does. */
const JOINERS = new Set([',', ';', ':', '/', '&', '+']);

/** Adverbs between a joiner and its verb ("and automatically quarantines"). */
const isAdverb = (t: string) => /^[a-z]{3,}ly$/.test(t) || t === 'then' || t === 'also' || t === 'optionally';

/**
 * Whether a word at `i` acts as a verb of a sentence, not as a noun: a noun-or-verb word, or a third
 * person after a plain head, counts only when an object follows it ("charges their card", "… and posts
 * the message"), never in a list of nouns ("issues, comments and labels").
 */
function verbHere(ws: readonly (Word | undefined)[], i: number): boolean {
  const next = ws[i + 1];
  return next !== undefined && DETERMINERS.has(next.text);
}

/** Prepositions between a verb and its object ("replies to each one"). */
const PREPOSITIONS = new Set(['to', 'with', 'on', 'into']);

/** Whether an object follows the word at `i`: a determiner, or a preposition and then a determiner. */
function objectAfter(ws: readonly (Word | undefined)[], at: number): boolean {
  // A particle belongs to the verb ("fires off a webhook", "kicks off a deployment").
  const i = ws[at + 1] && PARTICLES.has((ws[at + 1] as Word).text) ? at + 1 : at;
  const next = ws[i + 1];
  if (!next) return false;
  if (DETERMINERS.has(next.text)) return true;
  const then = ws[i + 2];
  return PREPOSITIONS.has(next.text) && then !== undefined && DETERMINERS.has(then.text);
}

/** Writing verbs that are seldom nouns (delete, refund, send; not merge, push, run): actions wherever they stand as verbs. */
export const isStrongVerb = (w: string): boolean => VERB_ONLY.has(w) || DESTRUCTIVE.has(w) || (OUTBOUND.has(w) && !NOUNISH_OUTBOUND.has(w));
const NOUNISH_OUTBOUND = new Set([
  'merge',
  'push',
  'run',
  'deploy',
  'ship',
  'wire',
  'checkout',
  'forward',
  'reply',
  'broadcast',
  'bid',
  'relay',
  'dispatch',
  'submit',
]);

/**
 * A coordinated action after a joiner, or undefined. It is an action (not one more noun of a list such
 * as "author, date, or commit message") when an object follows it ("… and deletes it", ", merging them",
 * "and replies to each one"), when an adverb leads it ("and automatically quarantines"), when it is part
 * of a chain of verbs right after the head ("Create, update or delete …", "Search and replace"), or when
 * "and" or "then" joins a verb seldom used as a noun in the head's own form ("Get payments and cancel
 * subscriptions").
 */
function coordinated(ws: readonly (Word | undefined)[], from: number, head: Word, chained: boolean): Word | undefined {
  let i = from;
  let adverb = false;
  let conjunction = false;
  // Skip further joiners and adverbs: "and/or refund", "as well as refund", "and then automatically …".
  for (; i < ws.length; i++) {
    const w = ws[i];
    if (w === undefined) continue;
    if (CONJUNCTIONS.has(w.text) || w.text === 'as' || w.text === 'well') conjunction = conjunction || w.text === 'and' || w.text === 'then';
    else if (isAdverb(w.text)) adverb = true;
    else break;
  }
  const w = ws[i];
  if (!w || w.inflection === 'ed' || !(writeRisk(w.base) || AMBIGUOUS.has(w.base))) return undefined;
  const chain = chained && w.inflection !== 'ing' && !AMBIGUOUS.has(w.base);
  const strong = conjunction && w.inflection === head.inflection && isStrongVerb(w.base);
  return objectAfter(ws, i) || adverb || chain || strong ? w : undefined;
}

/**
 * Judges the words of a description's first sentence (lead-ins already removed): its first clear verb
 * within the first few words is the head ("Returns the list of …"); actions joined to it by "and", "or",
 * "then" or punctuation are judged too ("Create, update or delete …", "Reads the message and deletes it").
 * @param tokens lower-case words of the sentence, with `, ; : /` kept as tokens.
 * @param saysReadOnly the sentence says the call only reads ("read-only", "read operations"): it settles
 *   a light or bookkeeping verb that runs queries or operations, and nothing else.
 */
export function judgeSentenceWords(tokens: readonly string[], saysReadOnly = false): PhraseSignal {
  const ws = tokens.map((t) => (JOINERS.has(t) ? undefined : word(t)));
  let at = -1;
  for (let i = 0; i < Math.min(ws.length, 3); i++) {
    const w = ws[i];
    if (!w) continue;
    // "Item is removed", "The account will be deleted": a writing participle after an auxiliary.
    if (AUXILIARIES.has(w.text)) {
      const next = [ws[i + 1], ws[i + 2]].find((x) => x && x.inflection === 'ed' && writeRisk(x.base));
      if (next) return { kind: 'write', risk: writeRisk(next.base) as Risk, soft: false, why: `description says "${w.text} ${next.text}"` };
      continue;
    }
    // A sentence that opens with a noun-or-verb word opens with a verb when it is in the third person or
    // has an object ("Transfers funds", "Post a status update"); otherwise it leaves a doubt.
    if (i === 0 && AMBIGUOUS.has(w.base) && w.inflection !== 'ed' && !READ_VERBS.has(w.base) && !WEAK_READ_VERBS.has(w.base)) {
      if (w.inflection === 's' || verbHere(ws, 0))
        return { kind: 'write', risk: AMBIGUOUS.get(w.base) as Risk, soft: false, why: `description verb "${w.text}"` };
      at = 0;
      break;
    }
    // The first word's own form, or a writing verb a word or two in ("Hard-deletes", "Recursively removes").
    if (clearVerb(w, i === 0) || (w.inflection !== 'ed' && writeRisk(w.base) && !AMBIGUOUS.has(w.base))) {
      at = i;
      break;
    }
  }
  if (at < 0) return { kind: 'doubt', risk: 'medium', why: 'description: no verb in its first words' };
  const head = ws[at] as Word;
  const objects: Word[] = [];
  const actions: Word[] = [];
  let closed = false;
  // Still in a chain of verbs right after the head ("Create, update or delete").
  let chained = true;
  for (let i = at + 1; i < ws.length; i++) {
    const w = ws[i];
    if (w === undefined || CONJUNCTIONS.has(w.text)) {
      const c = coordinated(ws, i, head, chained);
      if (c && !actions.includes(c)) actions.push(c);
      chained = chained && c !== undefined;
      closed = true;
      continue;
    }
    if (!actions.includes(w)) chained = false;
    if (closed) continue;
    if (STOPWORDS.has(w.text)) {
      if (objects.length > 0) closed = true;
    } else if (objects.length < 3) objects.push(w);
  }
  // "the newly created ticket", "after withdrawing the amount": a writing participle with what it acts on.
  for (let i = at + 1; i < ws.length; i++) {
    const w = ws[i];
    if (!w || !writeRisk(w.base) || AMBIGUOUS.has(w.base) || actions.includes(w)) continue;
    if ((w.inflection === 'ed' && ws[i - 1]?.text === 'newly') || (w.inflection === 'ing' && isStrongVerb(w.base) && objectAfter(ws, i))) actions.push(w);
  }
  // A light verb's object is the whole noun phrase after it, adjectives listed with commas included
  // ("Conduct deep, multi-source research on …"): its last word is the action it names.
  if (LIGHT_VERBS.has(head.base)) {
    objects.length = 0;
    for (let i = at + 1; i < ws.length && objects.length < 6; i++) {
      const w = ws[i];
      if (w === undefined) continue;
      if (STOPWORDS.has(w.text) || CONJUNCTIONS.has(w.text)) {
        if (objects.length > 0) break;
        continue;
      }
      objects.push(w);
    }
  }
  const action = judgeAction(head, objects, 'description');
  const signals = actions.map(
    (w): PhraseSignal => ({ kind: 'write', risk: writeRisk(w.base) ?? AMBIGUOUS.get(w.base) ?? 'medium', soft: false, why: `description verb "${w.text}"` }),
  );
  // "Execute read-only GraphQL queries", "Select and run one of the following read operations": light or
  // bookkeeping verbs that run queries or operations said to be read-only.
  const light = (w: Word) => LIGHT_VERBS.has(w.base) || SOFT_WRITE.has(w.base);
  if (saysReadOnly && action.kind === 'write' && light(head) && actions.every(light) && tokens.some((t) => /^(?:quer(?:y|ies)|operations?|requests?)$/.test(t)))
    return { kind: 'read', why: `description: "${head.text}" runs what it says is read-only` };
  return strictest([action, ...signals]);
}
