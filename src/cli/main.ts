#!/usr/bin/env node
/**
 * lookfirst's command line. The one top-level catch: a known error becomes its exit code and a sentence
 * telling the user what to do; anything else is a bug, printed with its stack. Exit codes: 0 ok,
 * 1 error (bad config, missing key, no verdict possible), 2 a verdict of failure (tampered log).
 */
import { Command } from 'commander';
import { ConfigError, LookfirstError } from '../errors.js';
import { paint } from './output.js';
import { VERSION } from './version.js';

const program = new Command()
  .name('lookfirst')
  .description('A gate between MCP clients and servers: reads pass, writes wait for a human, every decision is signed into an audit log.')
  .version(VERSION)
  .showHelpAfterError();

let exitCode = 0;
// Each command's module is imported only when that command runs: importing them all up front (the SDK, the store
// drivers, the web server, the classifier's word lists) cost every invocation, `--version` included, seconds.
const run = (f: () => number | Promise<number>) => async () => {
  exitCode = await f();
};

program
  .command('serve')
  .description('run the gate in front of the upstreams in the config, on stdio (default) or Streamable HTTP')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--transport <kind>', 'stdio or http (MCP endpoint at /mcp)', 'stdio')
  .option('--host <host>', 'with --transport http: address to listen on (default http.host, 127.0.0.1)')
  .option('--port <port>', 'with --transport http: port (default http.port, 8470; 0 picks a free one)')
  .option('--dry-run', 'reads run for real; every other call is recorded in the audit log, answered as not executed (replay: promote)')
  .action((o: { config: string; transport?: string; host?: string; port?: string; dryRun?: boolean }) =>
    run(async () => (await import('./commands/serve.js')).serveCommand(o))(),
  );

program
  .command('keygen')
  .description('create the Ed25519 audit key pair named in the config (never overwrites)')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--json', 'machine-readable output')
  .action((o: { config: string; json?: boolean }) => run(async () => (await import('./commands/keygen.js')).keygenCommand(o))());

program
  .command('check')
  .description(
    'pre-flight check of a config: one line per check (OK, WARN, ERROR); starts no gate, binds no port, writes no log, calls no tool (exit 0 no ERROR, 2 an ERROR, 1 usage or no config)',
  )
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--timeout <seconds>', 'per upstream: to connect, and for each page of tools/list', '10')
  .option('--json', 'machine-readable output: { config, checks: [{ id, level, message }], summary: { ok, warn, error } }')
  .action((o: { config: string; timeout?: string; json?: boolean }) => run(async () => (await import('./commands/check.js')).checkCommand(o))());

