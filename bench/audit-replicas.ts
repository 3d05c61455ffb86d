/**
 * `npm run bench` (fourth part, issue 14): the audit log across gate replicas, one log per replica against
 * one shared log, measured on this machine. 3 writer processes (BENCH_WRITERS) each append durable entries
 * (an `executed` entry, fdatasynced before the next) for D seconds (BENCH_AUDIT_SECONDS, default 10), one
 * append in flight per writer, in three phases:
 *
 * - per-replica: each writer its own log, through the real AuditLog (worker thread, signed, chained,
 *   fdatasync, and the signed head the gate refreshes after every durable entry);
 * - per-replica, minimal: each writer its own file, with exactly the append of the shared phase below minus
 *   the lock (encode + sign + write + fdatasync), so that the lock's cost is seen apart from the head's;
 * - shared, minimal: one log file, one chain: each append takes a PostgreSQL advisory lock, reads the tail
 *   line (its hash and seq), appends the signed entry, fdatasyncs, releases the lock;
 * - shared, with head: the same, and under the lock, as the gate's writer does after a durable entry, the
 *   signed head: the writer first reads what the others appended since its last turn (to keep its Merkle
 *   tree and chain tip), then appends, fdatasyncs, and writes the checkpoint (temp file, fsync, rename).
 *   Compare it with the first phase; compare the two minimal phases for the lock's cost alone.
 *
 * The lock is PostgreSQL's rather than a
 *   lock file, because it is what replicas already share (the store), replicas may run on several hosts
 *   where a lock file needs a shared filesystem whose locks (NFS) cannot be relied on, and the server
 *   releases a dead writer's lock with its session. The file itself is on local disk here: the best case
 *   for a shared log, which across hosts would also need a shared filesystem.
 *
 * Prints appends/s (all writers together), p50/p99 append latency (ms) and the ratios, and checks that the
 * logs chain. Nothing here asserts: figures are for people.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createPublicKey, type KeyObject } from 'node:crypto';
import { closeSync, fdatasyncSync, fstatSync, fsyncSync, openSync, readFileSync, readSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { sha256Hex } from '../src/audit/canonical.js';
import { CHAIN_EXTENSION } from '../src/audit/chain-writer.js';
import { encodeEntry, GENESIS_PREV } from '../src/audit/entry.js';
import { generateAuditKey, loadSigner } from '../src/audit/keys.js';
import { CompactTree, leafHash } from '../src/audit/merkle.js';
import { formatCheckpoint, type NoteSigner, signNote } from '../src/audit/note.js';
import { verifyLog } from '../src/audit/verify/verify.js';
import { AuditLog } from '../src/audit/writer.js';
import { systemClock } from '../src/clock.js';
import { postgresMissing, startPostgres } from '../test/postgres.js';
import { benchDir } from './temp.js';

const SELF = fileURLToPath(import.meta.url);
const WRITERS = Number(process.env.BENCH_WRITERS ?? 3);
const SECONDS = Number(process.env.BENCH_AUDIT_SECONDS ?? 10);
/** The advisory lock's key: any constant all writers agree on. */
const LOCK_KEY = 0x6c66;

type Mode = 'own' | 'own-min' | 'shared' | 'shared-head';
interface WriterResult {
  count: number;
  latenciesMs: number[];
}

const fieldsFor = (writer: number, i: number) => ({ event: 'executed' as const, call_id: `w${writer}-${i}`, tool: 'bench/write_note', outcome: 'ok' as const });

// ---- writer process ----

/** Seq and hash of the log's last line (genesis for an empty file): what the next entry chains to. */
function readTail(fd: number): { seq: number; prev: string } {
  const size = fstatSync(fd).size;
  if (size === 0) return { seq: 0, prev: GENESIS_PREV };
  for (let len = 4096; ; len *= 2) {
    const n = Math.min(len, size);
    const buf = Buffer.alloc(n);
    readSync(fd, buf, 0, n, size - n);
    const start = buf.lastIndexOf(0x0a, n - 2) + 1;
    if (start > 0 || n === size) {
      const line = buf.subarray(start, n - 1);
      return { seq: (JSON.parse(line.toString('utf8')) as { seq: number }).seq + 1, prev: sha256Hex(line) };
    }
  }
}

function writeFully(fd: number, bytes: Buffer): void {
  for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
}

/** Appends one entry to the file `fd` (opened a+) chained to its current tail, and syncs it. */
function appendChained(fd: number, key: KeyObject, writer: number, i: number): void {
  const { seq, prev } = readTail(fd);
  writeFully(fd, Buffer.from(`${encodeEntry(fieldsFor(writer, i), seq, Date.now(), prev, key)}\n`, 'utf8'));
  fdatasyncSync(fd);
}

/**
 * A writer of the shared log that keeps its signed head, as ChainWriter does, but with others appending
 * too: under the lock it first reads the lines the others appended since its last turn.
 */
