/**
 * What an operation value asks for: the value of a field that says what a generic tool will do
 * (`action: "delete"`, `op: "archive_all"`, `mode: "purge_all"`), as one of a schema's choices or as a
 * call's argument. Pure; used by the schema signals (policy/schema-signals.ts) and the argument scan
 * (policy/classify.ts), so that a choice and the same value in a call are judged alike.
 */
import type { Risk } from '../types.js';
import { lemma } from './lemma.js';
import { splitName } from './name.js';
import { isStrongVerb, knownWord } from './phrase.js';
import { AMBIGUOUS, DESTRUCTIVE, MUTATING, OUTBOUND, VERB_ONLY } from './words.js';

/** Longest operation value judged word by word (characters); a longer one can ask for anything. */
export const MAX_OPERATION_CHARS = 100;

/** The last word of a category that names kinds of events, not actions (`type: "DeleteEvent"`). */
const EVENT_NOUNS = new Set(['event', 'events', 'type', 'types', 'hook', 'hooks', 'kind', 'trigger', 'activity', 'log']);

/**
 * Where an operation value stands: `operation` (`action`, `op`), `category` (`type`, `kind`, `mode`: a
 * value there names a kind of thing, so only a bare verb, or a destructive verb that leads it
 * (`purge_all`), is an operation), or `method` (an RPC method name such as `eth_sendRawTransaction`).
 */
export type OperationField = 'operation' | 'category' | 'method' | 'generic';

/**
 * Judges one operation value.
 * @param unknownWrites an operation the vocabulary does not know (`unsend`, `deletion`) counts as a
 *   write: true for a call's value; a schema's fixed choices (`ai_automation`) are judged by their words.
 * @returns the risk and why, or undefined when the value asks for nothing that writes.
 */
export function judgeOperation(value: string, field: OperationField, unknownWrites: boolean): { risk: Risk; why: string } | undefined {
  const category = field !== 'operation';
  // A field that may or may not name a function (`fn`, `function`, `then`, `access`): only a verb that
  // destroys, or one that is never a noun, counts (`users.delete`, `deleteUser`; not `LOWER`, `sum`).
  if (field === 'generic') {
    const words = splitName(value.normalize('NFKC').trim().slice(0, MAX_OPERATION_CHARS));
    const last = words[words.length - 1] ?? '';
    const verb = words.find((w) => DESTRUCTIVE.has(w) || VERB_ONLY.has(w) || (OUTBOUND.has(w) && isStrongVerb(w)));
    return verb && !EVENT_NOUNS.has(last)
      ? { risk: DESTRUCTIVE.has(verb) || OUTBOUND.has(verb) ? 'high' : 'medium', why: `is "${value.slice(0, 40)}"` }
      : undefined;
  }
  const v = value.normalize('NFKC').trim();
  if (v.length > MAX_OPERATION_CHARS)
    return category ? undefined : { risk: 'medium', why: `is free text too long to judge (over ${MAX_OPERATION_CHARS} characters): it can ask for anything` };
  if (/[^\x00-\x7f]/.test(v)) return { risk: 'medium', why: `is "${v.slice(0, 40)}", not in the vocabulary (another script)` };
  const words = splitName(v);
  const head = words[0];
  if (head === undefined) return undefined;
  const quoted = `"${v.slice(0, 40)}"`;
  if (field === 'category' && words.length > 1) {
    // `hard_delete`, `users.delete`, `deleteUser`, `sync_and_delete`, `read_write`: a destructive or
    // writing verb in a kind that is not a kind of event (`DeleteEvent` names events).
    const last = words[words.length - 1] as string;
    const verb = words.find((w) => DESTRUCTIVE.has(w) || VERB_ONLY.has(w));
    return verb && !EVENT_NOUNS.has(last) ? { risk: DESTRUCTIVE.has(verb) ? 'high' : 'medium', why: `is ${quoted}` } : undefined;
  }
  // An RPC method is a verb and its object (`chat.postMessage`): a noun-or-verb word leading it is the verb.
  if (field === 'method' && words.length > 1 && AMBIGUOUS.has(words[words.length - 2] ?? '')) return { risk: 'high', why: `is ${quoted}` };
  if (words.some((w) => DESTRUCTIVE.has(w) || OUTBOUND.has(w))) return { risk: 'high', why: `is ${quoted}` };
  if (words.some((w) => MUTATING.has(w) || (!category && AMBIGUOUS.has(w)))) return { risk: 'medium', why: `is ${quoted}` };
  // An operation the vocabulary does not know (`unsend`, `deletion`) is not known to read.
  if (field === 'operation' && unknownWrites && !knownWord(lemma(head, knownWord).base) && !/^\d+$/.test(head))
    return { risk: 'medium', why: `is ${quoted}, an operation the classifier does not know` };
  return undefined;
}
