/**
 * Tools a server author declared through the library (`createGatedServer`, src/library/): the author's
 * own server, so its declarations are trusted where an upstream's annotations are only hints. A `read`
 * is read-only (allowed, the fast path); a `write` is always a mutation whose risk is the author's
 * `risk(args)`, whose card text is `preview(args)`, and whose read-back is the author's function.
 *
 * Fail closed, said once here: a write whose arguments its schema refuses is denied before any question
 * (`declaredArgsProblem`, consulted by pipeline/steps/decide.ts: nothing to approve); a risk function that
 * throws, answers something that is not a risk, or gets arguments its schema refuses gives `high`; a preview that throws gives the generic summary plus a
 * note (the question is never skipped); a read-back that throws, times out or answers something else is
 * `unclear` (the tool is blocked until a person looks). What the author's functions say reaches people as
 * one line with hidden and control characters shown (`\uXXXX`), never raw.
 *
 * The declarations travel on the in-process upstream (gateway/upstream.ts `InProcessUpstream`) into the
 * catalogue (`CatalogueTool.declared`), where the decision, the card's summary and the read-back find
 * them: no state outside the gate that runs them.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { oneLine } from '../confirm/visible.js';
import type { Classification, Risk } from '../types.js';

/** A read-back's outcome as the author's function may give it. */
export type DeclaredReadbackOutcome = 'ok' | 'failed' | 'unclear';

/** One tool as its author declared it. Arguments are the call's JSON object, exactly as approved. */
export interface DeclaredTool {
  kind: 'read' | 'write';
  /** Checks the arguments against the tool's schema: a problem in words, or undefined when they fit. */
  validate?: (args: Record<string, unknown>) => string | undefined;
  /** Writes: the risk of this call. */
  risk?: (args: Record<string, unknown>) => unknown;
  /** Writes: what a person reads on the card, e.g. `Send 120.00 EUR to DE89… (Alice)`. */
  preview?: (args: Record<string, unknown>) => unknown;
  /** Writes: after execution, whether the effect is there (the result is the tool's result as the gate got it). */
  readback?: (args: Record<string, unknown>, result: Result) => unknown;
}

/** Longest preview shown (characters); a longer one is cut with an ellipsis. */
export const MAX_PREVIEW_CHARS = 500;

const RISKS: ReadonlySet<string> = new Set(['low', 'medium', 'high']);

/** What an author's function threw, in words: cut, on one line, and never a throw itself (a hostile toString). */
function errorText(err: unknown): string {
  let m: string;
  try {
    m = String(err instanceof Error ? err.message : err);
  } catch {
    m = 'its error could not be read';
  }
  return oneLine(m.length > 120 ? `${m.slice(0, 119)}…` : m);
}

/**
 * The classification of one call of a declared tool: reads are read-only and low; writes are mutations
 * at the risk `risk(args)` gives.
 * @returns high risk, with the reason, when the arguments do not fit the schema or the risk function
 *   throws or answers something other than `low`, `medium` or `high`.
 */
export function declaredClassification(declared: DeclaredTool, args: unknown): Classification {
  const obj = (typeof args === 'object' && args !== null && !Array.isArray(args) ? args : {}) as Record<string, unknown>;
  if (declared.kind === 'read') return { kind: 'read-only', risk: 'low', reasons: ['declared a read by the server'] };
  const problem = safeValidate(declared, obj);
  if (problem)
    return { kind: 'mutation', risk: 'high', reasons: [`the arguments do not fit the tool's schema (${problem})`, 'declared a write by the server'] };
  if (!declared.risk) return { kind: 'mutation', risk: 'high', reasons: ['declared a write by the server, without a risk function'] };
  let risk: unknown;
  try {
    risk = declared.risk(obj);
  } catch (err) {
    return { kind: 'mutation', risk: 'high', reasons: [`the server's risk function failed (${errorText(err)}): high`, 'declared a write by the server'] };
  }
  if (typeof risk !== 'string' || !RISKS.has(risk))
    return {
      kind: 'mutation',
      risk: 'high',
      reasons: ["the server's risk function did not answer low, medium or high: high", 'declared a write by the server'],
    };
  return { kind: 'mutation', risk: risk as Risk, reasons: [`the server rates this call ${risk}`, 'declared a write by the server'] };
}

