/**
 * The part of a wrap every format shares: from the client's servers (already parsed), which move behind
 * the gate under which upstream names, which stay and why, and the gate's timeout setting. Refuses when
 * nothing can move, or when the gate's entry name is taken by a server that stays. Pure.
 */
import { LookfirstError } from '../errors.js';
import { timeoutFor } from './clients.js';
import { fateOf, upstreamNameFor } from './servers.js';
import type { ClientKind, KeptServer, MovedServer, TimeoutChange } from './types.js';

/** What moves, what stays, and the timeout the gate's entry gets. */
export interface ServerPlan {
  moved: MovedServer[];
  kept: KeptServer[];
  timeout: TimeoutChange;
  /** Codex: the longest `startup_timeout_sec` a moved server had (the gate starts them all). */
  startupSec?: number;
}

/** The setting a moved server may carry for its tool-call timeout, per client. */
const TIMEOUT_KEY: Partial<Record<ClientKind, string>> = { gemini: 'timeout', codex: 'tool_timeout_sec' };

/**
 * Plans a wrap of `servers` (the client's `mcpServers`/`servers`/`mcp_servers` value).
 * @throws LookfirstError WRAP_REFUSED when a server already runs the gate, when no server can move
 *   (each reason listed), or when `gateServer` names a server that stays.
 * @throws LookfirstError WRAP_INVALID when the servers value is not an object.
 */
export function planServers(
  client: ClientKind,
  servers: unknown,
  file: string,
  key: string,
  taken: ReadonlySet<string>,
  neededSeconds: number,
  gateServer: string,
): ServerPlan {
  if (servers === undefined)
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: no "${key}" here, so there is no server to wrap. Check the file, or pass the right one with --config-file.`,
    );
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
    throw new LookfirstError('WRAP_INVALID', `${file}: "${key}" is not an object of servers; fix it in the client first.`);
  const names = new Set(taken);
  const moved: MovedServer[] = [];
  const kept: KeptServer[] = [];
  const timeouts: unknown[] = [];
  const startups: number[] = [];
  for (const [clientName, entry] of Object.entries(servers)) {
    const fate = fateOf(client, clientName, entry, file);
    if (fate.kind === 'keep') {
      kept.push({ clientName, reason: fate.reason });
      continue;
    }
    const upstream = upstreamNameFor(clientName, names);
    names.add(upstream);
    moved.push({ clientName, upstream, entry: fate.entry });
    const e = entry as Record<string, unknown>;
    const tk = TIMEOUT_KEY[client];
    if (tk !== undefined) timeouts.push(e[tk]);
    if (typeof e.startup_timeout_sec === 'number') startups.push(e.startup_timeout_sec);
  }
  if (moved.length === 0) {
    const why = kept.map((k) => `  ${k.clientName}: ${k.reason}`).join('\n');
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: no server here can move behind the gate; nothing written.${why === '' ? ' The file lists no servers.' : `\n${why}`}`,
    );
  }
  if (kept.some((k) => k.clientName === gateServer))
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: a server named "${gateServer}" stays in the file, so the gate's entry cannot take that name. Pass another with --name.`,
    );
  const plan: ServerPlan = { moved, kept, timeout: timeoutFor(client, neededSeconds, timeouts) };
  if (startups.length > 0) plan.startupSec = Math.max(...startups);
  return plan;
}
