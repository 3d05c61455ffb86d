/**
 * `lookfirst pilot-status`: a scored checklist of readiness for a pilot, pure over gathered facts. Each
 * item passes or fails (nothing in between: a doubt fails, with the fix), and the score is the items
 * passed over the total. It asks more than `check` does: `check` says whether the gate works; this says
 * whether its evidence and its approvals can be trusted with real people and real writes.
 */
import type { CheckFacts, TrustedHeadFact } from './facts.js';
import { exposedTools } from './tools.js';

/** One item of the checklist. */
export interface PilotItem {
  /** Stable id, e.g. `key`, `log`, `trusted-head`, `writes-covered`, `channel`, `self-approval`, `store`. */
  id: string;
  /** What the item asks, as a short sentence. */
  title: string;
  pass: boolean;
  /** What was found. */
  detail: string;
  /** What to do to pass it; absent when it passes. */
  fix?: string;
}

/** What pilot-status adds to the facts `check` gathers. */
export interface PilotFacts extends CheckFacts {
  /** The `--trusted-head` copy, when given. */
  trustedHead?: TrustedHeadFact;
  /** How many gate processes will share this config's store (`--replicas`, default 1). */
  replicas: number;
}

const MAX_NAMED = 8;
const names = (list: readonly string[]) =>
  list.length <= MAX_NAMED ? list.join(', ') : `${list.slice(0, MAX_NAMED).join(', ')} and ${list.length - MAX_NAMED} more`;

function keyItem(f: PilotFacts): PilotItem {
  const title = 'the audit key is present and private';
  if (!f.key.exists || f.key.error || f.keyValid === false)
    return { id: 'key', title, pass: false, detail: `no usable key at ${f.key.path}`, fix: `${f.cli} keygen --config ${f.config.file}` };
  if (((f.key.mode ?? 0o777) & 0o077) !== 0)
    return {
      id: 'key',
      title,
      pass: false,
      detail: `${f.key.path} has mode 0${(f.key.mode ?? 0).toString(8)}: its group or others can read it`,
      fix: `chmod 600 ${f.key.path}`,
    };
  return { id: 'key', title, pass: true, detail: `${f.key.path}, mode 0${(f.key.mode ?? 0).toString(8)}` };
}

function logItem(f: PilotFacts): PilotItem {
  const title = 'the audit log verifies';
  const verify = `${f.cli} verify-log --config ${f.config.file}`;
  if (f.log.state === 'absent')
    return {
      id: 'log',
      title,
      pass: false,
      detail: `no audit log at ${f.log.path} yet: there is nothing to verify`,
      fix: `start the gate once (${f.cli} serve --config ${f.config.file}), then run pilot-status again`,
    };
  if (f.log.state === 'unreadable') return { id: 'log', title, pass: false, detail: f.log.error ?? 'unreadable', fix: `fix that, then run ${verify}` };
  if (f.log.verdict === 'intact')
    return { id: 'log', title, pass: true, detail: `${f.log.entries ?? 0} entries: signatures, hash chain and signed head check out` };
  return {
    id: 'log',
    title,
    pass: false,
    detail: `verdict ${f.log.verdict}: ${[...f.log.problems, ...f.log.warnings].slice(0, 2).join('; ')}`,
    fix: `run ${verify} and deal with each problem it names (keep the files as evidence)`,
  };
}

function trustedHeadItem(f: PilotFacts): PilotItem {
  const id = 'trusted-head';
  const title = 'a copy of the signed head is kept elsewhere, and the log continues it';
  const head = f.log.headPath;
  const fix = `copy the log's head off this folder (e.g. cp ${head} /safe/place/; from cron, or to another machine), then pass --trusted-head /safe/place/${head.split('/').pop()}`;
  const t = f.trustedHead;
  if (!t) return { id, title, pass: false, detail: 'no --trusted-head given: a log cut or rolled back together with its head would go unnoticed', fix };
  if (!t.exists) return { id, title, pass: false, detail: `${t.path} does not exist`, fix };
  if (t.besideLog) return { id, title, pass: false, detail: `${t.path} is in the log's own folder: whoever can rewrite the log can rewrite it too`, fix };
  if (t.verdict !== 'intact')
    return {
      id,
      title,
      pass: false,
      detail: `the log checked against ${t.path}: ${t.verdict ?? t.error ?? 'no verdict'}`,
      fix: `run ${f.cli} verify-log --config ${f.config.file} --trusted-head ${t.path} and see why`,
    };
  return { id, title, pass: true, detail: `the log continues ${t.path}` };
}

