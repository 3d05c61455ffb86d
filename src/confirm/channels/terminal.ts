/**
 * The terminal channel (`confirm.terminal: true`): for `lookfirst serve` started by hand, it asks on the
 * controlling terminal (`/dev/tty`), never on stdin/stdout, which carry MCP. Only an explicit `y` or
 * `yes` approves; Enter, anything else, end of input, no terminal, or the timeout is No. Prompts are
 * shown one at a time; a call decided elsewhere (page, webhook) or withdrawn leaves the terminal with a
 * line that says so. The actor is the OS user running the gate (trust `local-terminal`).
 */
import { openSync } from 'node:fs';
import { userInfo } from 'node:os';
import { createInterface, type Interface } from 'node:readline';
import { ReadStream, WriteStream } from 'node:tty';
import { type Clock, systemClock } from '../../clock.js';
import type { Decider, Evidence } from '../../types.js';
import type { ApprovalRequest, OutOfBandChannel } from '../channel.js';
import { lookalikeLines } from '../lookalike.js';
import type { PendingApprovals } from '../pending.js';
import { oneLine, showHidden, showHiddenInJson } from '../visible.js';

/** A terminal to ask on: lines in, text out. */
export interface TerminalPort {
  write(text: string): void;
  /** The next line typed, or `undefined` at end of input or when `signal` aborts. */
  readLine(signal: AbortSignal): Promise<string | undefined>;
}

/**
 * Opens the controlling terminal.
 * @returns undefined when the process has none (started by an MCP client, a service, CI).
 */
