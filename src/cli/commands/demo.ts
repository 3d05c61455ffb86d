/**
 * `lookfirst demo`: offline and self-contained. A fake bank MCP server, the real gate in front of it (as a
 * child process, exactly as a client would start it), and a scripted agent: the balance check passes,
 * the transfer is held and the person at the terminal decides (y/N; Enter or no terminal means No;
 * `--yes` approves for CI), the log verifies, then one line is edited and verify-log names it.
 * Its folder (config, a private key, the log) is removed when it ends, also on Ctrl-C or SIGTERM, unless
 * `--keep` asks to keep it for trying verify-log by hand.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateAuditKey } from '../../audit/keys.js';
import { loadConfig } from '../../config/load.js';
import { cliName, paint } from '../output.js';
import { runVerify } from './verify-log.js';

const here = (rel: string) => fileURLToPath(new URL(`${rel}${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * Runs the demo in a fresh temp folder and removes the folder when done (on success, failure, Ctrl-C or
 * SIGTERM; a SIGKILL cannot be caught), unless `opts.keep`.
 * @returns 0 when every step behaved as the gate promises, 2 when one did not; on SIGINT or SIGTERM the
 *   process exits 130 or 143 once the gate has stopped and the folder is gone.
 */
export async function demoCommand(opts: { yes?: boolean; keep?: boolean }): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'lookfirst-demo-'));
  const remove = () => {
    if (!opts.keep) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  };
  let client: Client | undefined;
  // The gate is stopped before its folder goes, so that it writes nothing into a removed folder.
  const stopGate = () => Promise.race([client?.close().catch(() => {}), new Promise((r) => setTimeout(r, 5_000).unref())]);
  const onSignal = (signal: NodeJS.Signals) => {
    void stopGate().then(() => {
      remove();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    return await runDemo(dir, opts, (c) => {
      client = c;
    });
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await stopGate();
    remove();
  }
}

async function runDemo(dir: string, opts: { yes?: boolean; keep?: boolean }, started: (client: Client) => void): Promise<number> {
  const out = process.stdout;
  const say = (s = '') => out.write(`${s}\n`);
  const step = (s: string) => say(`\n${paint(out, 'bold', `▶ ${s}`)}`);
  const node = [process.execPath, ...process.execArgv];
  const configPath = join(dir, 'lookfirst.yaml');
  writeFileSync(
    configPath,
    [
      // Editors that speak yaml-language-server complete and check the file against the shipped schema.
      `# yaml-language-server: $schema=${fileURLToPath(new URL('../../../schema/lookfirst.schema.json', import.meta.url))}`,
      'upstreams:',
      '  bank:',
      `    command: ${JSON.stringify(node[0])}`,
      `    args: ${JSON.stringify([...node.slice(1), here('../../demo/bank-server'), join(dir, 'bank.json')])}`,
      'confirm:',
      '  timeout_seconds: 120',
      '  elicitation: true',
      'audit:',
      '  log: audit.jsonl',
      '  key: audit.key',
      '',
    ].join('\n'),
  );
  const config = loadConfig(configPath);
  generateAuditKey(config.audit.keyPath, config.audit.pubPath);
  say(`lookfirst demo — everything lives in ${dir}${opts.keep ? '' : ' (removed when the demo ends; --keep keeps it)'}`);

  const client = new Client({ name: 'demo-agent', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
  started(client);
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    say(paint(out, 'yellow', '\n  ┌ the gate asks the human (MCP elicitation):'));
    for (const line of req.params.message.split('\n')) say(paint(out, 'yellow', `  │ ${line}`));
    const approve = opts.yes ? true : await askYesNo('  └ Approve this transfer? [y/N] ');
    if (opts.yes) say(paint(out, 'yellow', '  └ --yes given: approving'));
    return { action: 'accept', content: { approve } };
  });
  const transport = new StdioClientTransport({ command: node[0]!, args: [...node.slice(1), here('../main'), 'serve', '--config', configPath], stderr: 'pipe' });
  await client.connect(transport);

  step('The agent checks the balance (a read: passes straight through)');
  const balance = await client.callTool({ name: 'get_balance', arguments: {} });
  say(`  ${textOf(balance)}`);

  step('The agent transfers 250 EUR (a write: held until a person decides)');
  const transfer = await client.request(
    {
      method: 'tools/call',
      params: { name: 'transfer', arguments: { to: 'DE89 3704 0044 0532 0130 00', amount: 250, currency: 'EUR', memo: 'invoice 2026-117' } },
    },
    CallToolResultSchema,
    { timeout: 300_000 },
  );
  const verdict = (transfer._meta as { lookfirst?: { outcome: string; reason: string; approved_by?: string } } | undefined)?.lookfirst;
  // With no terminal the demo answered No itself: say so, rather than that a person did.
  say(
    noTerminal
      ? '  result: NOT executed: no terminal to ask, so denied (run the demo in a terminal to decide, or with --yes)'
      : `  result: ${textOf(transfer)}`,
  );
  say(
    `  verdict${noTerminal ? ' (the gate logs the demo’s No as an answer to its question)' : ''}: ${paint(out, verdict?.outcome === 'executed' ? 'green' : 'yellow', JSON.stringify(verdict))}`,
  );

  step('The agent checks the balance again');
  say(`  ${textOf(await client.callTool({ name: 'get_balance', arguments: {} }))}`);
  await client.close();
  await new Promise((r) => setTimeout(r, 300));

  step('lookfirst verify-log: is the audit log intact?');
  const before = runVerify(config.audit.logPath, config.audit.pubPath);
  say(`  ${before.entries} entries: ${paint(out, before.verdict === 'intact' ? 'green' : 'red', before.verdict)}`);

  step('Someone edits one line of the log to hide the decision…');
  const lines = readFileSync(config.audit.logPath, 'utf8').split('\n');
  const target = lines.findIndex((l) => l.includes('"event":"approval"'));
  lines[target] = lines[target]!.replace(/"actor":"[^"]*"/, '"actor":"elicitation:nobody"').replace('"approved":true', '"approved":false');
  writeFileSync(config.audit.logPath, lines.join('\n'));
  const after = runVerify(config.audit.logPath, config.audit.pubPath);
  for (const p of after.problems) say(`  ${paint(out, 'red', `line ${p.line}`)}: ${p.message}`);
  say(`  verdict: ${paint(out, after.verdict === 'tampered' ? 'green' : 'red', after.verdict)} (edited line was ${target + 1})`);

  const ok = before.verdict === 'intact' && after.verdict === 'tampered' && after.problems.some((p) => p.line === target + 1);
  say(ok ? '\nThe demo ran as promised.' : '\nSomething did not behave as promised: see above.');
  say(
    opts.keep
      ? `Try it yourself: ${cliName()} verify-log --config ${configPath}  (it names line ${target + 1}, the one the demo edited)`
      : `Its folder is removed now; run the demo with --keep to keep it and try ${cliName()} verify-log on it yourself.`,
  );
  return ok ? 0 : 2;
}

/** Set when the demo had no terminal to ask on and answered No itself. */
let noTerminal = false;

async function askYesNo(prompt: string): Promise<boolean> {
  if (!process.stdin.isTTY) {
    noTerminal = true;
    process.stdout.write(`${prompt}(no terminal to ask: denied)\n`);
    return false;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  // The prompt reads the terminal raw, so Ctrl-C arrives here: pass it on, so the folder is removed.
  rl.once('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  try {
    return /^y(es)?$/i.test((await rl.question(prompt)).trim());
  } finally {
    rl.close();
  }
}

function textOf(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  return content.map((c: { type?: string; text?: string }) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ');
}
