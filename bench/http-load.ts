/**
 * `npm run bench` (second part): the gate under load over Streamable HTTP, against the same load sent
 * straight to the upstream in the same run. The upstream is the reference server-everything in its
 * Streamable HTTP mode; the gate runs `serve --transport http` in front of it, with `echo` allowed as a
 * read. N clients (default 50, BENCH_CLIENTS) each call `echo` in a loop for D seconds (default 30,
 * BENCH_SECONDS), first directly, then through the gate. Prints calls/s, p50/p99 latency (ms), errors,
 * lost responses (a call that neither answered nor failed), and the gate's resident memory (MiB) after
 * warm-up and at the end. Nothing here asserts: figures are for people.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateAuditKey } from '../src/audit/keys.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const MAIN = join(ROOT, 'dist/cli/main.js');
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function started(proc: ChildProcess, pattern: RegExp): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const on = (c: Buffer) => {
      out += c.toString();
      const m = pattern.exec(out);
      if (m) resolve(m[1] ?? '');
    };
    proc.stdout?.on('data', on);
    proc.stderr?.on('data', on);
    proc.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    setTimeout(() => reject(new Error(`no start within 20 s: ${out}`)), 20_000).unref();
  });
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

interface LoadResult {
  calls: number;
  errors: number;
  lost: number;
  latenciesMs: number[];
  seconds: number;
  rssAfterWarmup?: number;
  rssEnd?: number;
  /** Resident memory every 5 s (MiB). */
  rssSamples?: number[];
  /** Heap snapshots (taken after a full GC) at 5 s and at the end: live heap in MiB and object count. */
  heap?: { early: Snapshot; end: Snapshot };
}

interface Snapshot {
  mib: number;
  nodes: number;
}

/**
 * Asks the gate for a heap snapshot (`--heapsnapshot-signal`; V8 collects garbage first, so the snapshot
 * is the live heap) and waits until it is written.
 */
async function heapSnapshot(pid: number, dir: string): Promise<Snapshot> {
  const before = new Set(readdirSync(dir).filter((f) => f.endsWith('.heapsnapshot')));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const text = readFileSync(join(dir, file), 'utf8');
    // Complete when the JSON closes; the node count is in its header.
    if (!text.trimEnd().endsWith('}')) continue;
    const nodes = Number(/"node_count":(\d+)/.exec(text.slice(0, 4096))?.[1] ?? Number.NaN);
    unlinkSync(join(dir, file));
    return { mib: Math.round((text.length / 1048576) * 10) / 10, nodes };
  }
  throw new Error('no heap snapshot within 60 s');
}

