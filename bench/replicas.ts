/**
 * `npm run bench` (replicas): one gate replica against three, sharing a real PostgreSQL (started here
 * from Debian's package, as the tests do), on this machine. 100 clients (BENCH_REPLICA_CLIENTS), spread
 * over the replicas as a load balancer with session affinity would: half call a read (`echo`) in a loop,
 * half a write that a rule allows (`write_note`, executed through the gated steps: receipt, the tool's
 * execution lease, execution, read-back), for 60 s (BENCH_REPLICA_SECONDS). One tool's executions run
 * one at a time across every replica (gateway/interlock.ts), so the writes measure that order's cost. Every replica runs its own copy of the upstream, and all
 * copies append each executed write to one shared file, so the upstream counts executions: every write
 * carries a unique id, and the bench reports writes answered but not executed (lost) and ids executed
 * twice (double). Prints calls/s, p50/p99 (ms) of reads and writes, errors, lost and double executions.
 * Nothing here asserts: figures are for people.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { generateAuditKey } from '../src/audit/keys.js';
import { postgresMissing, startPostgres } from '../test/postgres.js';
import { benchDir } from './temp.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MAIN = join(ROOT, 'dist/cli/main.js');
const FAKE = join(ROOT, 'test/fixtures/fake-upstream.mjs');
const CLIENTS = Number(process.env.BENCH_REPLICA_CLIENTS ?? 100);
const SECONDS = Number(process.env.BENCH_REPLICA_SECONDS ?? 60);
const WARMUP_MS = 3000;

interface Result {
  replicas: number;
  reads: number[];
  writes: number[];
  errors: number;
  firstError?: string;
  /** Writes answered `executed` whose id the upstream never saw. */
  lost: number;
  /** Ids the upstream executed more than once. */
  double: number;
  /** Requests still unanswered when the time was up. */
  unanswered: number;
}

/** One bearer token per client: each is its own principal, as separate agents would be (and the session caps are per principal). */
const TOKENS = Array.from({ length: CLIENTS }, (_, i) => `bench-client-${String(i).padStart(4, '0')}-`.padEnd(40, 'x'));

async function startReplica(dir: string, storeUrl: string, effects: string): Promise<{ proc: ChildProcess; url: URL }> {
  mkdirSync(dir, { recursive: true });
  generateAuditKey(join(dir, 'audit.key'), join(dir, 'audit.pub'));
  writeFileSync(join(dir, 'tokens.txt'), `${TOKENS.join('\n')}\n`);
  writeFileSync(
    join(dir, 'lookfirst.yaml'),
    `upstreams:\n  fake:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([FAKE, '--side-effects', effects])}\nrules:\n  tools:\n    write_note: { action: allow }\nconfirm:\n  elicitation: false\nhttp:\n  token_file: tokens.txt\nstore:\n  kind: postgres\n  url: ${JSON.stringify(storeUrl)}\n`,
  );
  const proc = spawn(process.execPath, [MAIN, 'serve', '--config', join(dir, 'lookfirst.yaml'), '--transport', 'http', '--port', '0'], {
    env: { ...process.env, LOOKFIRST_NO_OPEN: '1' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let err = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      const m = /MCP endpoint at http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`replica exited ${code}: ${err}`)));
    setTimeout(() => reject(new Error(`no start within 30 s: ${err}`)), 30_000).unref();
  });
  return { proc, url: new URL(`http://127.0.0.1:${port}/mcp`) };
}

