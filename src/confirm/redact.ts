/**
 * The redaction hook (`redact.hook: "./my-redact.js#redact"`): an operator's function that receives a
 * copy of each preview before any channel shows it or sends it anywhere, and returns a redacted copy.
 *
 * It may change what is shown (summary, arguments as displayed, diff, risk reason) but never the binding:
 * the call id and `args_sha256` always come from the gate, and the approval binds the arguments the agent
 * sent, not the displayed copy. The hook runs in a worker thread, so that one that hangs (even in a
 * synchronous loop) can be stopped at its time limit: the worker is ended and started again.
 *
 * Security posture: fail closed. A hook that throws, returns something that is not a preview, or runs past
 * `redact.timeout_ms`, denies the call with the reason; a hook that cannot be loaded stops the gate at start.
 */
import { pathToFileURL } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { startWorker as startThread } from '../core/worker.js';
import { LookfirstError } from '../errors.js';
import type { ApprovalRequest } from './channel.js';

/** Where the hook is and how long it may take (config/load.ts `RedactConfig` has this shape). */
export interface RedactOptions {
  /** Absolute path of the module. */
  module: string;
  /** The exported function's name. */
  exportName: string;
  /** Time limit per preview (ms). */
  timeoutMs: number;
}

/** What the hook receives and returns (a plain JSON object, a copy). */
export interface Preview {
  call_id: string;
  args_sha256: string;
  tool: string;
  /** The arguments as displayed (the agent's, with placeholders). */
  arguments: Record<string, unknown>;
  summary: string;
  risk?: string;
  risk_reason?: string;
  /** A unified diff of what a file write would change. */
  diff?: string;
  /** Who asked (the client's name). */
  client?: string;
}

/** The hook as the pipeline calls it: a redacted request, or why the call is denied. */
export type RedactHook = (req: ApprovalRequest) => Promise<{ ok: true; req: ApprovalRequest } | { ok: false; reason: string }>;

/** Messages to and from the worker. */
type ToWorker = { id: number; preview: Preview };
type FromWorker = { id: number; ok: true; preview: unknown } | { id: number; ok: false; error: string } | { ready: true } | { loadError: string };

/**
 * Loads the hook module in a worker and checks that it exports the function.
 * @throws LookfirstError `CONFIG_INVALID` naming the module and export when it cannot be loaded, or the
 *   export is not a function.
 */
export async function loadRedactHook(config: RedactOptions): Promise<{ hook: RedactHook; close: () => Promise<void> }> {
  let worker = await startWorker(config);
  let next = 1;
  const waiting = new Map<number, (m: FromWorker) => void>();
  const listen = (w: Worker) =>
    w.on('message', (m: FromWorker) => {
      if ('id' in m) waiting.get(m.id)?.(m);
    });
  listen(worker);
  let closed = false;

  const run = (preview: Preview): Promise<FromWorker | 'timeout' | 'crashed'> =>
    new Promise((resolve) => {
      const id = next++;
      const w = worker;
      const onExit = () => done('crashed');
      const timer = setTimeout(() => done('timeout'), config.timeoutMs);
      function done(r: FromWorker | 'timeout' | 'crashed') {
        clearTimeout(timer);
        waiting.delete(id);
        w.off('exit', onExit);
        resolve(r);
      }
      waiting.set(id, done);
      w.once('exit', onExit);
      w.postMessage({ id, preview } satisfies ToWorker);
    });

  const hook: RedactHook = async (req) => {
    if (closed) return { ok: false, reason: 'the redaction hook is stopped (the gate is stopping)' };
    const preview = toPreview(req);
    const answer = await run(preview);
    if (answer === 'timeout' || answer === 'crashed') {
      // A hung hook blocks its worker: end it and start a fresh one for the next preview.
      const old = worker;
      worker = await startWorker(config).catch(() => old);
      if (worker !== old) {
        listen(worker);
        void old.terminate();
      }
      return {
        ok: false,
        reason:
          answer === 'timeout'
            ? `the redaction hook (${config.exportName} in ${config.module}) did not answer within redact.timeout_ms (${config.timeoutMs} ms); nothing was shown or run`
            : `the redaction hook's worker stopped (${config.exportName} in ${config.module}); nothing was shown or run`,
      };
    }
    if ('ready' in answer || 'loadError' in answer) return { ok: false, reason: 'the redaction hook answered out of turn' };
    if (!answer.ok)
      return {
        ok: false,
        reason: `the redaction hook (${config.exportName} in ${config.module}) threw: ${answer.error.slice(0, 200)}; nothing was shown or run`,
      };
    const checked = checkPreview(answer.preview);
    if (typeof checked === 'string')
      return { ok: false, reason: `the redaction hook (${config.exportName} in ${config.module}) returned ${checked}; nothing was shown or run` };
    return { ok: true, req: applyPreview(req, checked) };
  };
  return {
    hook,
    close: async () => {
      closed = true;
      await worker.terminate();
    },
  };
}

/** The preview of a request: a plain copy (the hook cannot touch the gate's own objects). */
export function toPreview(req: ApprovalRequest): Preview {
  return structuredClone({
    call_id: req.call.callId,
    args_sha256: req.call.argsSha256,
    tool: req.call.tool,
    arguments: req.call.args,
    summary: req.summary,
    risk: req.risk,
    risk_reason: req.riskReason,
    diff: req.diff,
    client: req.client,
  });
}

/** Checks what the hook returned: a preview with the shown fields of the right types, or what is wrong. */
function checkPreview(v: unknown): Preview | string {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'something that is not an object';
  const p = v as Record<string, unknown>;
  if (typeof p.summary !== 'string') return 'no string "summary"';
  if (typeof p.arguments !== 'object' || p.arguments === null || Array.isArray(p.arguments)) return 'no object "arguments"';
  for (const k of ['diff', 'risk_reason'] as const) if (p[k] !== undefined && typeof p[k] !== 'string') return `a "${k}" that is not a string`;
  return p as unknown as Preview;
}

/**
 * The request as channels will show it: the hook's summary, displayed arguments, diff and risk reason;
 * the call id, `args_sha256` and tool name stay the gate's (the binding).
 */
function applyPreview(req: ApprovalRequest, p: Preview): ApprovalRequest {
  const shown = p.arguments;
  let canonical: string;
  try {
    canonical = JSON.stringify(shown);
  } catch {
    canonical = '{}';
  }
  return {
    ...req,
    call: { ...req.call, args: shown, argsCanonical: canonical },
    summary: p.summary,
    diff: p.diff,
    riskReason: p.risk_reason ?? req.riskReason,
  };
}

async function startWorker(config: RedactOptions): Promise<Worker> {
  const workerData = { module: pathToFileURL(config.module).href, exportName: config.exportName };
  const worker = startThread(import.meta.url, 'redact-worker', workerData);
  worker.unref();
  const first = await new Promise<FromWorker>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  if ('loadError' in first) {
    await worker.terminate();
    // A config problem (a path, an export, a module format), not a bug: the CLI says so and what to do.
    throw new LookfirstError('CONFIG_INVALID', first.loadError);
  }
  return worker;
}
