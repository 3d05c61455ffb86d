/**
 * A client request under the privacy filter (gateway.ts `route`): placeholders in a non-tool request go
 * back only where every upstream resolves them (`always`; a tool call resolves its own in the pipeline,
 * gateway/pipeline/steps/placeholders.ts), and whatever comes back (the result, an error, progress) is
 * masked in the session's placeholders before the client sees it.
 *
 * Security posture: fail closed. A message that cannot be masked (its placeholders cannot be stored, or it
 * is nested too deep to walk) is withheld: the client gets an error saying so, never the clear text.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import type { PrivacySession } from '../privacy/filter.js';
import { ErrorCode, plainMessage, toWireError, WireError } from './wire-error.js';

/** What routing needs of a request's context here: its progress relay (gateway.ts `RouteContext`). */
interface WithProgress {
  progress?: (p: Record<string, unknown>) => void;
}

/** Routes one request as it would go without the filter. */
export type ClearRoute<C> = (method: string, params: Record<string, unknown> | undefined, ctx: C) => Promise<Result>;

/**
 * Routes one request of a session under the privacy filter.
 * @param resolveAll every upstream resolves placeholders (`always`): only then does a non-tool request
 *   (a resource URI, prompt or completion arguments, which have no person to ask) get the real values.
 * @throws WireError with a masked message; InvalidParams for placeholders this session was not given;
 *   InternalError when the answer cannot be masked (it is withheld).
 */
export async function routeMasked<C extends WithProgress>(
  privacy: PrivacySession,
  method: string,
  params: Record<string, unknown> | undefined,
  ctx: C,
  resolveAll: boolean,
  clear: ClearRoute<C>,
): Promise<Result> {
  const relay = ctx.progress;
  const progress = relay && ((p: Record<string, unknown>) => void privacy.mask('notifications/progress', p).then(relay, () => {}));
  let result: Result;
  try {
    const sent = method === 'tools/call' || !params ? params : await resolveForwarded(privacy, params, resolveAll);
    result = await clear(method, sent, { ...ctx, progress });
  } catch (err) {
    const wire = toWireError(err);
    const message = await privacy
      .maskText(wire.message)
      .catch((e: unknown) => `the upstream answered with an error (its text was withheld: ${withheldWhy(e)})`);
    const data = wire.data === undefined ? undefined : await privacy.mask(method, wire.data).catch(() => undefined);
    throw new WireError(wire.code, message, data);
  }
  try {
    return await privacy.mask(method, result);
  } catch (err) {
    const ran = method === 'tools/call' ? ' If it was a write, it may have run: check the approval page or the audit log before calling again.' : '';
    throw new WireError(ErrorCode.InternalError, `lookfirst withheld the answer: ${withheldWhy(err)}.${ran}`);
  }
}

/**
 * Why the privacy filter withheld a message: its placeholders could not be stored, or it could not be
 * walked at all (nested too deep to mask).
 */
export function withheldWhy(err: unknown): string {
  if (err instanceof RangeError) return 'the privacy filter could not check it (nested too deep to mask)';
  return `the privacy filter could not store its placeholders (${plainMessage(err)})`;
}

/** @throws WireError InvalidParams when the params carry placeholders this session was not given (nothing is forwarded). */
async function resolveForwarded(privacy: PrivacySession, params: Record<string, unknown>, resolveAll: boolean): Promise<Record<string, unknown>> {
  const r = await privacy.resolve(params, resolveAll ? 'always' : 'never');
  if (r.kind === 'refused') throw new WireError(ErrorCode.InvalidParams, r.reason);
  return r.kind === 'resolved' ? (r.args as Record<string, unknown>) : params;
}
