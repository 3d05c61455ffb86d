/**
 * Starting one of lookfirst's worker threads (the audit writer, the redaction hook) from built code or
 * from TypeScript sources alike: a worker does not inherit tsx, so under the sources (the tests) it is
 * registered in the worker before the script is imported.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/**
 * Starts the worker script `name` that sits beside the calling module.
 * @param caller the caller's `import.meta.url`.
 * @param name the script's file name without extension (`worker`, `redact-worker`).
 * @param workerData passed to the worker as `workerData` (structured-cloned).
 */
export function startWorker(caller: string, name: string, workerData: unknown): Worker {
  const ext = extname(fileURLToPath(caller));
  const script = new URL(`./${name}${ext}`, caller);
  if (ext !== '.ts') return new Worker(script, { workerData });
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then((m) => { m.register(); return import(${JSON.stringify(script.href)}); })`, { eval: true, workerData });
}