class SharedHeadWriter {
  private offset = 0;
  private seq = 0;
  private prev = GENESIS_PREV;
  private readonly tree = new CompactTree();

  constructor(
    private readonly fd: number,
    private readonly logPath: string,
    private readonly signer: NoteSigner,
  ) {}

  append(writer: number, i: number): void {
    const size = fstatSync(this.fd).size;
    if (size > this.offset) {
      const buf = Buffer.alloc(size - this.offset);
      readSync(this.fd, buf, 0, buf.length, this.offset);
      for (let at = 0; at < buf.length; ) {
        const end = buf.indexOf(0x0a, at);
        this.take(buf.subarray(at, end));
        at = end + 1;
      }
      this.offset = size;
    }
    const line = Buffer.from(encodeEntry(fieldsFor(writer, i), this.seq, Date.now(), this.prev, this.signer.key), 'utf8');
    writeFully(this.fd, Buffer.concat([line, Buffer.from('\n')]));
    fdatasyncSync(this.fd);
    this.take(line);
    this.offset += line.length + 1;
    const text = formatCheckpoint({ origin: this.signer.name, size: this.seq, root: this.tree.root(), extensions: [`${CHAIN_EXTENSION} ${this.prev}`] });
    const tmp = `${this.logPath}.head.tmp`;
    const fd = openSync(tmp, 'w', 0o644);
    try {
      writeFully(fd, Buffer.from(signNote(text, this.signer), 'utf8'));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, `${this.logPath}.head`);
  }

  private take(line: Buffer): void {
    this.tree.appendLeafHash(leafHash(line));
    this.prev = sha256Hex(line);
    this.seq++;
  }
}

async function runWriter(mode: Mode, logPath: string, keyPath: string, writer: number, pgUrl: string | undefined): Promise<void> {
  const signer: NoteSigner = loadSigner(keyPath, 'bench');
  let append: (i: number) => Promise<void> | void;
  let close: () => Promise<void> | void;
  if (mode === 'own') {
    const log = await AuditLog.open({ logPath, signer, clock: systemClock, warn: (m) => process.stderr.write(`${m}\n`) });
    append = async (i) => {
      await log.appendDurable(fieldsFor(writer, i));
    };
    close = () => log.close();
  } else {
    const fd = openSync(logPath, 'a+', 0o600);
    if (mode === 'own-min') {
      append = (i) => appendChained(fd, signer.key, writer, i);
      close = () => closeSync(fd);
    } else {
      const client = new pg.Client({ connectionString: pgUrl });
      await client.connect();
      const headWriter = mode === 'shared-head' ? new SharedHeadWriter(fd, logPath, signer) : undefined;
      append = async (i) => {
        await client.query('SELECT pg_advisory_lock($1)', [LOCK_KEY]);
        try {
          if (headWriter) headWriter.append(writer, i);
          else appendChained(fd, signer.key, writer, i);
        } finally {
          await client.query('SELECT pg_advisory_unlock($1)', [LOCK_KEY]);
        }
      };
      close = async () => {
        closeSync(fd);
        await client.end();
      };
    }
  }
  process.stdout.write('ready\n');
  const lines = createInterface({ input: process.stdin });
  const go = await new Promise<string>((resolve) => lines.once('line', resolve));
  lines.close();
  const until = performance.now() + Number(go) * 1000;
  const latenciesMs: number[] = [];
  for (let i = 0; performance.now() < until; i++) {
    const t0 = performance.now();
    await append(i);
    latenciesMs.push(performance.now() - t0);
  }
  await close();
  process.stdout.write(`${JSON.stringify({ count: latenciesMs.length, latenciesMs } satisfies WriterResult)}\n`);
}

// ---- orchestration ----

