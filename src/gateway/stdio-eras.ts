/**
 * Both protocol generations on one stdio connection. The opening message decides, as the SDK's
 * `serveStdio` does (body only, no headers on stdio): `initialize`, or any message without the 2026-07-28
 * envelope claim (`_meta["io.modelcontextprotocol/protocolVersion"]`), pins the connection to the 2025
 * gate (v1 SDK server, with the read fast path); anything else goes to the SDK v2 `serveStdio` in
 * modern-only mode, which answers `server/discover` probes and pins on the first real request. A probe
 * followed by `initialize` (a client that discovers, then falls back) still pins 2025.
 */

import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Transport as ModernTransport } from '@modelcontextprotocol/server';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { ModernFront } from './modern.js';
import { idKey, isPlainObject } from './raw.js';

/** Whether an opening message belongs to the 2025 generation. */
export function isLegacyOpening(m: JSONRPCMessage): boolean {
  if (!('method' in m)) return false;
  if (m.method === 'initialize') return true;
  const meta = isPlainObject(m.params) ? m.params._meta : undefined;
  return !(isPlainObject(meta) && PROTOCOL_VERSION_META_KEY in meta);
}

/** What the router serves each generation with. */
export interface EraHandlers {
  /** Serves a 2025 connection on the given transport (the gateway's v1 path). */
  legacy: (t: Transport) => Promise<unknown>;
  modern: ModernFront;
  log: (line: string) => void;
}

/**
 * Starts `real` and routes its messages to the generation the client opens with.
 * @returns a function that closes the modern side (the legacy side closes with its server).
 */
export async function serveBothEras(real: Transport, h: EraHandlers): Promise<() => Promise<void>> {
  let era: 'opening' | 'legacy' | 'modern' = 'opening';
  /** Messages that arrived while the 2025 server was being connected. */
  let waiting: JSONRPCMessage[] | undefined;
  const side = (): Transport => ({
    start: async () => {},
    send: (m, o) => real.send(m, o),
    close: () => real.close(),
  });
  const legacySide = side();
  // A request id may not be reused while its request is in progress (as on the 2025 path, gateway.serve):
  // the SDK keeps one cancellation handle per id, so a reused id would take the first request's away.
  const active = new Set<string>();
  const modernSide = {
    ...side(),
    send: (m: JSONRPCMessage, o?: Parameters<Transport['send']>[1]) => {
      if (!('method' in m) && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number')) active.delete(idKey(m.id));
      return real.send(m, o);
    },
  } as unknown as ModernTransport;
  let modernHandle: { close(): Promise<void> } | undefined;
  const modern = () => {
    modernHandle ??= serveStdio(
      h.modern.factory(() => 'stdio', { settled: (id) => active.delete(idKey(id)) }),
      { legacy: 'reject', transport: modernSide, onerror: (err) => h.log(`client connection (2026-07-28): ${err.message}`) },
    );
    return modernSide;
  };

  real.onmessage = (m: JSONRPCMessage) => {
    if (era === 'legacy') {
      if (waiting) waiting.push(m);
      else legacySide.onmessage?.(m);
      return;
    }
    if (era === 'opening' && isLegacyOpening(m)) {
      era = 'legacy';
      waiting = [m];
      void h.legacy(legacySide).then(
        () => {
          const queued = waiting ?? [];
          waiting = undefined;
          for (const q of queued) legacySide.onmessage?.(q);
        },
        (err: unknown) => {
          h.log(`could not serve the client: ${(err as Error).message}`);
          void real.close();
        },
      );
      return;
    }
    if (era === 'opening' && 'method' in m && 'id' in m && m.method !== 'server/discover') era = 'modern';
    if ('method' in m && 'id' in m && (typeof m.id === 'string' || typeof m.id === 'number')) {
      const key = idKey(m.id);
      if (active.has(key)) {
        const error = { code: -32600, message: `Invalid Request: id ${JSON.stringify(m.id)} is already used by a request in progress` };
        void real.send({ jsonrpc: '2.0', id: m.id, error } as JSONRPCMessage).catch(() => {});
        return;
      }
      active.add(key);
    }
    // serveStdio attaches its handler synchronously, and queues and orders messages itself.
    modern().onmessage?.(m as never);
  };
  real.onclose = () => {
    legacySide.onclose?.();
    modernSide.onclose?.();
  };
  real.onerror = (err) => {
    legacySide.onerror?.(err);
    modernSide.onerror?.(err);
  };
  await real.start();
  return async () => {
    await modernHandle?.close().catch(() => {});
  };
}