async function run(replicas: number, adminUrl: string): Promise<Result> {
  const root = benchDir('lf-bench-replicas-');
  const effects = join(root, 'effects.txt');
  const db = `bench${replicas}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${db}`);
  await admin.end();
  const storeUrl = adminUrl.replace(/\/postgres$/, `/${db}`);
  const started = await Promise.all(Array.from({ length: replicas }, (_, i) => startReplica(join(root, `r${i}`), storeUrl, effects)));
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const c = new Client({ name: `bench-${i}`, version: '1' }, { capabilities: {} });
      await c.connect(
        new StreamableHTTPClientTransport((started[i % replicas] as { url: URL }).url, { requestInit: { headers: { authorization: `Bearer ${TOKENS[i]}` } } }),
      );
      return c;
    }),
  );
  const result: Result = { replicas, reads: [], writes: [], errors: 0, lost: 0, double: 0, unanswered: 0 };
  const executedIds = new Set<string>();
  let counting = false;
  let stopAt = Date.now() + WARMUP_MS;
  let inflight = 0;
  const loop = async (c: Client, i: number) => {
    for (let n = 0; Date.now() < stopAt; n++) {
      const write = i % 2 === 1;
      const id = `c${i}-${n}-${counting ? 'm' : 'w'}`;
      const t0 = performance.now();
      const counted = counting;
      inflight++;
      try {
        const r = await c.request(
          { method: 'tools/call', params: write ? { name: 'write_note', arguments: { note: id } } : { name: 'echo', arguments: { message: id } } },
          ResultSchema,
          { timeout: 30_000 },
        );
        const v = (r._meta as { lookfirst?: { outcome?: string } } | undefined)?.lookfirst;
        const ok = write
          ? v?.outcome === 'executed' && r.isError !== true
          : (r.content as { text?: string }[] | undefined)?.[0]?.text === JSON.stringify({ message: id });
        if (write && v?.outcome === 'executed') executedIds.add(id);
        if (!counted) continue;
        if (!ok) {
          result.errors++;
          result.firstError ??= JSON.stringify(r).slice(0, 200);
        } else (write ? result.writes : result.reads).push(performance.now() - t0);
      } catch (err) {
        if (counted) {
          result.errors++;
          result.firstError ??= (err as Error).message.slice(0, 200);
        }
      } finally {
        inflight--;
      }
    }
  };
  await Promise.all(clients.map((c, i) => loop(c, i)));
  counting = true;
  stopAt = Date.now() + SECONDS * 1000;
  await Promise.all(clients.map((c, i) => loop(c, i)));
  result.unanswered = inflight;
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  for (const s of started) s.proc.kill('SIGTERM');
  await Promise.all(started.map((s) => new Promise((r) => (s.proc.exitCode !== null ? r(null) : s.proc.once('exit', r)))));
  const lines = existsSync(effects) ? readFileSync(effects, 'utf8').split('\n').filter(Boolean) : [];
  const seen = new Map<string, number>();
  for (const l of lines) {
    const note = (JSON.parse(l) as { note?: string }).note ?? '';
    seen.set(note, (seen.get(note) ?? 0) + 1);
  }
  result.double = [...seen.values()].filter((n) => n > 1).length;
  result.lost = [...executedIds].filter((id) => !seen.has(id)).length;
  return result;
}

function pct(values: number[], p: number): string {
  const s = [...values].sort((a, b) => a - b);
  return (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN).toFixed(1);
}

function report(r: Result): string {
  const calls = r.reads.length + r.writes.length;
  return `${r.replicas} replica${r.replicas === 1 ? ' ' : 's'}: ${(calls / SECONDS).toFixed(0).padStart(5)} calls/s (reads ${(r.reads.length / SECONDS).toFixed(0)}/s p50 ${pct(r.reads, 50)} p99 ${pct(r.reads, 99)} ms; allowed writes ${(r.writes.length / SECONDS).toFixed(0)}/s p50 ${pct(r.writes, 50)} p99 ${pct(r.writes, 99)} ms); errors ${r.errors}${r.firstError ? ` (first: ${r.firstError})` : ''}, lost ${r.lost}, double executions ${r.double}, unanswered at the end ${r.unanswered}`;
}

async function main(): Promise<void> {
  const missing = postgresMissing();
  if (missing) {
    console.log(`replicas: skipped (${missing})`);
    return;
  }
  console.log(`\nGate replicas on one PostgreSQL: ${CLIENTS} clients, half reading, half writing through a rule, ${SECONDS} s per run (this machine: 2 cores)`);
  const server = await startPostgres();
  try {
    const one = await run(1, server.url);
    console.log(report(one));
    const three = await run(3, server.url);
    console.log(report(three));
    const rate = (r: Result) => (r.reads.length + r.writes.length) / SECONDS;
    console.log(`3 replicas / 1 replica: ${(rate(three) / Math.max(1, rate(one))).toFixed(2)}x calls/s`);
  } finally {
    server.stop();
  }
}

await main();
