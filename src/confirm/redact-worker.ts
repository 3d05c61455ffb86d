/**
 * The redaction hook's worker thread (confirm/redact.ts): loads the operator's module once, then answers
 * each preview with the hook's result, or the error it threw. Runs nothing else.
 */
import { parentPort, workerData } from 'node:worker_threads';

const { module, exportName } = workerData as { module: string; exportName: string };
const port = parentPort;

async function main(): Promise<void> {
  if (!port) return;
  let fn: unknown;
  try {
    const mod = (await import(module)) as Record<string, unknown>;
    fn = mod[exportName] ?? (exportName === 'default' ? undefined : (mod.default as Record<string, unknown> | undefined)?.[exportName]);
  } catch (err) {
    const message = (err as Error).message;
    // ES module syntax in a file Node reads as CommonJS (a .js file with no "type": "module" beside it).
    const hint = /Unexpected token 'export'|Cannot use import statement outside a module/.test(message)
      ? 'the file uses export/import but Node reads it as CommonJS: name it .mjs, or add "type": "module" to the package.json beside it'
      : (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
        ? 'no such file: fix the path in lookfirst.yaml (it is relative to the config file)'
        : 'fix the module or the path in lookfirst.yaml';
    port.postMessage({ loadError: `redact.hook: cannot load ${module} (${message.split('\n')[0]}): ${hint}` });
    return;
  }
  if (typeof fn !== 'function') {
    port.postMessage({ loadError: `redact.hook: ${module} has no exported function "${exportName}"; export one, or name the right one after #` });
    return;
  }
  const hook = fn as (p: unknown) => unknown;
  port.on('message', async (m: { id: number; preview: unknown }) => {
    try {
      const out = await hook(structuredClone(m.preview));
      port.postMessage({ id: m.id, ok: true, preview: structuredClone(out) });
    } catch (err) {
      port.postMessage({ id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) });
    }
  });
  port.postMessage({ ready: true });
}

void main();