function writesItem(f: PilotFacts): PilotItem {
  const id = 'writes-covered';
  const title = 'every writing tool is covered by a rule or a confident classifier verdict';
  const { tools, missing } = exposedTools(f.config, f.upstreams);
  if (missing.length > 0)
    return {
      id,
      title,
      pass: false,
      detail: `upstream ${missing.join(', ')} could not be listed, so its tools cannot be judged`,
      fix: `run ${f.cli} check --config ${f.config.file} and fix the upstream`,
    };
  const writes = tools.filter((t) => t.classification.kind === 'mutation');
  const unsure = writes.filter((t) => !t.rule && !t.confident).map((t) => t.exposed);
  if (unsure.length > 0)
    return {
      id,
      title,
      pass: false,
      detail: `${unsure.length} of ${writes.length} writing tools are held only because the classifier could not tell what they do: ${names(unsure)}`,
      fix: `add a rule for each under rules.tools in ${f.config.file} (confirm, deny, or allow for a tool you know only reads), e.g. "${unsure[0]}": { action: confirm }`,
    };
  const ruled = writes.filter((t) => t.rule).length;
  return {
    id,
    title,
    pass: true,
    detail: `${tools.length} tools, ${writes.length} writing: ${ruled} by a rule, ${writes.length - ruled} by a confident classifier verdict`,
  };
}

function channelItem(f: PilotFacts): PilotItem {
  const c = f.config.confirm;
  const id = 'channel';
  const title = 'a channel a person can reach is set up';
  const reach = [c.web.enabled && 'the approval page', c.webhook && 'the webhook', c.device && 'paired phones', c.terminal && f.tty && 'the terminal'].filter(
    (x): x is string => typeof x === 'string',
  );
  if (reach.length === 0)
    return {
      id,
      title,
      pass: false,
      detail: c.terminal
        ? 'only confirm.terminal, and this process has no terminal to ask on'
        : 'no channel outside the client: only the client itself can be asked',
      fix: 'enable confirm.web (the approval page), confirm.webhook or confirm.device (a paired phone)',
    };
  return { id, title, pass: true, detail: reach.join(', ') };
}

function selfApprovalItem(f: PilotFacts): PilotItem {
  const c = f.config.confirm;
  const id = 'self-approval';
  const title = "the client cannot approve its own calls (elicitation's self-approval risk)";
  if (c.mode === 'pending') return { id, title, pass: true, detail: 'confirm.mode is pending: the client is never asked' };
  if (!c.elicitation) return { id, title, pass: true, detail: 'confirm.elicitation is false: only a channel outside the client approves' };
  return {
    id,
    title,
    pass: false,
    detail: 'confirm.elicitation is on: an autonomous client can answer the question itself (README, "Who can approve, and how far to trust it")',
    fix: 'set confirm.elicitation: false, and approve on the page, the webhook or a phone',
  };
}

function storeItem(f: PilotFacts): PilotItem {
  const id = 'store';
  const n = f.replicas;
  const title = `the store suits ${n} replica${n === 1 ? '' : 's'}`;
  const s = f.store;
  if (s.kind === 'memory' && n > 1)
    return {
      id,
      title,
      pass: false,
      detail: 'a memory store is one per process: replicas would not share approvals, holds or blocked tools',
      fix: 'set store.kind: postgres with store.url (or sqlite, with every replica on this machine)',
    };
  if (!s.reachable)
    return {
      id,
      title,
      pass: false,
      detail: `the ${s.kind} store cannot be opened: ${s.error ?? 'no answer'}`,
      fix: `run ${f.cli} check --config ${f.config.file}`,
    };
  const detail =
    s.kind === 'memory'
      ? 'memory, one process (a restart forgets waiting approvals)'
      : s.kind === 'sqlite' && n > 1
        ? `sqlite ${s.where ?? ''}: shared only by replicas on this one machine`
        : `${s.kind} ${s.where ?? ''}`;
  return { id, title, pass: true, detail };
}

/** Every item, in the order printed. */
export function pilotItems(f: PilotFacts): PilotItem[] {
  return [keyItem(f), logItem(f), trustedHeadItem(f), writesItem(f), channelItem(f), selfApprovalItem(f), storeItem(f)];
}

/** The score (items passed of the total) and the exit code: 0 when every item passes, 2 when any fails. */
export function scorePilot(items: readonly PilotItem[]): { passed: number; total: number; exitCode: 0 | 2 } {
  const passed = items.filter((i) => i.pass).length;
  return { passed, total: items.length, exitCode: passed === items.length ? 0 : 2 };
}
