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
 */
import type { Risk } from '../types.js';
import { type Inflection, lemma } from './lemma.js';
import { higher } from './rank.js';
import {
  AMBIGUOUS,
  CONJUNCTIONS,
  DESTRUCTIVE,
  GIT_WRITES,
  LIGHT_VERBS,
  MUTATING,
  OBJECT_NOUNS,
  OUTBOUND,
  READ_ACTIONS,
  READ_AGENTS,
  READ_NOUNS,
  READ_VERBS,
  SAFE_OBJECTS,
  SENSITIVE,
  SOFT_WRITE,
  STOPWORDS,
  VERB_ONLY,
  WEAK_READ_VERBS,
} from './words.js';

/**
 * What a phrase says: it reads; it writes (`soft` when only a bookkeeping verb says so); or it leaves a
 * doubt another signal may settle (an unknown word, a noun-or-verb word as the verb, a weak read verb on an
 * object not known to be harmless), with the risk it carries if it is a write.
 */
export type PhraseSignal =
  | { kind: 'read'; why: string }
  | { kind: 'write'; risk: Risk; soft: boolean; why: string }
  | { kind: 'doubt'; risk: Risk; why: string };

/** Weak read verbs that read with no object at all (`ping`, `n8n_health_check` after its prefix). */
const WEAK_ALONE = new Set(['ping', 'check', 'validate', 'lint', 'map', 'extract', 'scrape', 'compute', 'calculate', 'monitor', 'audit', 'review', 'verify']);

/** Query languages that cannot write (their object makes a light verb read: "Executes a LogQL query"). */
const READ_ONLY_LANGUAGE = /^(?:promql|logql|jq|jsonpath|jmespath|xpath|traceql|kql)$/;

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
export const isVerbWord = (w: string): boolean => DESTRUCTIVE.has(w) || OUTBOUND.has(w) || MUTATING.has(w) || READ_VERBS.has(w);

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
  if (!isVerbWord(w.base) || AMBIGUOUS.has(w.base)) return false;
  if (w.inflection === undefined) return true;
  return sentenceHead && (w.inflection === 's' || w.inflection === 'ing');
}

/** Judges one action: a head word and its objects. */
function judgeAction(head: Word, objects: Word[], where: string): PhraseSignal {
  const h = head.base;
  // An object that is a verb in every reading decides (deny wins): `search_replace`, `read_write_file`.
  const verbObject = objects.find((o) => o.inflection === undefined && VERB_ONLY.has(o.base));
  const risk = writeRisk(h);
  if (risk) {
    // `start_search`, `perform_lookup`: a light verb whose object is a reading action.
    // `start_search`, "Run a find query": a light verb whose object is a reading action.
    const action = objects.slice(0, 3).find((o) => READ_ACTIONS.has(o.base) || READ_AGENTS.has(o.base) || READ_ONLY_LANGUAGE.test(o.text));
    // "Run a GraphQL query": running a query is a write whose arguments the parsers judge per call; an
    // honest readOnlyHint on it is believed.
    const lastObject = objects[objects.length - 1];
    if (LIGHT_VERBS.has(h) && !action && lastObject && /^(?:query|queries|statement|statements)$/.test(lastObject.text) && !verbObject)
      return { kind: 'write', risk, soft: true, why: `${where} verb "${head.text}" runs a ${lastObject.text}` };
    if (LIGHT_VERBS.has(h) && action && !verbObject) return { kind: 'read', why: `${where} "${head.text} … ${action.text}" (a reading action)` };
    return { kind: 'write', risk, soft: SOFT_WRITE.has(h) && !verbObject, why: `${where} verb "${head.text}"` };
  }
  if (verbObject) {
    const r = writeRisk(verbObject.base) ?? 'medium';
    return { kind: 'write', risk: r, soft: false, why: `${where} word "${verbObject.text}" (a verb in every reading)` };
  }
  if (READ_VERBS.has(h) && !WEAK_READ_VERBS.has(h)) return { kind: 'read', why: `${where} verb "${head.text}"` };
  if (WEAK_READ_VERBS.has(h)) {
    if (objects.length === 0)
      return WEAK_ALONE.has(h)
        ? { kind: 'read', why: `${where} verb "${head.text}"` }
        : { kind: 'doubt', risk: 'medium', why: `${where} verb "${head.text}" can act on things; nothing says what it acts on` };
    // The last object is the noun the verb acts on (`take_heap_snapshot`); any sensitive word decides too.
    const safe = (o: Word) => SAFE_OBJECTS.has(o.base) || READ_NOUNS.has(o.base) || SAFE_OBJECTS.has(o.text) || READ_NOUNS.has(o.text);
    const last = objects[objects.length - 1] as Word;
    const odd = objects.find((o) => SENSITIVE.has(o.base)) ?? (safe(last) ? undefined : last);
    if (!odd) return { kind: 'read', why: `${where} verb "${head.text}" on "${objects.map((o) => o.text).join(' ')}"` };
    return { kind: 'doubt', risk: 'medium', why: `${where} verb "${head.text}" can act on things; "${odd.text}" is not a known harmless object` };
  }
  const amb = AMBIGUOUS.get(h);
  if (amb) return { kind: 'doubt', risk: amb, why: `${where} word "${head.text}" can be a verb` };
  if (READ_AGENTS.has(h)) return { kind: 'read', why: `${where} word "${head.text}" names a reader` };
  return { kind: 'doubt', risk: 'medium', why: `${where} word "${head.text}" is unknown` };
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
    signals.push(judgeSegment(seg));
  });
  return strictest(signals);
}

