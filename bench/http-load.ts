/**
 * `npm run bench` (second part): the gate under load over Streamable HTTP, against the same load sent
 * straight to the upstream in the same run. The upstream is the reference server-everything; the gate
 * runs `serve --transport http` in front of it twice: once with the upstream in its Streamable HTTP mode
 * (the HTTP upstream leg), once with it on stdio (the stdio leg), `echo` allowed as a read in both. For
 * each number of clients (default 10 and 50: BENCH_CLIENTS, one number or a comma list), the clients call
 * `echo` in a loop for D seconds (default 30, BENCH_SECONDS) three times: directly (server-everything over
 * Streamable HTTP), through the gate to the HTTP upstream, through the gate to the stdio upstream; each
 * phase after a 1 s warm-up that is not counted. Prints calls/s, p50/p99 latency (ms), errors (the first
 * one's message), lost responses (a call that neither answered nor failed), each gate's ratio to direct,
 * its resident memory (MiB) and how many MaxListenersExceededWarning lines it printed. BENCH_HEAP=1 also
 * takes heap snapshots of the HTTP-leg gate (after GC) before and after the last load, outside the
 * measured time (a snapshot pauses the gate for seconds). Nothing here asserts: figures are for people.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateAuditKey } from '../src/audit/keys.js';
import { benchDir } from './temp.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const MAIN = join(ROOT, 'dist/cli/main.js');
const CLIENT_COUNTS = (process.env.BENCH_CLIENTS ?? '10,50')
  .split(',')
  .map((n) => Number(n.trim()))
  .filter((n) => Number.isInteger(n) && n > 0);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const HEAP = process.env.BENCH_HEAP === '1';
const WARMUP_MS = 1000;

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

/** CPU time a process has used so far (user + system), in ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // utime and stime are fields 14 and 15 of stat(5), in clock ticks (100 a second on Linux).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** The stdio upstream the gate started (its child process), when it can be found. */
function childOf(pid: number): Record<string, number> {
  try {
    const child = Number(readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0]);
    return Number.isInteger(child) && child > 0 ? { upstream: child } : {};
  } catch {
    return {};
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

interface LoadResult {
  calls: number;
  errors: number;
  /** The first error's message. */
  firstError?: string;
  lost: number;
  latenciesMs: number[];
  seconds: number;
  /** Resident memory of the watched process every 5 s, and at the end (MiB). */
  rssSamples: number[];
  rssEnd?: number;
  /** CPU time per counted call (ms) of each watched process, by name. */
  cpuPerCall: Record<string, number>;
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

/**
 * `clients` SDK clients call echo in a loop: `WARMUP_MS` not counted, then `SECONDS` counted.
 * @param beforeMeasure runs after the warm-up, before the counted time starts (a heap snapshot).
 */
async function load(url: URL, clients: number, cpuOf: Record<string, number>, watchPid?: number, beforeMeasure?: () => Promise<void>): Promise<LoadResult> {
  const connected = await Promise.all(
    Array.from({ length: clients }, async (_, i) => {
      const c = new Client({ name: `load-${i}`, version: '1' }, { capabilities: {} });
      await c.connect(new StreamableHTTPClientTransport(url));
      return c;
    }),
  );
  const result: LoadResult = { calls: 0, errors: 0, lost: 0, latenciesMs: [], seconds: SECONDS, rssSamples: [], cpuPerCall: {} };
  let inflight = 0;
  let counting = false;
  let stopAt = Date.now() + WARMUP_MS;
  const run = (c: Client, i: number, n: number): Promise<void> => {
    if (Date.now() >= stopAt) return Promise.resolve();
    const t0 = process.hrtime.bigint();
    const counted = counting;
    inflight++;
    return c
      .request({ method: 'tools/call', params: { name: 'echo', arguments: { message: `c${i}-${n}` } } }, ResultSchema, { timeout: 10_000 })
      .then(
        (r) => {
          if (!counted) return;
          const text = (r.content as { text?: string }[] | undefined)?.[0]?.text;
          if (text !== `Echo: c${i}-${n}`) {
            result.errors++;
            result.firstError ??= `unexpected answer: ${JSON.stringify(r).slice(0, 200)}`;
          } else result.latenciesMs.push(Number(process.hrtime.bigint() - t0) / 1e6);
          result.calls++;
        },
        (err: Error) => {
          if (!counted) return;
          result.errors++;
          result.firstError ??= err.message.slice(0, 200);
        },
      )
      .finally(() => {
        inflight--;
      })
      .then(() => run(c, i, n + 1));
  };
  // Warm-up: connections, JIT, the upstream's session; not counted.
  await Promise.all(connected.map((c, i) => run(c, i, 0)));
  await beforeMeasure?.();
  counting = true;
  stopAt = Date.now() + SECONDS * 1000;
  const cpuBefore = Object.fromEntries(Object.entries(cpuOf).map(([name, pid]) => [name, cpuMs(pid)]));
  const ownBefore = process.cpuUsage();
  const sampler = watchPid ? setInterval(() => result.rssSamples.push(rssMiB(watchPid)), 5000) : undefined;
  await Promise.all(connected.map((c, i) => run(c, i, 1_000_000)));
  clearInterval(sampler);
  for (const [name, pid] of Object.entries(cpuOf)) result.cpuPerCall[name] = (cpuMs(pid) - (cpuBefore[name] ?? 0)) / Math.max(1, result.calls);
  const own = process.cpuUsage(ownBefore);
  result.cpuPerCall.clients = (own.user + own.system) / 1000 / Math.max(1, result.calls);
  result.lost = inflight;
  if (watchPid) result.rssEnd = rssMiB(watchPid);
  await Promise.all(connected.map((c) => c.close().catch(() => {})));
  return result;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const sorted = (r: LoadResult) => [...r.latenciesMs].sort((a, b) => a - b);

function line(name: string, r: LoadResult): string {
  const s = sorted(r);
  const first = r.firstError ? ` (first: ${r.firstError})` : '';
  const cpu = Object.entries(r.cpuPerCall)
    .map(([k, v]) => `${k} ${v.toFixed(2)}`)
    .join(', ');
  return `  ${name.padEnd(20)} ${(r.calls / r.seconds).toFixed(0).padStart(6)} calls/s · p50 ${pct(s, 50).toFixed(2).padStart(7)} ms · p99 ${pct(s, 99).toFixed(2).padStart(8)} ms · errors ${r.errors}${first} · lost ${r.lost} · CPU ms/call: ${cpu}`;
}

function ratios(r: LoadResult, direct: LoadResult): string {
  const s = sorted(r);
  const d = sorted(direct);
  return `${''.padEnd(22)} gate/direct: throughput ${(r.calls / direct.calls).toFixed(2)}x · p50 ${(pct(s, 50) / pct(d, 50)).toFixed(2)}x · p99 ${(pct(s, 99) / pct(d, 99)).toFixed(2)}x · gate memory ${r.rssSamples.join(', ')}${r.rssSamples.length ? ', ' : ''}${r.rssEnd} MiB (every 5 s, end)`;
}

interface Gate {
  proc: ChildProcess;
  port: number;
  /** MaxListenersExceededWarning lines it printed so far. */
  warnings: () => number;
}

/** Starts `lookfirst serve --transport http` in `dir` with the given upstream (YAML lines under `ev:`). */
async function startGate(dir: string, upstreamYaml: string): Promise<Gate> {
  writeFileSync(
    join(dir, 'lookfirst.yaml'),
    `upstreams:\n  ev:\n${upstreamYaml}rules:\n  tools:\n    echo: { action: allow }\nconfirm:\n  elicitation: false\n`,
  );
  generateAuditKey(join(dir, 'audit.key'), join(dir, 'audit.pub'));
  const proc = spawn(
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
    { env: { ...process.env, LOOKFIRST_NO_OPEN: '1' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let warnings = 0;
  proc.stderr?.on('data', (c: Buffer) => {
    warnings += c.toString().split('MaxListenersExceededWarning').length - 1;
  });
  const port = Number(await started(proc, /MCP endpoint at http:\/\/127\.0\.0\.1:(\d+)\/mcp/));
  return { proc, port, warnings: () => warnings };
}

const procs: ChildProcess[] = [];
try {
  const upstreamPort = await freePort();
  const upstream = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(upstreamPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(upstream);
  await started(upstream, new RegExp(`(${upstreamPort})`));
  const httpDir = benchDir('lookfirst-load-http-');
  const stdioDir = benchDir('lookfirst-load-stdio-');
  const httpGate = await startGate(httpDir, `    url: http://127.0.0.1:${upstreamPort}/mcp\n`);
  procs.push(httpGate.proc);
  const stdioGate = await startGate(stdioDir, `    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([EVERYTHING, 'stdio'])}\n`);
  procs.push(stdioGate.proc);
  const at = (port: number) => new URL(`http://127.0.0.1:${port}/mcp`);
  console.log(
    `http load: echo calls for ${SECONDS} s per phase (after ${WARMUP_MS / 1000} s of warm-up), with ${CLIENT_COUNTS.join(' and ')} clients: direct to server-everything over Streamable HTTP, then through the gate to it over HTTP, then through the gate to it on stdio (reads logged; ratios are against direct over HTTP)`,
  );
  let heap: { early: Snapshot; end: Snapshot } | undefined;
  for (const [k, clients] of CLIENT_COUNTS.entries()) {
    const last = k === CLIENT_COUNTS.length - 1;
    console.log(`${clients} clients`);
    const direct = await load(at(upstreamPort), clients, { upstream: upstream.pid! });
    console.log(line('direct (HTTP)', direct));
    let early: Snapshot | undefined;
    const snapshotFirst =
      HEAP && last
        ? async () => {
            early = await heapSnapshot(httpGate.proc.pid!, httpDir);
          }
        : undefined;
    const viaHttp = await load(at(httpGate.port), clients, { gate: httpGate.proc.pid!, upstream: upstream.pid! }, httpGate.proc.pid, snapshotFirst);
    if (early) heap = { early, end: await heapSnapshot(httpGate.proc.pid!, httpDir) };
    console.log(line('gate, HTTP upstream', viaHttp));
    console.log(ratios(viaHttp, direct));
    const viaStdio = await load(at(stdioGate.port), clients, { gate: stdioGate.proc.pid!, ...childOf(stdioGate.proc.pid!) }, stdioGate.proc.pid);
    console.log(line('gate, stdio upstream', viaStdio));
    console.log(ratios(viaStdio, direct));
  }
  console.log(`MaxListenersExceededWarning lines: ${httpGate.warnings()} from the HTTP-leg gate, ${stdioGate.warnings()} from the stdio-leg gate`);
  if (heap) {
    console.log(
      `HTTP-leg gate live heap (snapshot after GC, outside the measured time): ${heap.early.mib} MiB / ${heap.early.nodes} objects after warm-up, ${heap.end.mib} MiB / ${heap.end.nodes} objects after the load (${(heap.end.nodes / heap.early.nodes).toFixed(2)}x)`,
    );
  }
} finally {
  for (const p of procs.reverse()) p.kill('SIGTERM');
}