function startWriter(args: string[]): { child: ChildProcess; ready: Promise<void>; result: Promise<WriterResult> } {
  const child = spawn(process.execPath, ['--import', 'tsx', SELF, '--writer', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  let onReady: () => void;
  const ready = new Promise<void>((r) => (onReady = r));
  const result = new Promise<WriterResult>((resolve, reject) => {
    lines.on('line', (line) => (line === 'ready' ? onReady() : resolve(JSON.parse(line) as WriterResult)));
    child.on('exit', (code) => code !== 0 && reject(new Error(`writer ${args.join(' ')} exited with ${code}`)));
  });
  return { child, ready, result };
}

async function phase(mode: Mode, logFor: (w: number) => string, keyFor: (w: number) => string, pgUrl?: string) {
  const writers = Array.from({ length: WRITERS }, (_, w) => startWriter([mode, logFor(w), keyFor(w), String(w), pgUrl ?? '']));
  await Promise.all(writers.map((w) => w.ready));
  for (const w of writers) w.child.stdin!.end(`${SECONDS}\n`);
  const results = await Promise.all(writers.map((w) => w.result));
  const all = results.flatMap((r) => r.latenciesMs).sort((a, b) => a - b);
  const at = (q: number) => all[Math.min(all.length - 1, Math.floor(all.length * q))] ?? Number.NaN;
  return { perSecond: all.length / SECONDS, p50: at(0.5), p99: at(0.99), perWriter: results.map((r) => r.count) };
}

/** Problems the verifier finds in a log (heads: its sidecar, when there is one). */
function chainProblems(logPath: string, keyPath: string, withHead: boolean): string {
  const signer = loadSigner(keyPath, 'bench');
  const verifier = { name: signer.name, keyId: signer.keyId, key: createPublicKey(signer.key) };
  const heads = withHead ? [{ label: 'head', note: readFileSync(`${logPath}.head`, 'utf8') }] : [];
  const r = verifyLog(readFileSync(logPath), verifier, heads);
  return `${r.entries} entries, ${r.problems.length === 0 ? 'chain and signatures check out' : `${r.problems.length} PROBLEMS: ${r.problems[0]?.message}`} (${r.verdict})`;
}

async function main(): Promise<void> {
  const dir = benchDir('lookfirst-bench-audit-');
  const keyOf = (name: string) => {
    generateAuditKey(join(dir, `${name}.key`), join(dir, `${name}.pub`));
    return join(dir, `${name}.key`);
  };
  const replicaKeys = Array.from({ length: WRITERS }, (_, w) => keyOf(`replica-${w}`));
  const sharedKey = keyOf('shared');
  process.stderr.write(`bench: audit across replicas: ${WRITERS} writer processes, ${SECONDS} s per phase, one durable append in flight per writer\n`);

  const own = await phase(
    'own',
    (w) => join(dir, `replica-${w}.jsonl`),
    (w) => replicaKeys[w]!,
  );
  const ownMin = await phase(
    'own-min',
    (w) => join(dir, `minimal-${w}.jsonl`),
    (w) => replicaKeys[w]!,
  );
  const missing = postgresMissing();
  let shared: Awaited<ReturnType<typeof phase>> | undefined;
  let sharedHead: Awaited<ReturnType<typeof phase>> | undefined;
  if (!missing) {
    const server = await startPostgres();
    try {
      shared = await phase(
        'shared',
        () => join(dir, 'shared.jsonl'),
        () => sharedKey,
        server.url,
      );
      sharedHead = await phase(
        'shared-head',
        () => join(dir, 'shared-head.jsonl'),
        () => sharedKey,
        server.url,
      );
    } finally {
      server.stop();
    }
  }

  const row = (name: string, r: Awaited<ReturnType<typeof phase>>) =>
    `${name.padEnd(34)} ${r.perSecond.toFixed(0).padStart(8)} appends/s   p50 ${r.p50.toFixed(2).padStart(7)} ms   p99 ${r.p99.toFixed(2).padStart(7)} ms   per writer ${r.perWriter.join('/')}`;
  const out: string[] = ['', 'audit across replicas (durable appends, all writers together):'];
  const ratio = (a: Awaited<ReturnType<typeof phase>>, b: Awaited<ReturnType<typeof phase>>) =>
    `${(a.perSecond / b.perSecond).toFixed(2)}× the throughput, p50 ${(b.p50 / a.p50).toFixed(2)}×, p99 ${(b.p99 / a.p99).toFixed(2)}× lower`;
  out.push(row('per-replica, AuditLog (with head)', own));
  if (sharedHead) out.push(row('shared, lock + append + head', sharedHead));
  out.push(row('per-replica, append only', ownMin));
  if (shared) out.push(row('shared, lock + append only', shared));
  if (shared && sharedHead) {
    out.push(`per-replica vs shared, with head: ${ratio(own, sharedHead)}`);
    out.push(`per-replica vs shared, append only: ${ratio(ownMin, shared)}`);
    out.push(`shared-head.jsonl: ${chainProblems(join(dir, 'shared-head.jsonl'), sharedKey, true)}`);
    out.push(`shared.jsonl: ${chainProblems(join(dir, 'shared.jsonl'), sharedKey, false)}; no head kept in that phase`);
  } else out.push(`shared log: skipped (${missing})`);
  for (let w = 0; w < WRITERS; w++) out.push(`replica-${w}.jsonl: ${chainProblems(join(dir, `replica-${w}.jsonl`), replicaKeys[w]!, true)}`);
  process.stdout.write(`${out.join('\n')}\n`);
}

const at = process.argv.indexOf('--writer');
if (at >= 0) {
  const [mode, logPath, keyPath, writer, pgUrl] = process.argv.slice(at + 1);
  await runWriter(mode as Mode, logPath!, keyPath!, Number(writer), pgUrl || undefined);
} else await main();
