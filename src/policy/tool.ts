/**
 * The verdict on a tool definition, before any call: its name's grammar, its description's first verb,
 * and its input and output schemas, combined deny-wins. Annotations are applied later, with the arguments
 * (policy/classify.ts `combine`), so that a hint never outweighs what a call's arguments show. Pure; the
 * gateway computes it once per definition (gateway/catalogue.ts).
 *
 * - Any signal that says write makes a mutation, with the highest risk named.
 * - Otherwise a signal that says read, with no doubt left, makes a read: the name's verb, or the
 *   description's when the name leaves a doubt (`git_log`: "Shows the commit logs").
 * - Otherwise (unknown words, noun-or-verb words no other signal settles) it is a mutation, and the reason
 *   names the word.
 */
import type { Risk, ToolAnnotations } from '../types.js';
import { judgeDescription } from './description.js';
import { type NameVerdict, nameWords, splitName } from './name.js';
import { judgeNameWords, type PhraseSignal } from './phrase.js';
import { higher } from './rank.js';
import { judgeInputSchema, judgeOutputSchema } from './schema-signals.js';
import { AMBIGUOUS, DETERMINERS, LIGHT_VERBS, SENSITIVE } from './words.js';

/** Description verbs that say what comes back, not what the call does. */
const RESULT_VERBS = new Set(['return', 'output', 'provide', 'give', 'yield', 'respond', 'emit']);

/** What an action leaves behind ("Returns the confirmation receipt", "Returns stdout"): not data read. */
const RESULT_NOUNS = new Set(
  'receipt confirmation id ids identifier sid stdout stderr output result reference number timestamp hash txid status code exit'.split(' '),
);

/** The parts of a tool definition the classifier reads (MCP `Tool`, 2025-06-18 §tools). */
export interface ToolDefinitionLike {
  name: string;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  outputSchema?: unknown;
  annotations?: ToolAnnotations | null;
}

/**
 * The verdict on a tool definition (annotations aside): `benign` when nothing but bookkeeping verbs,
 * unknown words or noun-or-verb words say write, so that an honest `readOnlyHint: true` may lower it.
 * Reasons put the deciding signal first.
 * @param def the upstream's definition (its own name, without the gate's `<upstream>__` prefix).
 * @param prefixes the upstream's namespace prefixes (policy/name.ts namespacePrefixes).
 */
export function judgeTool(def: ToolDefinitionLike, prefixes: ReadonlySet<string> = new Set()): NameVerdict {
  // A definition from an upstream is untrusted data: a name that is not a string is no name.
  const toolName = typeof def.name === 'string' ? def.name : '';
  const words = nameWords(toolName, prefixes);
  const name: PhraseSignal =
    words.length === 0 ? { kind: 'write', risk: 'medium', soft: false, why: 'the tool has no name' } : judgeNameWords(words, splitName(toolName));
  const signals: PhraseSignal[] = [name];
  const described = typeof def.description === 'string' && def.description.trim() !== '';
  if (described) signals.push(judgeDescription(def.description as string));
  // A title that names a destructive action ("Delete all data") counts; the rest of a title says what
  // the name says.
  // A title that names an action of risk ("Delete all data", "Refund payment", "Email all customers")
  // counts; a bookkeeping or light verb in it ("Run read-only query") says no more than the name does.
  // Only a short title reads as a name; a long one is a description, and the description is judged.
  const titleWords = typeof def.title === 'string' ? splitName(def.title) : [];
  if (titleWords.length > 0 && titleWords.length <= 6) {
    const words = titleWords;
    const t = judgeNameWords(words);
    const opener = words[0] ?? '';
    if (t.kind === 'write' && !t.soft && !LIGHT_VERBS.has(opener)) signals.push({ ...t, why: t.why.replace(/^name/, 'title') });
    // "Email all customers", "Charge card": a noun-or-verb word of high risk with an object of risk.
    else if (
      AMBIGUOUS.get(opener) === 'high' &&
      (DETERMINERS.has(words[1] ?? '') || SENSITIVE.has(words[1] ?? '') || SENSITIVE.has((words[1] ?? '').replace(/s$/, '')))
    )
      signals.push({ kind: 'write', risk: 'high', soft: false, why: `title opens with the verb "${opener}"` });
  }
  const input = judgeInputSchema(def.inputSchema);
  if (input) signals.push(input);
  const output = judgeOutputSchema(def.outputSchema);
  if (output) signals.push(output);

  const writes = signals.filter((s): s is PhraseSignal & { kind: 'write' } => s.kind === 'write');
  if (writes.length > 0) {
    const risk = writes.reduce((r, s) => higher(r, s.risk), writes[0]?.risk ?? 'medium');
    return { kind: 'mutation', risk, reasons: writes.map((s) => s.why), benign: writes.every((s) => s.soft) };
  }
  const reads = signals.filter((s) => s.kind === 'read');
  const doubts = signals.filter((s): s is PhraseSignal & { kind: 'doubt' } => s.kind === 'doubt');
  // The name reads, or leaves a doubt the description settles; a description that leaves a doubt
  // (no verb the classifier knows) does not undo a name that reads.
  const nameReads = name.kind === 'read';
  const desc = described ? signals[1] : undefined;
  // A doubt the name leaves is settled by a description that reads, except: a noun-or-verb word of high
  // risk (`transfer_funds`, `email_user`, `bash`) is never settled; and an unknown word is not settled by
  // a description of what an action leaves behind ("Returns the confirmation receipt", "Returns stdout").
  const settles =
    desc?.kind === 'read' &&
    !(name.kind === 'doubt' && name.risk === 'high') &&
    !(name.kind === 'doubt' && desc.head !== undefined && RESULT_VERBS.has(desc.head) && RESULT_NOUNS.has(desc.object ?? ''));
  const descReads = settles;
  if (nameReads || descReads) return { kind: 'read-only', risk: 'low', reasons: reads.map((s) => s.why), benign: true };
  const risk = doubts.reduce<Risk>((r, s) => higher(r, s.risk), 'medium');
  return {
    kind: 'mutation',
    risk,
    reasons: [...doubts.map((s) => s.why), 'what is not known to read counts as a change'],
    // A noun-or-verb word of high risk (`transfer_funds`, `email_user`, `call_phone`) is too likely a
    // verb for a readOnlyHint to outweigh it.
    benign: doubts.every((s) => s.risk !== 'high'),
  };
}
