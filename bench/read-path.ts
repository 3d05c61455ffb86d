/**
 * `npm run bench`: what the gate costs on the read path, measured against baselines in the same run.
 *
 * Three paths to a real @modelcontextprotocol/server-filesystem over stdio, with the SDK Client as the
 * agent: direct; through a plain byte relay (the floor of any gate that is a separate process); and
 * through `lookfirst serve` with its decision and its audit log on (reads logged). Two read-only calls:
 * a trivial one (list_allowed_directories), the same carrying a SELECT in an `sql` argument (parsed by the
 * gate's SQL parsers, the added cost of code in arguments), and a 10 KB file read (read_text_file). Rounds interleave the
 * paths (rotating their order) so drift on a shared machine hits all three alike. Prints median latency
 * (µs) per path and the ratios gate/relay and gate/direct. Goals (from issue 2): gate/relay ≤ 1.5 on the
 * trivial call and ≤ 1.2 on the file read. A fourth path, the same gate with `metrics` on, prices the
 * metrics against the gate with them off (ratio per call). Nothing here asserts: figures are for people.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateAuditKey } from '../src/audit/keys.js';
import { benchDir } from './temp.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CALLS = Number(process.env.BENCH_CALLS ?? 400);
const WARMUP = 200;

const dir = benchDir('lookfirst-bench-');
const data = join(dir, 'data');
mkdirSync(data);
const file = join(data, 'ten-kb.txt');
writeFileSync(file, 'lookfirst bench line of text, 64 bytes long, for the read path.\n'.repeat(160));
writeFileSync(
  join(dir, 'lookfirst.yaml'),
  `upstreams:\n  files:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${process.env.BENCH_NO_READ_LOG ? 'audit:\n  reads: false\n' : ''}`,
);
generateAuditKey(join(dir, 'audit.key'), join(dir, 'audit.pub'));
// The same gate with `metrics` on (its own folder: an audit log has one writer), to price the metrics.
const metricsDir = join(dir, 'with-metrics');
mkdirSync(metricsDir);
writeFileSync(
  join(metricsDir, 'lookfirst.yaml'),
  `upstreams:\n  files:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${process.env.BENCH_NO_READ_LOG ? 'audit:\n  reads: false\n' : ''}metrics:\n  enabled: true\n  port: 0\n`,
);
generateAuditKey(join(metricsDir, 'audit.key'), join(metricsDir, 'audit.pub'));

const paths: Record<string, string[]> = {
  direct: [FS_SERVER, data],
  relay: [join(ROOT, 'bench/relay.mjs'), process.execPath, FS_SERVER, data],
  lookfirst: [join(ROOT, 'dist/cli/main.js'), 'serve', '--config', join(dir, 'lookfirst.yaml')],
  'lookfirst+metrics': [join(ROOT, 'dist/cli/main.js'), 'serve', '--config', join(metricsDir, 'lookfirst.yaml')],
};
const calls = {
  trivial: { name: 'list_allowed_directories', arguments: {} },
  'read 10 KB': { name: 'read_text_file', arguments: { path: file } },
  // The trivial read carrying a SELECT in a field named for SQL: the gate parses it in every dialect it
  // asks (the server ignores the extra argument), so the difference to `trivial` is the parsers' cost.
  // A new text on every call (the id changes), so that no verdict kept from an earlier call is reused.
  'with SELECT': (i: number) => ({
    name: 'list_allowed_directories',
    arguments: { sql: `SELECT id, lower(email), count(*) FROM users u JOIN orders o ON o.user_id = u.id WHERE u.id = ${i} GROUP BY 1, 2 ORDER BY 1 LIMIT 10` },
  }),
};
let sequence = 0;

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  await client.connect(new StdioClientTransport({ command: process.execPath, args, stderr: 'ignore' }));
  return client;
}

async function timeCalls(client: Client, params: object | ((i: number) => object), n: number, into: number[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const p = typeof params === 'function' ? params(sequence++) : params;
    const t0 = process.hrtime.bigint();
    await client.request({ method: 'tools/call', params: p } as never, ResultSchema);
    into.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;

const clients: Record<string, Client> = {};
for (const [name, args] of Object.entries(paths)) clients[name] = await connect(args);
process.stderr.write(`bench: ${ROUNDS} rounds × ${CALLS} calls per path and call, interleaved, after ${WARMUP} warm-up calls\n`);

const results: Record<string, { summary: string; gateRelay: number; gateDirect: number; metrics: number }> = {};
for (const [callName, params] of Object.entries(calls)) {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((p) => [p, []]));
  for (const c of Object.values(clients)) await timeCalls(c, params, WARMUP, []);
  const names = Object.keys(paths);
  for (let round = 0; round < ROUNDS; round++) {
    const order = names.map((_, i) => names[(i + round) % names.length]!);
    for (const p of order) await timeCalls(clients[p]!, params, CALLS, samples[p]!);
    process.stderr.write(`  ${callName}: round ${round + 1}/${ROUNDS}\n`);
  }
  const m = Object.fromEntries(names.map((p) => [p, median(samples[p]!)]));
  const line = names.map((p) => `${p} ${m[p]!.toFixed(0)} µs (p90 ${p90(samples[p]!).toFixed(0)})`).join(' · ');
  const metrics = m['lookfirst+metrics']! / m.lookfirst!;
  results[callName] = { summary: line, gateRelay: m.lookfirst! / m.relay!, gateDirect: m.lookfirst! / m.direct!, metrics };
  process.stdout.write(
    `${callName.padEnd(11)} median ${line}\n${''.padEnd(11)} gate/relay ${(m.lookfirst! / m.relay!).toFixed(2)}x · gate/direct ${(m.lookfirst! / m.direct!).toFixed(2)}x · relay/direct ${(m.relay! / m.direct!).toFixed(2)}x · metrics on/off ${metrics.toFixed(2)}x\n`,
  );
}
for (const c of Object.values(clients)) await c.close();
const goals = [
  ['trivial', 1.5],
  ['read 10 KB', 1.2],
] as const;
const parse = results['with SELECT']!.gateDirect / results.trivial!.gateDirect;
process.stdout.write(
  `code in arguments: the SELECT call costs ${parse.toFixed(2)}x the trivial one through the gate (each against direct; no goal: the parsers' own cost)\n`,
);
process.stdout.write(
  `metrics: the gate with metrics on costs ${Object.entries(results)
    .map(([n, r]) => `${r.metrics.toFixed(2)}x (${n})`)
    .join(', ')} the gate with them off (no goal; off, the read path makes only no-op calls)\n`,
);
for (const [name, goal] of goals) {
  const r = results[name]!.gateRelay;
  process.stdout.write(`goal ${name}: gate/relay ${r.toFixed(2)}x, goal ≤ ${goal}x: ${r <= goal ? 'met' : 'NOT met'}\n`);
}
