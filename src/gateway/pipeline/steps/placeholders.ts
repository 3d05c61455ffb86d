/**
 * Step `placeholders` (privacy filter on): the placeholders in a call's arguments are looked up before
 * anything is decided. The call goes on with the agent's arguments as they are (they are what is
 * decided, shown, hashed and approved: `args_sha256` binds them), and the real values wait in the call's
 * state until the execution (steps/execute.ts) or the read (steps/read.ts) sends them.
 *
 * Toward an upstream under `resolve: never` nothing is looked up: the placeholder text goes. Under `ask`
 * the decision needs a person, who reads which kinds of value would go and to whom (steps/decide.ts).
 * A placeholder this session was not given (made up, expired, another session's, cut short) refuses the
 * call, and nothing runs; after three, the session can resolve none (privacy/filter.ts).
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson, sha256Hex } from '../../../audit/canonical.js';
import type { AuditFieldsOf } from '../../../audit/events.js';
import { placeholderIdsIn } from '../../../privacy/mask.js';
import type { CallState, Step } from '../context.js';
import { denied } from '../outcome.js';

export const placeholders: Step = async (s: CallState) => {
  const privacy = s.deps.privacy;
  const tool = s.tool;
  if (!privacy || !tool) return undefined;
  const mode = tool.upstream.config.resolve ?? 'always';
  const refuse = (reason: string, unknown = 0, locked = false) => {
    // Named like any call, so that the answer and its log entry can be matched.
    const callId = s.input.kind === 'replay' ? s.input.callId : randomUUID();
    const argsSha256 = s.input.kind === 'replay' ? s.input.argsSha256 : shaOf(s.input.params.arguments ?? {});
    s.deps.audit.appendLater({
      event: 'placeholder_refused',
      call_id: callId,
      tool: tool.exposed,
      upstream: tool.upstream.name,
      args_sha256: argsSha256 || undefined,
      unknown,
      locked,
      reason,
    });
    return denied({ call_id: callId, args_sha256: argsSha256, reason });
  };
  if (s.input.kind === 'replay') {
    // The dry run's placeholders were bound to its session, which is gone: its values cannot come back.
    const { ids, attempts } = placeholderIdsIn(s.input.args);
    if (mode !== 'never' && ids.size + attempts > 0)
      return refuse('the recorded arguments carry placeholders of the dry-run session, whose values cannot be put back in a replay; nothing was run');
    return undefined;
  }
  let r: Awaited<ReturnType<typeof privacy.resolve>>;
  try {
    r = await privacy.resolve(s.input.params.arguments ?? {}, mode);
  } catch (err) {
    return refuse(`the placeholders cannot be looked up (${(err as Error).message}); nothing was run`);
  }
  if (r.kind === 'none' || r.kind === 'kept') return undefined;
  if (r.kind === 'refused') return refuse(r.reason, r.unknown, r.locked);
  s.resolved = { args: r.args as Record<string, unknown>, placeholders: r.placeholders, ask: mode === 'ask' };
  return undefined;
};

/** Words for a person: which kinds of real value a call sends, and to whom (`ask`), or stands in for. */
export function disclosureOf(s: CallState): string | undefined {
  const r = s.resolved;
  if (!r || r.placeholders.length === 0 || !s.tool) return undefined;
  const list = r.placeholders.map((p) => `the real ${p.detail} behind [[${p.label}_${p.id}]]`).join(', ');
  return r.ask ? `sends ${list} to ${s.tool.upstream.name}` : `puts back ${list}`;
}

/**
 * The `placeholders_resolved` entry: which placeholders' real values a call sends, and where: ids and
 * kinds, never values. Durable for an execution (written before `execution_started`), behind for a read.
 * @param callId the gated call's id; undefined for a read (which has none).
 * @returns the promise of the durable write, or undefined for a read.
 */
export function resolvedEntry(s: CallState, callId: string | undefined): Promise<unknown> | undefined {
  const r = s.resolved;
  const tool = s.tool;
  if (!r || !tool) return undefined;
  const fields: AuditFieldsOf<'placeholders_resolved'> = {
    event: 'placeholders_resolved',
    call_id: callId,
    tool: tool.exposed,
    upstream: tool.upstream.name,
    placeholders: r.placeholders.map((p) => `${p.label}_${p.id}`).join(','),
  };
  if (callId === undefined) {
    s.deps.audit.appendLater(fields);
    return undefined;
  }
  return s.deps.audit.appendDurable(fields);
}

/** SHA-256 of the arguments' canonical JSON, or '' when they have none (they are refused either way). */
function shaOf(args: unknown): string {
  try {
    return sha256Hex(canonicalJson(args));
  } catch {
    return '';
  }
}
