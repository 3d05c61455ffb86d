/**
 * What `lookfirst promote` prints: per recorded call its effect, the policy's word on it, and what came
 * of it; then a summary line. `--json` prints the same report as one JSON object.
 */
import type { RecordedCall } from '../../audit/ledger.js';
import type { Config } from '../../config/load.js';
import { summarizeCall } from '../../confirm/summary.js';
import { oneLine } from '../../confirm/visible.js';
import { classifyCall } from '../../policy/classify.js';
import { effectOf } from '../../policy/effect.js';
import { compilePolicy, decide } from '../../policy/evaluate.js';
import type { ToolAnnotations } from '../../types.js';
import { paint } from '../output.js';

/**
 * One recorded call in the report. `status`: `would_replay` (to be sent), `would_refuse` (a deny rule
 * refuses it), `already_replayed` (an earlier promote sent it), `executed` (sent now, read back clean),
 * `sent_unclear` (an earlier promote sent it and it did not end cleanly: its tool stays blocked until a
 * person unlocks it, and nothing after it is replayed before that),
 * `unclear` (sent now; the upstream erred or the read-back did not confirm it), `refused` (not sent:
 * denied by a rule or a person, or its tool is gone or blocked), `not_replayed` (the replay stopped
 * before it).
 */
export interface PromoteLine {
  call_id: string;
  tool: string;
  /** What it does, in words (its effect, else the tool and its arguments). */
  preview: string;
  risk: string;
  status: 'would_replay' | 'would_refuse' | 'already_replayed' | 'sent_unclear' | 'executed' | 'unclear' | 'refused' | 'not_replayed';
  /** Who must approve it: `--yes`, or a person (always for a tainted call). */
  approval?: string;
  taint?: string;
  replay_call_id?: string;
  readback?: string;
  reason?: string;
}

/** The whole report (`--json` prints it as is). */
export interface PromoteReport {
  log: string;
  entries: number;
  /**
   * The session replayed: `seq` of its `gate_started` entry, when it started (ISO 8601), and `replayed`
   * when an earlier promote already sent every call it recorded (it is then shown, never sent again).
   */
  session?: { start_seq: number; started_at: string; replayed?: true };
  /** Every session of the log that recorded calls, by start entry. */
  sessions: number[];
  /** The sessions an earlier promote replayed in full (never the default; named, they send nothing). */
  replayed_sessions: number[];
  dry_run: boolean;
  lines: PromoteLine[];
  /** The command that replays exactly this session (printed after a --dry-run plan). */
  command?: string;
}

/**
 * The plan line of a recorded call, judged by name, arguments, the config's rules and the annotations
 * pinned for the tool (the real replay judges it again on what the upstream lists then).
 */
export function describeRecorded(rec: RecordedCall, config: Config, yes: boolean, annotations?: ToolAnnotations): PromoteLine {
  const effect = effectOf(rec.upstreamTool, rec.args);
  const preview = effect ? oneLine(`${rec.tool}: ${effect}`) : summarizeCall(rec.tool, rec.args);
  const decision = decide(compilePolicy(config.rules), rec.tool, classifyCall(rec.upstreamTool, rec.args, annotations));
  const line: PromoteLine = {
    call_id: rec.callId,
    tool: rec.tool,
    preview,
    risk: decision.classification?.risk ?? 'high',
    status: decision.action === 'deny' ? 'would_refuse' : 'would_replay',
    approval: rec.taint ? 'a person (tainted: --yes does not cover it)' : yes ? '--yes' : 'a person',
    taint: rec.taint,
  };
  if (decision.action === 'deny') line.reason = `denied by ${decision.reason}; --yes never overrides a deny rule`;
  return line;
}

const MARK: Record<PromoteLine['status'], [string, 'green' | 'yellow' | 'red' | 'dim']> = {
  would_replay: ['→ would replay', 'yellow'],
  would_refuse: ['✖ would be refused', 'red'],
  already_replayed: ['✔ already replayed', 'dim'],
  sent_unclear: ['⚠ sent before, unclear', 'red'],
  executed: ['✔ executed', 'green'],
  unclear: ['⚠ executed, unclear', 'red'],
  refused: ['✖ not executed', 'red'],
  not_replayed: ['· not replayed', 'dim'],
};

/** Prints the report: human lines on stdout (summary last), or one JSON object. */
export function printPromote(report: PromoteReport, json: boolean): void {
  const out = process.stdout;
  if (json) {
    out.write(`${JSON.stringify(report)}\n`);
    return;
  }
  if (!report.session) {
    const all = report.replayed_sessions;
    out.write(
      all.length > 0
        ? `every dry-run session in ${report.log} was already replayed (entr${all.length === 1 ? 'y' : 'ies'} ${all.join(', ')}; ${report.entries} entries verified): nothing to promote, and nothing is executed twice. See one with --session ${all.at(-1)} --dry-run\n`
        : `no dry-run calls are recorded in ${report.log} (${report.entries} entries verified): nothing to promote\n`,
    );
    return;
  }
  out.write(
    `${report.log}: verified (${report.entries} entries). Dry-run session from ${report.session.started_at} (entry ${report.session.start_seq}), ${report.lines.length} recorded call${report.lines.length === 1 ? '' : 's'}\n`,
  );
  if (report.session.replayed) out.write(`This session was already replayed in full by an earlier promote: nothing is sent again.\n`);
  const others = report.sessions.filter((s) => s !== report.session?.start_seq);
  const open = others.filter((s) => !report.replayed_sessions.includes(s));
  const done = others.filter((s) => report.replayed_sessions.includes(s));
  if (open.length > 0)
    out.write(
      `Other dry-run sessions in this log start at entr${open.length === 1 ? 'y' : 'ies'} ${open.join(', ')}; promote one with --session ${open.at(-1)}.\n`,
    );
  if (done.length > 0)
    out.write(`Already replayed in full: the session${done.length === 1 ? '' : 's'} at entr${done.length === 1 ? 'y' : 'ies'} ${done.join(', ')}.\n`);
  report.lines.forEach((l, i) => {
    const [mark, color] = MARK[l.status];
    out.write(`${String(i + 1).padStart(3)}. ${paint(out, color, mark)}  ${l.preview}  [risk ${l.risk}]\n`);
    if (l.taint) out.write(`     ${paint(out, 'yellow', l.taint)}\n`);
    if (l.status === 'would_replay') out.write(`     approved by: ${l.approval}\n`);
    if (l.readback && l.status !== 'would_replay') out.write(`     read-back: ${l.readback}\n`);
    if (l.reason) out.write(`     ${l.reason}\n`);
  });
  const count = (s: PromoteLine['status']) => report.lines.filter((l) => l.status === s).length;
  const summary = report.dry_run
    ? `would replay ${count('would_replay')}, would refuse ${count('would_refuse')}, already replayed ${count('already_replayed')}${count('sent_unclear') > 0 ? `, sent before and unclear ${count('sent_unclear')}` : ''}; nothing was executed (--dry-run)`
    : `${count('executed')} executed, ${count('unclear') + count('sent_unclear')} unclear, ${count('refused') + count('would_refuse')} refused, ${count('not_replayed')} not replayed, ${count('already_replayed')} already replayed before`;
  out.write(`${summary}\n`);
  if (report.dry_run && report.command && report.lines.some((l) => l.status === 'would_replay' || l.status === 'sent_unclear'))
    out.write(`To replay exactly this session: ${report.command} [--yes]\n`);
}