program
  .command('pilot-status')
  .description('scored checklist of readiness for a pilot, each item pass or fail with its fix (exit 0 all pass, 2 any fails, 1 usage or no config)')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--trusted-head <file>', "your copy of the log's head kept elsewhere (outside the log's folder); the log must continue it")
  .option('--replicas <n>', "how many gate processes share this config's store", '1')
  .option('--timeout <seconds>', 'per upstream: to connect, and for each page of tools/list', '10')
  .option('--json', 'machine-readable output: { config, score: { passed, total }, items: [{ id, title, pass, detail, fix? }] }')
  .action((o: { config: string; trustedHead?: string; replicas?: string; timeout?: string; json?: boolean }) =>
    run(async () => (await import('./commands/pilot-status.js')).pilotStatusCommand(o))(),
  );

program
  .command('verify-log')
  .description('check the audit log: signatures, hash chain, signed head (exit 0 intact, 2 tampered, 1 no verdict)')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--trusted-head <file>', 'a copy of the head kept elsewhere, to check the log against')
  .option('--expect-key <key>', 'the key you expect the log under: its key id, its verifier key, or your kept copy of audit.pub')
  .option(
    '--dir <folder>',
    "every log in a folder, one per replica (each *.jsonl with its .head, and its key as <log>.pub, else the config's audit.pub); exit: the worst",
  )
  .option('--json', 'machine-readable output')
  .action((o: { config: string; dir?: string; trustedHead?: string; expectKey?: string; json?: boolean }) =>
    run(async () =>
      o.dir !== undefined
        ? (await import('./commands/verify-log-dir.js')).verifyLogDirCommand(o.dir, o)
        : (await import('./commands/verify-log.js')).verifyLogCommand(o),
    )(),
  );

program
  .command('timeline')
  .description('merge the audit logs of several replicas into one timeline, each log verified first (exit 0 all intact, 2 one tampered, 1 no verdict)')
  .argument('<dir>', 'a folder of logs as verify-log --dir reads it')
  .option('-c, --config <file>', 'path to lookfirst.yaml, for the audit.pub of logs with no <log>.pub', 'lookfirst.yaml')
  .option('--call <id>', "only this call's entries, across every log")
  .option('--include-unverified', 'also show the entries of logs that do not verify, marked "?" (the exit code still says they failed)')
  .option('--expect-key <key>', 'the key every log must be under (replicas sharing one key): key id, verifier key or a kept audit.pub')
  .option('--json', 'machine-readable output: { verdict, logs: [{ log, verdict, included }], entries: [entry + log] }')
  .action((dir: string, o: { config: string; call?: string; includeUnverified?: boolean; expectKey?: string; json?: boolean }) =>
    run(async () => (await import('./commands/timeline.js')).timelineCommand(dir, o))(),
  );

program
  .command('tail')
  .description('the decisions the gate takes, live from the audit log: the last N, then each new one (Ctrl-C stops; does not verify the log: see verify-log)')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('-n, --lines <n>', 'how many past decisions to show first', '10')
  .option('--json', 'one JSON object per decision: { time, ts, seq, tool, outcome, channel, approver, rule, call_id, decision_ms, detail }')
  .action((o: { config: string; lines?: string; json?: boolean }) => run(async () => (await import('./commands/tail.js')).tailCommand(o))());

program
  .command('stats')
  .description(
    'counts of decisions by outcome, tool, channel and who decided; median time to decision; denied, lapsed and waiting calls (does not verify the log: see verify-log)',
  )
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--since <when>', 'a duration back from now (30m, 24h, 7d) or an ISO time (2026-12-01T09:00:00Z)', '24h')
  .option('--json', 'machine-readable output')
  .action((o: { config: string; since?: string; json?: boolean }) => run(async () => (await import('./commands/stats.js')).statsCommand(o))());

program
  .command('demo')
  .description('offline demo: a fake bank behind the gate, an agent, a held transfer, a verified log')
  .option('--yes', 'approve the transfer without asking (for CI)')
  .option('--keep', 'keep the demo folder (config, key, log) to try verify-log on it; by default it is removed at the end')
  .action((o: { yes?: boolean; keep?: boolean }) => run(async () => (await import('./commands/demo.js')).demoCommand(o))());

program
  .command('plan')
  .description('the Mutation Plan of a JSON list of tool calls: read-only or mutation, risk and effect of each; runs nothing')
  .argument('[calls]', 'JSON array of { "name", "arguments" } (stdin when omitted)')
  .option('--tools <file>', 'a tools/list result ({ "tools": [ … ] } or the array): the definitions the classifier reads, as the gate would')
  .option('--json', 'machine-readable output: [{ name, kind, risk, effect, reasons }]')
  .action((calls: string | undefined, o: { tools?: string; json?: boolean }) => run(async () => (await import('./commands/plan.js')).planCommand(calls, o))());

program
  .command('promote')
  .description('replay for real the calls a dry-run session recorded in LOG, through the policy and a person (exit 2 if any is not executed cleanly)')
  .argument('<log>', 'the audit log the dry run wrote (verified before anything is replayed)')
  .option('-c, --config <file>', 'path to lookfirst.yaml (default: ./lookfirst.yaml)')
  .option('--session <entry>', 'the session starting at this entry of LOG (default: the latest with calls not yet replayed)')
  .option('--dry-run', 'print what would be replayed; execute nothing')
  .option('--yes', 'approve every replayed call without asking (never overrides a deny rule, never covers a tainted call)')
  .option('--through <entry>', 'replay only the calls recorded up to this entry (the plan prints it)')
  .option('--trusted-head <file>', 'a copy of the head kept elsewhere: refuse a log rolled back with its head')
  .option('--json', 'machine-readable output')
  .action((log: string, o: { config?: string; session?: string; through?: string; dryRun?: boolean; yes?: boolean; trustedHead?: string; json?: boolean }) =>
    run(async () => (await import('./commands/promote.js')).promoteCommand(log, o))(),
  );

program
  .command('ecosystem')
  .description(
    'score the classifier against labelled tool catalogues in three views: names only, catalogue, catalogue with annotations (exit 2 on any write judged read-only)',
  )
  .argument('[dirs...]', "folders of catalogue JSON files, each with labels/<slug>.tsv (default: every set in the clone's test/catalogues)")
  .option('--json', 'machine-readable output')
  .action((dirs: string[], o: { json?: boolean }) => run(async () => (await import('./commands/ecosystem.js')).ecosystemCommand(dirs, o))());

program
  .command('pair')
  .description('pair a phone: prints a 6-digit code (10 minutes, works once) and a QR code of the pairing address')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--user <user>', 'whose calls the phone shows and decides (default confirm.device.default_user)')
  .option('--name <name>', "the device's name, as decisions are logged (default: what the phone says)")
  .option('--json', 'machine-readable output: { pairing_id, code, url, expires_at, user }')
  .action((o: { config: string; user?: string; name?: string; json?: boolean }) => run(async () => (await import('./commands/pair.js')).pairCommand(o))());

const devices = program.command('devices').description('the paired devices: list them, revoke one');
devices
  .command('list')
  .description('every paired device, revoked ones included (never prints a key)')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--user <user>', "only this user's devices")
  .option('--json', 'machine-readable output: [{ id, user, name, paired_at, revoked_at, status }]')
  .action((o: { config: string; user?: string; json?: boolean }) => run(async () => (await import('./commands/devices.js')).devicesListCommand(o))());
devices
  .command('revoke')
  .description('revoke a device: its next request is refused on every replica (exit 2 for an unknown id)')
  .argument('<id>', 'the device id (dev_…), as devices list shows it')
  .option('-c, --config <file>', 'path to lookfirst.yaml', 'lookfirst.yaml')
  .option('--json', 'machine-readable output')
  .action((id: string, o: { config: string; json?: boolean }) => run(async () => (await import('./commands/devices.js')).devicesRevokeCommand(id, o))());

const receipt = program.command('receipt').description('the signed receipt an executed write leaves: show it, verify it against the audit log');
receipt
  .command('show')
  .description('who confirmed what, when and how, with every check (verifies nothing: see receipt verify)')
  .argument('<file>', 'a receipt, <audit.receipts>/<call id>.json')
  .option('--json', 'machine-readable output: { file, sha256, receipt }')
  .action((file: string, o: { json?: boolean }) => run(async () => (await import('./commands/receipt.js')).receiptShowCommand(file, o))());
receipt
  .command('verify')
  .description('check the signature against audit.pub and the link to its audit entry (exit 0 ok, 2 a check failed, 1 usage)')
  .argument('<file>', 'a receipt, <audit.receipts>/<call id>.json')
  .option('-c, --config <file>', 'path to lookfirst.yaml, for audit.log and audit.pub (default: ./lookfirst.yaml when present)')
  .option('--log <path>', "the audit log to find its entry in (default: the config's)")
  .option('--pub <path>', "the audit public key to check its signature with (default: the config's audit.pub)")
  .option('--json', 'machine-readable output: { file, log, pub, ok, checks: [{ name, ok, message }] }')
  .action((file: string, o: { config?: string; log?: string; pub?: string; json?: boolean }) =>
    run(async () => (await import('./commands/receipt.js')).receiptVerifyCommand(file, o))(),
  );

program
  .command('wrap')
  .description("rewrite an MCP client's own config so that its servers run behind the gate (a byte-exact backup is kept; unwrap restores it)")
  .argument('<client>', 'claude-desktop, claude-code, cursor, vscode, gemini or codex')
  .option('--config-file <file>', "the client's config file (default: the client's own location for this OS and --scope)")
  .option(
    '--scope <scope>',
    'claude-code and cursor: project (default; .mcp.json, .cursor/mcp.json) or user (~/.claude.json, ~/.cursor/mcp.json); gemini: user (default) or project',
  )
  .option('--gate-config <file>', "the lookfirst.yaml to create or add the upstreams to (default: lookfirst.yaml beside the client's file)")
  .option('--name <name>', "the gate's server name in the client's config", 'lookfirst')
  .option('--launcher <kind>', 'how the client starts the gate: node (this node and main.js, absolute paths), lookfirst (on PATH) or npx', 'node')
  .option('--dry-run', 'print the diff of both files (env and header values as ***) and write nothing')
  .option('--json', 'machine-readable output: { client, file, gate_config, server, moved, kept, timeout, backup, … }')
  .action(
    (client: string, o: { configFile?: string; scope?: string; gateConfig?: string; name?: string; launcher?: string; dryRun?: boolean; json?: boolean }) =>
      run(async () => (await import('./commands/wrap.js')).wrapCommand(client, o))(),
  );

program
  .command('unwrap')
  .description("put back the client's config that wrap saved, byte for byte (refuses if it changed since; lookfirst.yaml stays)")
  .argument('<client>', 'claude-desktop, claude-code, cursor, vscode, gemini or codex')
  .option('--config-file <file>', "the client's config file, as given to wrap")
  .option('--scope <scope>', 'as for wrap')
  .option('--force', 'restore even though the file changed since wrap; the edited file is kept as <file>.lookfirst-edited')
  .option('--dry-run', 'print the diff unwrap would make (env and header values masked) and write nothing')
  .option('--json', 'machine-readable output')
  .action((client: string, o: { configFile?: string; scope?: string; force?: boolean; dryRun?: boolean; json?: boolean }) =>
    run(async () => (await import('./commands/unwrap.js')).unwrapCommand(client, o))(),
  );

// Output piped into a reader that stops early (`| head`): stop quietly, as Unix tools do.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});

try {
  await program.parseAsync(process.argv);
  process.exitCode = exitCode;
} catch (err) {
  if (err instanceof ConfigError || err instanceof LookfirstError) {
    process.stderr.write(`${paint(process.stderr, 'red', 'lookfirst:')} ${err.message}\n`);
    // Machines asked for JSON: give them the error as JSON on stdout too.
    if (process.argv.includes('--json')) {
      const problems = err instanceof ConfigError ? err.problems : undefined;
      process.stdout.write(`${JSON.stringify({ error: { code: err.code, message: err.message, problems } })}\n`);
    }
    process.exitCode = 1;
  } else {
    process.stderr.write(`lookfirst: unexpected error (a bug; please report it with this output):\n${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  }
}