/**
 * Why a call of a declared write cannot be asked about: its arguments do not fit the tool's own schema.
 * Such a call would fail in the handler anyway, and a card built from arguments the preview cannot read
 * asks a person to approve something nobody can describe: it is refused before any question (fail closed,
 * nothing to approve).
 * @returns the schema's problem in words (one line), or undefined when the arguments fit (or the tool is a
 *   read, or declares no zod schema to check against).
 */
export function declaredArgsProblem(declared: DeclaredTool, args: unknown): string | undefined {
  if (declared.kind !== 'write') return undefined;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return declared.validate ? 'the arguments must be an object' : undefined;
  const problem = safeValidate(declared, args as Record<string, unknown>);
  return problem === undefined ? undefined : oneLine(problem.length > 300 ? `${problem.slice(0, 299)}…` : problem);
}

function safeValidate(declared: DeclaredTool, args: Record<string, unknown>): string | undefined {
  if (!declared.validate) return undefined;
  try {
    return declared.validate(args);
  } catch (err) {
    return `the check failed: ${errorText(err)}`;
  }
}

/**
 * The card text of a declared write: the author's preview, on one line and at most
 * `MAX_PREVIEW_CHARS`, or a note saying why there is none.
 * @returns `{ text }` with the preview, or `{ note }` when the preview threw or answered no text (the
 *   caller shows its generic summary with the note).
 */
export function declaredPreviewText(declared: DeclaredTool, args: Record<string, unknown>): { text: string } | { note: string } | undefined {
  if (declared.kind !== 'write' || !declared.preview) return undefined;
  let text: unknown;
  try {
    text = declared.preview(args);
  } catch (err) {
    return { note: `the server's preview failed (${errorText(err)})` };
  }
  if (typeof text !== 'string' || text.trim() === '') return { note: "the server's preview gave no text" };
  return { text: text.length > MAX_PREVIEW_CHARS ? `${text.slice(0, MAX_PREVIEW_CHARS - 1)}…` : text };
}

/** A declared read-back's verdict, as the readback step records it. */
export interface DeclaredReadbackCheck {
  readback: DeclaredReadbackOutcome;
  detail?: string;
}

/**
 * Runs the author's read-back after the write executed, bounded by `timeoutMs`.
 * @returns the author's outcome (and detail); `unclear` when it throws, times out or answers anything
 *   but `ok`, `failed`, `unclear` or `{ outcome, detail? }`; undefined when the tool declares none.
 */
export async function runDeclaredReadback(
  declared: DeclaredTool,
  args: Record<string, unknown>,
  result: Result,
  timeoutMs: number,
): Promise<DeclaredReadbackCheck | undefined> {
  const fn = declared.readback;
  if (declared.kind !== 'write' || !fn) return undefined;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), timeoutMs);
  });
  let answer: unknown;
  try {
    answer = await Promise.race([Promise.resolve().then(() => fn(args, result)), timedOut]);
  } catch (err) {
    return { readback: 'unclear', detail: `the server's read-back failed (${errorText(err)})` };
  } finally {
    clearTimeout(timer);
  }
  if (answer === 'timeout') return { readback: 'unclear', detail: `the server's read-back did not answer within ${timeoutMs} ms` };
  const outcome = typeof answer === 'string' ? answer : typeof answer === 'object' && answer !== null ? (answer as { outcome?: unknown }).outcome : undefined;
  const detail = typeof answer === 'object' && answer !== null ? (answer as { detail?: unknown }).detail : undefined;
  if (outcome !== 'ok' && outcome !== 'failed' && outcome !== 'unclear')
    return { readback: 'unclear', detail: "the server's read-back did not answer ok, failed or unclear" };
  // Shown on the page, in the log and to the agent: one line, nothing hidden, and cut like a preview.
  return { readback: outcome, detail: typeof detail === 'string' ? oneLine(detail.slice(0, MAX_PREVIEW_CHARS)) : undefined };
}
