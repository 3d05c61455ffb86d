/**
 * `lookfirst pilot-status [--config F] [--trusted-head H] [--replicas N] [--timeout S] [--json]`: a scored
 * checklist of readiness for a pilot (check/pilot.ts), each item pass or fail with its fix. Like `check`,
 * it starts no gate and calls no tool: it reads the same facts (each upstream listed once, to classify its
 * tools). A trusted head copy "elsewhere" is the file given with `--trusted-head`, outside the log's folder,
 * which the log must continue (as `verify-log --trusted-head` checks).
 * Exit 0 when every item passes, 2 when any fails, 1 for a usage error or a config that cannot be read.
 *
 * `--json`: `{ config, score: { passed, total }, items: [{ id, title, pass, detail, fix? }] }`.
 */
import { type PilotItem, pilotItems, scorePilot } from '../../check/pilot.js';
import { loadConfig } from '../../config/load.js';
import { oneLine } from '../../confirm/visible.js';
import { LookfirstError } from '../../errors.js';
import { gatherFacts, trustedHeadFact } from '../check-gather.js';
import { jsonLine, paint } from '../output.js';
import { parseTimeoutSeconds } from './check.js';

/** Options of the command. */
export interface PilotStatusOptions {
  config: string;
  trustedHead?: string;
  replicas?: string;
  timeout?: string;
  json?: boolean;
}

/** Runs the command; returns the exit code. @throws ConfigError (exit 1), LookfirstError `USAGE`. */
export async function pilotStatusCommand(opts: PilotStatusOptions): Promise<number> {
  const timeoutS = parseTimeoutSeconds(opts.timeout);
  const replicas = opts.replicas === undefined ? 1 : Number(opts.replicas);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 1000)
    throw new LookfirstError(
      'USAGE',
      `--replicas takes how many gate processes share this config's store: a whole number from 1 (got "${String(opts.replicas).slice(0, 20)}")`,
    );
  const config = loadConfig(opts.config);
  const facts = await gatherFacts(config, timeoutS * 1000);
  const items = pilotItems({ ...facts, replicas, trustedHead: opts.trustedHead ? trustedHeadFact(config, opts.trustedHead) : undefined });
  const { passed, total, exitCode } = scorePilot(items);
  const out = process.stdout;
  if (opts.json) {
    out.write(jsonLine({ config: config.file, score: { passed, total }, items }));
    return exitCode;
  }
  out.write(`${paint(out, 'bold', `pilot readiness: ${passed}/${total}`)} (${config.file})\n`);
  items.forEach((i: PilotItem) => {
    // Details quote tool names and upstream errors: one line each, hidden characters shown.
    out.write(`${i.pass ? paint(out, 'green', 'PASS') : paint(out, 'red', 'FAIL')} ${oneLine(i.title)}: ${oneLine(i.detail)}\n`);
    if (i.fix) out.write(`     fix: ${oneLine(i.fix)}\n`);
  });
  out.write(
    exitCode === 0
      ? `${paint(out, 'green', 'ready for a pilot')}\n`
      : `${paint(out, 'yellow', `${total - passed} item${total - passed === 1 ? '' : 's'} to fix before a pilot`)}\n`,
  );
  return exitCode;
}
