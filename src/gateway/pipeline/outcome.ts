/**
 * The one exit of a tool call: every step ends the call with a typed `Outcome`, and only
 * {@link toResult} turns it into the wire result (the same for both protocol generations: the 2026 face
 * sends the same `Result`). The verdict travels beside the outcome, so nothing reads it back out of
 * `_meta` (the gateway records it for the approval page; promote prints it). The privacy filter wraps
 * this exit.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { Verdict } from '../../types.js';
import type { CatalogueTool } from '../catalogue.js';
import { notExecutedResult } from '../stand-in.js';
import { withVerdict } from '../verdict.js';

/**
 * How a call ended:
 * - `forwarded`: an allowed read; the upstream's result goes back untouched (no verdict);
 * - `executed`: the call ran; the upstream's result goes back with the verdict;
 * - `denied`: nothing was sent; the text says so and that a retry is safe;
 * - `refused`: an error result with its own words (pending, unknown outcome, a lock that stays);
 * - `not-executed`: a success-shaped answer for a call that did not run (dry run, unlocked);
 * - `asked`: a 2026-07-28 `input_required` result carrying the approval question.
 */
export type Outcome =
  | { kind: 'forwarded'; result: Result }
  | { kind: 'executed'; result: Result; verdict: Verdict }
  | { kind: 'denied'; verdict: Verdict }
  | { kind: 'refused'; verdict: Verdict; text: string; structured?: Record<string, unknown> }
  | { kind: 'not-executed'; verdict: Verdict; text: string }
  | { kind: 'asked'; result: Result };

/** `_meta` key of a refusal's own structured answer (pending mode's `pending_user_confirmation`, a failed check). */
export const ANSWER_KEY = 'lookfirst_answer';

/** What the exit needs to know of the tool: its name, and its outputSchema (the client validates against it). */
export type ExitTool = Pick<CatalogueTool, 'exposed' | 'hasOutputSchema' | 'definition'>;

/** The verdict of an outcome, when the gate gave one. */
export function verdictOfOutcome(o: Outcome): Verdict | undefined {
  return 'verdict' in o ? o.verdict : undefined;
}

/**
 * The wire result of an outcome.
 * @param tool the tool called; absent when the call ended before its tool was known.
 */
export function toResult(o: Outcome, tool: ExitTool | undefined): Result {
  const name = tool?.exposed ?? 'the tool';
  const schema = tool?.hasOutputSchema ?? false;
  switch (o.kind) {
    case 'forwarded':
    case 'asked':
      return o.result;
    case 'executed':
      return withVerdict(o.result, o.verdict, schema);
    case 'denied':
      return errorResult(denialText(name, o.verdict.reason), o.verdict, schema);
    case 'refused': {
      const r = errorResult(o.text, o.verdict, schema);
      if (!o.structured) return r;
      // Beside the verdict, in `_meta` always; in structuredContent only when the tool declares no output
      // schema (a client validates structuredContent against it even on an error result: SDK v1 client).
      r._meta = { ...r._meta, [ANSWER_KEY]: o.structured };
      if (!schema) r.structuredContent = { ...o.structured, ...(r.structuredContent as Record<string, unknown>) };
      return r;
    }
    case 'not-executed':
      return tool ? notExecutedResult(tool, o.text, o.verdict) : errorResult(o.text, o.verdict, false);
  }
}

/** An error result for a call that was not executed, or whose outcome is unknown. */
function errorResult(text: string, verdict: Verdict, hasOutputSchema: boolean): Result {
  return withVerdict({ content: [{ type: 'text', text }], isError: true }, verdict, hasOutputSchema);
}

/** Text of a denial: what was not executed, why, and that a retry is safe. */
export function denialText(tool: string, reason: string): string {
  return `lookfirst: ${tool} was NOT executed: ${reason}. Nothing was sent to the upstream, so retrying is safe once the cause is fixed.`;
}

/** Text when a call was sent but no answer came back: the effect is unknown. */
export function unknownOutcomeText(tool: string, reason: string): string {
  return `lookfirst: ${tool} was sent to the upstream, but no answer came back (${reason}). It may or may not have taken effect: check the target system before retrying. lookfirst did not and will not re-send it.`;
}

/** A denial outcome: nothing was sent. */
export function denied(verdict: Omit<Verdict, 'outcome'>): Outcome {
  return { kind: 'denied', verdict: { retry_safe: true, ...verdict, outcome: 'denied' } };
}
