/**
 * node-sql-parser, run in a worker thread with a time and memory limit, called synchronously.
 *
 * Why a worker: node-sql-parser is a backtracking PEG parser; some inputs of a hundred characters
 * (unclosed nested `(SELECT`) take minutes and gigabytes, and would stall or kill the gate if parsed on
 * its thread. Here each parse gets PARSE_TIMEOUT_MS; past it the worker is terminated (a new one starts
 * on the next parse) and the text counts as not read, so the caller holds the call. Why synchronous:
 * the classifier is a pure, synchronous function; the gate's thread blocks on an `Atomics.wait` for at
 * most the timeout, and takes the answer with `receiveMessageOnPort`.
 *
 * This is the one module under policy/ that starts a thread and reads a clock (the monotonic one, through
 * MonoClock): it isolates a parser, and decides nothing. The layering test names it as the one exception
 * to policy's purity.
 */
import { createRequire } from 'node:module';
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { type MonoClock, systemMonoClock } from '../../clock.js';

/** Longest one parse may take (ms) before the text counts as not read. */
export const PARSE_TIMEOUT_MS = 250;
/** How long the worker may take to load the parser when it starts (ms); only the first parse waits for it. */
const START_TIMEOUT_MS = 15_000;

/** What the worker answers: the parser's tree and table list, an error, or nothing in time. */
export type WorkerParse = { kind: 'parsed'; ast: unknown; tableList: string[] } | { kind: 'refused'; error: string } | { kind: 'timeout' };

const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { Parser } = require(workerData.parser);
const parser = new Parser();
const flag = new Int32Array(workerData.flag);
const port = workerData.port;
const done = () => { Atomics.store(flag, 0, 1); Atomics.notify(flag, 0); };
port.on('message', ({ text, database }) => {
  let reply;
  try {
    const r = parser.parse(text, { database });
    reply = { kind: 'parsed', ast: r.ast, tableList: r.tableList };
  } catch (e) {
    reply = { kind: 'refused', error: String((e && e.message) || e).slice(0, 200) };
  }
  try { port.postMessage(reply); } catch { port.postMessage({ kind: 'refused', error: 'the tree could not be passed back' }); }
  done();
});
done();
`;

interface Running {
  worker: Worker;
  port: MessagePort;
  flag: Int32Array;
  /** The worker has loaded the parser (its first `done`). */
  ready: boolean;
}

let running: Running | undefined;

function start(): Running {
  const { port1, port2 } = new MessageChannel();
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { parser: createRequire(import.meta.url).resolve('node-sql-parser'), flag: flag.buffer, port: port2 },
    transferList: [port2],
    resourceLimits: { maxOldGenerationSizeMb: 256, maxYoungGenerationSizeMb: 32, stackSizeMb: 4 },
  });
  worker.unref();
  port1.unref();
  worker.on('error', () => {
    if (running?.worker === worker) running = undefined;
  });
  return { worker, port: port1, flag, ready: false };
}

/** Stops the worker (tests, shutdown); the next parse starts a new one. */
function stopSqlWorker(): void {
  if (running) void running.worker.terminate();
  running = undefined;
}

/** A call's remaining time for parsing (ms), shared by all its SQL; spent by parseInWorker. */
export interface ParseTime {
  ms: number;
}

/**
 * Parses `text` as `database` (node-sql-parser's dialect name) in the worker.
 * @param time the call's remaining parse time (ms), reduced by what this parse takes; each parse gets
 *   at most PARSE_TIMEOUT_MS of it.
 * @param clock the monotonic time source that measures the parse (wall-clock steps must not count).
 * @returns the parse, a refusal, or `timeout` when it took longer than allowed (or the worker could
 *   not start); never throws.
 */
export function parseInWorker(text: string, database: string, time: ParseTime = { ms: PARSE_TIMEOUT_MS }, clock: MonoClock = systemMonoClock): WorkerParse {
  if (time.ms <= 0) return { kind: 'timeout' };
  running ??= start();
  const r = running;
  if (!r.ready) {
    // Loading the parser takes a few hundred ms (seconds on a loaded machine). It is not charged to
    // the call: a read must not be held because the worker was still starting. A worker restarts only
    // after a parse timed out, and the call's time bounds how many do.
    if (Atomics.wait(r.flag, 0, 0, START_TIMEOUT_MS) === 'timed-out') {
      stopSqlWorker();
      return { kind: 'timeout' };
    }
    r.ready = true;
  }
  const limit = Math.min(PARSE_TIMEOUT_MS, time.ms);
  const began = clock.monoMs();
  Atomics.store(r.flag, 0, 0);
  r.port.postMessage({ text, database });
  const waited = Atomics.wait(r.flag, 0, 0, limit);
  time.ms -= clock.monoMs() - began;
  if (waited === 'timed-out') {
    // A fresh worker starts loading now, so the next parse does not wait for it long.
    stopSqlWorker();
    running = start();
    return { kind: 'timeout' };
  }
  const reply = receiveMessageOnPort(r.port)?.message as WorkerParse | undefined;
  return reply ?? { kind: 'refused', error: 'the parser gave no answer' };
}