export function openControllingTerminal(path = '/dev/tty'): TerminalPort | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r+');
  } catch {
    return undefined;
  }
  const input = new ReadStream(fd);
  const output = new WriteStream(fd);
  // The gate must exit when the client leaves, whether or not anyone is typing.
  input.unref();
  const rl: Interface = createInterface({ input, terminal: false });
  const lines: string[] = [];
  const waiters: ((line: string | undefined) => void)[] = [];
  let ended = false;
  rl.on('line', (line) => {
    const w = waiters.shift();
    if (w) w(line);
    else lines.push(line);
  });
  rl.on('close', () => {
    ended = true;
    for (const w of waiters.splice(0)) w(undefined);
  });
  return {
    write: (text) => output.write(text),
    readLine(signal) {
      // Type-ahead typed before the question was shown must not answer it.
      lines.length = 0;
      if (ended || signal.aborted) return Promise.resolve(undefined);
      return new Promise((resolve) => {
        const onLine = (line: string | undefined) => {
          signal.removeEventListener('abort', onAbort);
          resolve(line);
        };
        const onAbort = () => {
          const i = waiters.indexOf(onLine);
          if (i >= 0) waiters.splice(i, 1);
          resolve(undefined);
        };
        waiters.push(onLine);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}

/** A diff line in green or red on a terminal, plain under NO_COLOR (https://no-color.org). */
function colorDiffLine(line: string): string {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '') return line;
  if (line.startsWith('+') && !line.startsWith('+++')) return `\x1b[32m${line}\x1b[0m`;
  if (line.startsWith('-') && !line.startsWith('---')) return `\x1b[31m${line}\x1b[0m`;
  return line;
}

/**
 * The question as printed: every line escaped, arguments in full.
 * @param clock the time source for the seconds left (tests inject one).
 */
export function terminalPrompt(req: ApprovalRequest, clock: Clock = systemClock): string {
  const { call } = req;
  const what =
    req.purpose === 'unlock'
      ? `UNLOCK ${oneLine(call.tool)} (approving runs nothing)`
      : req.purpose === 'definition'
        ? `ACCEPT THE NEW DEFINITION of ${oneLine(call.tool)} on ${call.upstream}`
        : `${oneLine(call.tool)} on ${call.upstream}`;
  const lines = [
    '',
    `── lookfirst holds a call: ${what}`,
    `   risk ${req.risk ?? 'medium'}${req.riskReason ? ` (${req.riskReason})` : ''}; asked by ${oneLine(req.client ?? 'the client')}`,
    ...lookalikeLines(req.lookalikes ?? []).map((l) => `   WARNING ${l}`),
    `   ${oneLine(req.summary)}`,
    `   arguments (sha256 ${call.argsSha256.slice(0, 16)}…):`,
    ...showHiddenInJson(JSON.stringify(call.args, null, 2))
      .split('\n')
      .map((l) => `   ${l}`),
    ...(req.diff
      ? [
          '   what the file would become:',
          ...showHidden(req.diff)
            .split('\n')
            .map((l) => `   ${colorDiffLine(l)}`),
        ]
      : []),
    `   ${Math.max(0, Math.round((req.deadlineMs - clock.nowMs()) / 1000))} s to decide. Approve? [y/N] `,
  ];
  return lines.join('\n');
}

/** Options of the terminal channel. */
export interface TerminalChannelOptions {
  enabled: boolean;
  pending: PendingApprovals;
  /** Opens the terminal lazily, once; undefined means there is none. */
  open?: () => TerminalPort | undefined;
  user?: string;
  /** The time source for the seconds left; systemClock when omitted. */
  clock?: Clock;
}

/** The terminal channel. */
export function createTerminalChannel(opts: TerminalChannelOptions): OutOfBandChannel {
  let port: TerminalPort | undefined | null = null;
  const terminal = () => {
    if (port === null) port = (opts.open ?? openControllingTerminal)();
    return port;
  };
  const who: Decider = { channel: 'terminal', actor: `terminal:${opts.user ?? safeUser()}`, trust: 'local-terminal' };
  // One question on the terminal at a time: each waits for the one before it.
  let queue: Promise<void> = Promise.resolve();
  return {
    name: 'terminal',
    availability() {
      if (!opts.enabled) return 'not enabled (confirm.terminal: true)';
      return terminal() ? true : 'no controlling terminal (lookfirst serve was not started from one)';
    },
    present(req, signal) {
      const tty = terminal();
      if (!tty) return Promise.resolve('no controlling terminal');
      const turn = queue.then(() => ask(tty, req, signal));
      queue = turn.catch(() => {});
      // Shown means queued: the page and webhook show it meanwhile.
      return Promise.resolve(true);
    },
  };

  async function ask(tty: TerminalPort, req: ApprovalRequest, signal: AbortSignal): Promise<void> {
    if (signal.aborted || !opts.pending.get(req.call.callId)) return;
    tty.write(terminalPrompt(req, opts.clock));
    const line = await tty.readLine(signal);
    if (signal.aborted || line === undefined) {
      tty.write(opts.pending.get(req.call.callId) ? '\n   (no answer: No)\n' : '\n   (decided elsewhere, timed out, or withdrawn)\n');
      if (line === undefined && !signal.aborted) await opts.pending.decide(req.call.callId, req.call.argsSha256, false, who);
      return;
    }
    const yes = /^\s*y(es)?\s*$/i.test(line);
    // For the receipt: the answer came from the gate's own controlling terminal, about the call it showed.
    const evidence: Evidence = {
      method: 'terminal',
      cardText: req.summary,
      decidedAtMs: (opts.clock ?? systemClock).nowMs(),
      checks: [
        { name: 'controlling_terminal', ok: true, detail: 'answered on the terminal lookfirst serve was started from' },
        { name: 'action_unchanged', ok: true, detail: `args_sha256 ${req.call.argsSha256.slice(0, 12)}…` },
      ],
    };
    const r = await opts.pending.decide(req.call.callId, req.call.argsSha256, yes, { ...who, evidence });
    tty.write(r.ok ? (yes ? '   approved\n' : '   denied (only y or yes approves)\n') : `   not recorded: ${r.reason}\n`);
  }
}

function safeUser(): string {
  try {
    return (
      userInfo()
        .username.replace(/[^A-Za-z0-9._@-]/g, '')
        .slice(0, 64) || 'user'
    );
  } catch {
    return 'user';
  }
}