/** The first action of a name: find its head, then judge. */
function judgeSegment(seg: Word[]): PhraseSignal {
  const last = seg[seg.length - 1] as Word;
  if (READ_AGENTS.has(last.base) && seg.length > 1) {
    const verbObject = seg.find((o) => o.inflection === undefined && VERB_ONLY.has(o.base));
    if (!verbObject) return { kind: 'read', why: `name ends in "${last.text}" (a reader)` };
  }
  const at = seg.findIndex((w) => clearVerb(w, false));
  if (at >= 0)
    return judgeAction(
      seg[at] as Word,
      seg.filter((_, i) => i !== at),
      'name',
    );
  const amb = seg.findIndex((w) => w.inflection === undefined && AMBIGUOUS.has(w.base));
  if (amb >= 0)
    return judgeAction(
      seg[amb] as Word,
      seg.filter((_, i) => i !== amb),
      'name',
    );
  // No verb: a noun phrase. It reads when it names a report or a collection.
  if (READ_NOUNS.has(last.base) || READ_NOUNS.has(last.text)) return { kind: 'read', why: `name is a report: "${seg.map((w) => w.text).join(' ')}"` };
  const unknown = seg.find((w) => !knownWord(w.base) && w !== last);
  // A collection (`pg_locks`, `slack_channels`): a plural whose modifiers are all known nouns.
  if (!unknown && (last.inflection === 's' || (last.text.length > 3 && /[^s]s$/.test(last.text) && seg.length > 1)))
    return { kind: 'read', why: `name is a collection: "${seg.map((w) => w.text).join(' ')}"` };
  if (!knownWord(last.base) && !unknown) return { kind: 'doubt', risk: 'medium', why: `name word "${last.text}" is unknown` };
  if (unknown) return { kind: 'doubt', risk: 'medium', why: `name word "${unknown.text}" is unknown` };
  return { kind: 'doubt', risk: 'medium', why: `name "${seg.map((w) => w.text).join(' ')}" has no verb` };
}

/**
 * Judges the words of a description's first sentence (boilerplate already removed): its first clear verb
 * within the first few words is the head ("Returns the list of …"); verbs joined to it by "and", "or" or a
 * comma are actions too ("Create, update or delete …").
 * @param tokens lower-case words of the sentence, with "," kept as a token.
 */
export function judgeSentenceWords(tokens: readonly string[]): PhraseSignal {
  const ws = tokens.map((t) => (t === ',' || t === '/' ? undefined : word(t)));
  let at = -1;
  for (let i = 0; i < Math.min(ws.length, 3); i++) {
    const w = ws[i];
    if (!w) continue;
    // A sentence that opens with a noun-or-verb word opens with a verb ("Records feedback", "Post a message").
    if (clearVerb(w, i === 0) || (i === 0 && AMBIGUOUS.has(w.base) && w.inflection !== 'ed')) {
      at = i;
      break;
    }
  }
  if (at < 0) return { kind: 'doubt', risk: 'medium', why: 'description: no verb in its first words' };
  const head = ws[at] as Word;
  const objects: Word[] = [];
  const signals: PhraseSignal[] = [];
  for (let i = at + 1; i < ws.length; i++) {
    const w = ws[i];
    const joined = w === undefined || CONJUNCTIONS.has(w.text);
    if (joined) {
      // The next word is a coordinated action when it is a clear verb in the head's own form.
      const next = ws[i + 1];
      if (next && isVerbWord(next.base) && next.inflection === head.inflection && writeRisk(next.base)) signals.push(judgeAction(next, [], 'description'));
      continue;
    }
    if (objects.length < 3 && !STOPWORDS.has(w.text)) objects.push(w);
    else if (STOPWORDS.has(w.text) && objects.length > 0) break;
  }
  signals.unshift(judgeAction(head, objects, 'description'));
  return strictest(signals);
}
