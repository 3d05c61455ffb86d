/**
 * The audit log read as a ledger of dry-run sessions: which calls a dry run recorded (with the arguments
 * it kept for them) and which of those a later `lookfirst promote` already sent for real. Pure: it reads
 * parsed entries of a log whose signatures and hash chain were verified first (audit/verify), and checks
 * what verification cannot: that each recording is consistent with the call it belongs to.
 */
import { canonicalJson, sha256Hex } from './canonical.js';

/** A call that a dry run recorded instead of executing. */
export interface RecordedCall {
  /** Index of its `dry_run_recorded` entry in the log (0-based, the entry's `seq`). */
  seq: number;
  /** When it was recorded (ms since epoch). */
  ts: number;
  callId: string;
  tool: string;
  upstream: string;
  upstreamTool: string;
  /** The recorded arguments: canonical JSON (RFC 8785), its SHA-256 (hex), and parsed. */
  argsCanonical: string;
  argsSha256: string;
  args: Record<string, unknown>;
  /** Set when untrusted data flowed into it during the dry run (the Rule-of-Two flag, in words). */
  taint?: string;
  /** SHA-256 of the tool definition it was recorded under (gateway/pins.ts). */
  definitionSha?: string;
}

/** One run of `serve --dry-run` (from its `gate_started` entry to the next), with what it recorded. */
export interface DryRunSession {
  /** `seq` of its `gate_started` entry: how `promote --session` names it. */
  startSeq: number;
  startedAt: number;
  calls: RecordedCall[];
  /** Recordings that cannot be replayed, and why (entry number and reason). */
  problems: { seq: number; message: string }[];
}

/** How far a recorded call has been promoted already. */
export interface Promotion {
  /** The call id the replay ran under. */
  callId: string;
  /** Whether it was sent upstream (`execution_started`): then it is never sent again. */
  started: boolean;
  /**
   * Whether what came of it is settled: it ran cleanly (`execution_resolved`), or the block its unclear
   * end put on the tool was lifted by a person (`execution_unblocked` naming it), having looked.
   */
  settled: boolean;
  /** The exposed tool it ran as. */
  tool?: string;
  /**
   * How it ended when not as asked, though settled: a call a rule allowed is settled without a person even
   * when the upstream answered an error, its outcome is unknown or its read-back unclear. Absent when it
   * ran cleanly or a person unlocked its tool, having looked. Such a call is still never sent again, but
   * its session is not "replayed in full", and promote says how it ended.
   */
  notClean?: 'upstream_error' | 'outcome_unknown' | 'readback_failed' | 'readback_unclear';
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/**
 * The dry-run sessions of a log, oldest first; a run that recorded nothing is left out.
 * @param entries the log's entries in order, parsed.
 */
export function dryRunSessions(entries: readonly Record<string, unknown>[]): DryRunSession[] {
  const sessions: DryRunSession[] = [];
  let current: DryRunSession | undefined;
  /** `call_received` entries of the current run: call id → args_sha256. */
  let received = new Map<string, string | undefined>();
  for (const e of entries) {
    const seq = typeof e.seq === 'number' ? e.seq : -1;
    if (e.event === 'gate_started') {
      current = { startSeq: seq, startedAt: typeof e.ts === 'number' ? e.ts : 0, calls: [], problems: [] };
      sessions.push(current);
      received = new Map();
      continue;
    }
    if (e.event === 'call_received' && typeof e.call_id === 'string') received.set(e.call_id, str(e.args_sha256));
    if (e.event !== 'dry_run_recorded' || !current) continue;
    const problem = (message: string) => current?.problems.push({ seq, message });
    const callId = str(e.call_id);
    const tool = str(e.tool);
    const upstream = str(e.upstream);
    const upstreamTool = str(e.upstream_tool);
    const argsCanonical = str(e.args);
    const argsSha256 = str(e.args_sha256);
    if (!callId || !tool || !upstream || !upstreamTool || argsCanonical === undefined || !argsSha256) {
      problem('the recording lacks a field it needs (call_id, tool, upstream, upstream_tool, args, args_sha256)');
      continue;
    }
    if (!received.has(callId) || received.get(callId) !== argsSha256) {
      problem(`no call_received entry with the same call id and args_sha256 precedes it in this run (call ${callId})`);
      continue;
    }
    let args: unknown;
    try {
      args = JSON.parse(argsCanonical);
    } catch {
      problem(`its arguments are not JSON (call ${callId})`);
      continue;
    }
    // The recorded bytes must be exactly the bytes that were hashed: canonical, and matching the hash.
    if (typeof args !== 'object' || args === null || Array.isArray(args) || canonicalJson(args) !== argsCanonical || sha256Hex(argsCanonical) !== argsSha256) {
      problem(`its arguments do not match their args_sha256 (call ${callId})`);
      continue;
    }
    current.calls.push({
      seq,
      ts: typeof e.ts === 'number' ? e.ts : 0,
      callId,
      tool,
      upstream,
      upstreamTool,
      argsCanonical,
      argsSha256,
      args: args as Record<string, unknown>,
      taint: str(e.taint),
      definitionSha: str(e.definition_sha256),
    });
  }
  return sessions.filter((s) => s.calls.length > 0 || s.problems.length > 0);
}

/**
 * Which recorded calls were replayed already: a replay's `call_received` entry names the recorded call in
 * `replay_of`, its `execution_started` entry says it was sent, and `execution_resolved`, or an
 * `execution_unblocked` whose `blocked_call` is that replay (a person unlocked the tool its unclear end
 * blocked), that what came of it is settled. Settling is matched by call id, never by order, so entries
 * of several logs may be given in any order.
 * @returns recorded call id → how far its replay got (the furthest of several attempts).
 */
export function promotions(entries: readonly Record<string, unknown>[]): Map<string, Promotion> {
  const replays = new Map<string, { of: string; tool?: string }>();
  const started = new Set<string>();
  const settled = new Set<string>();
  const unblocked = new Set<string>();
  const notClean = new Map<string, NonNullable<Promotion['notClean']>>();
  for (const e of entries) {
    const callId = str(e.call_id);
    if (e.event === 'call_received' && typeof e.replay_of === 'string' && callId) replays.set(callId, { of: e.replay_of, tool: str(e.tool) });
    else if (e.event === 'execution_started' && callId) started.add(callId);
    else if (e.event === 'execution_resolved' && callId) settled.add(callId);
    else if (e.event === 'execution_unblocked' && typeof e.blocked_call === 'string') {
      settled.add(e.blocked_call);
      unblocked.add(e.blocked_call);
    } else if (callId && e.event === 'executed' && e.outcome === 'upstream_error') notClean.set(callId, 'upstream_error');
    else if (callId && e.event === 'execution_failed') notClean.set(callId, 'outcome_unknown');
    else if (callId && e.event === 'readback' && (e.outcome === 'failed' || e.outcome === 'unclear'))
      notClean.set(callId, e.outcome === 'failed' ? 'readback_failed' : 'readback_unclear');
  }
  const out = new Map<string, Promotion>();
  for (const [callId, r] of replays) {
    const p: Promotion = { callId, started: started.has(callId), settled: settled.has(callId), tool: r.tool };
    // A person who unlocked its tool has looked at the target: that settles how it ended.
    const ended = unblocked.has(callId) ? undefined : notClean.get(callId);
    if (ended) p.notClean = ended;
    const had = out.get(r.of);
    // The attempt that was sent wins; of several unsent ones, the first is kept.
    if (!had || (p.started && !had.started)) out.set(r.of, p);
  }
  return out;
}