async function load(url: URL, watchPid?: number, snapshotDir?: string): Promise<LoadResult> {
  const clients = await Promise.all(
    Array.from({ length: CLIENTS }, async (_, i) => {
      const c = new Client({ name: `load-${i}`, version: '1' }, { capabilities: {} });
      await c.connect(new StreamableHTTPClientTransport(url));
      return c;
    }),
  );
  const result: LoadResult = { calls: 0, errors: 0, lost: 0, latenciesMs: [], seconds: SECONDS };
  let inflight = 0;
  const end = Date.now() + SECONDS * 1000;
  setTimeout(() => {
    if (watchPid) result.rssAfterWarmup = rssMiB(watchPid);
  }, 3000);
  const early = watchPid && snapshotDir ? new Promise((r) => setTimeout(r, 5000)).then(() => heapSnapshot(watchPid, snapshotDir)) : undefined;
  const samples: number[] = [];
  const sampler = watchPid ? setInterval(() => samples.push(rssMiB(watchPid)), 5000) : undefined;
  await Promise.all(
    clients.map(async (c, i) => {
      let n = 0;
      while (Date.now() < end) {
        const t0 = process.hrtime.bigint();
        inflight++;
        try {
          const r = await c.request({ method: 'tools/call', params: { name: 'echo', arguments: { message: `c${i}-${n}` } } }, ResultSchema, {
            timeout: 10_000,
          });
          const text = (r.content as { text?: string }[] | undefined)?.[0]?.text;
          if (text !== `Echo: c${i}-${n}`) result.errors++;
          else result.latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
          result.calls++;
        } catch {
          result.errors++;
        } finally {
          inflight--;
          n++;
        }
      }
    }),
  );
  result.lost = inflight;
  clearInterval(sampler);
  result.rssSamples = samples;
  if (watchPid) result.rssEnd = rssMiB(watchPid);
  // The end snapshot is taken with every client still connected, as at 5 s.
  if (early && watchPid && snapshotDir) result.heap = { early: await early, end: await heapSnapshot(watchPid, snapshotDir) };
  await Promise.all(clients.map((c) => c.close().catch(() => {})));
  return result;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function line(name: string, r: LoadResult): string {
  const s = [...r.latenciesMs].sort((a, b) => a - b);
  return `${name.padEnd(10)} ${(r.calls / r.seconds).toFixed(0).padStart(6)} calls/s · p50 ${pct(s, 50).toFixed(2)} ms · p99 ${pct(s, 99).toFixed(2)} ms · errors ${r.errors} · lost ${r.lost}`;
}

const dir = mkdtempSync(join(tmpdir(), 'lookfirst-load-'));
const upstreamPort = await freePort();
const upstream = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
  env: { ...process.env, PORT: String(upstreamPort) },
  stdio: ['ignore', 'pipe', 'pipe'],
});
const gate: { proc?: ChildProcess } = {};
try {
  await started(upstream, new RegExp(`(${upstreamPort})`));
  writeFileSync(
    join(dir, 'lookfirst.yaml'),
    `upstreams:\n  ev:\n    url: http://127.0.0.1:${upstreamPort}/mcp\nrules:\n  tools:\n    echo: { action: allow }\nconfirm:\n  elicitation: false\n`,
  );
  generateAuditKey(join(dir, 'audit.key'), join(dir, 'audit.pub'));
  gate.proc = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_GATE_NODE_OPTIONS ?? '').split(' ').filter(Boolean),
      '--heapsnapshot-signal=SIGUSR2',
      `--diagnostic-dir=${dir}`,
      MAIN,
      'serve',
      '--config',
      join(dir, 'lookfirst.yaml'),
      '--transport',
      'http',
      '--port',
      '0',
    ],
    {
      env: { ...process.env, LOOKFIRST_NO_OPEN: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const gatePort = await started(gate.proc, /MCP endpoint at http:\/\/127\.0\.0\.1:(\d+)\/mcp/);
  console.log(`http load: ${CLIENTS} clients × ${SECONDS} s of echo calls, direct first, then through the gate (reads logged)`);
  const direct = await load(new URL(`http://127.0.0.1:${upstreamPort}/mcp`));
  console.log(line('direct', direct));
  const gated = await load(new URL(`http://127.0.0.1:${gatePort}/mcp`), gate.proc.pid, dir);
  console.log(line('lookfirst', gated));
  const s = (r: LoadResult) => [...r.latenciesMs].sort((a, b) => a - b);
  console.log(
    `           throughput gate/direct ${(gated.calls / direct.calls).toFixed(2)}x · p50 gate/direct ${(pct(s(gated), 50) / pct(s(direct), 50)).toFixed(2)}x · p99 gate/direct ${(pct(s(gated), 99) / pct(s(direct), 99)).toFixed(2)}x`,
  );
  console.log(`           gate memory: ${gated.rssAfterWarmup} MiB after 3 s, ${gated.rssEnd} MiB at the end; every 5 s: ${gated.rssSamples?.join(', ')} MiB`);
  if (gated.heap) {
    const { early, end } = gated.heap;
    console.log(
      `           gate live heap (snapshot after GC): ${early.mib} MiB / ${early.nodes} objects at 5 s, ${end.mib} MiB / ${end.nodes} objects at the end (end/5 s ${(end.nodes / early.nodes).toFixed(2)}x); the two snapshots pause the gate once each`,
    );
  }
} finally {
  gate.proc?.kill('SIGTERM');
  upstream.kill('SIGTERM');
}
