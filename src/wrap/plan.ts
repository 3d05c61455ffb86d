/**
 * The part of a wrap every format shares: from the client's servers (already parsed), which move behind
 * the gate under which upstream names, which stay and why, and the gate's timeout setting. Refuses when
 * nothing can move, or when the gate's entry name is taken by a server that stays. Pure.
 */

import { posix, win32 } from 'node:path';
import { LookfirstError } from '../errors.js';
import { timeoutFor } from './clients.js';
import { fateOf, sameUpstream, upstreamNameFor } from './servers.js';
import type { ClientKind, KeptServer, MovedServer, TimeoutChange, UpstreamEntry, WrapInput } from './types.js';

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

/** What the plan needs of the wrap's input: the names and entries lookfirst.yaml has, the gate's setting, where the client starts servers. */
export type PlanInput = Pick<WrapInput, 'takenUpstreams' | 'existingUpstreams' | 'gateConfig' | 'neededSeconds' | 'gateServer'> &
  Partial<Pick<WrapInput, 'start' | 'launcher' | 'cli'>>;

/**
 * Plans a wrap of `servers` (the client's `mcpServers`/`servers`/`mcp_servers` value). A server
 * identical to an upstream lookfirst.yaml already has (sameUpstream), or to one moved earlier in this
 * wrap, reuses that upstream (the one of its own name first) instead of adding a `-2` copy that the
 * gate would start a second time; only a different server with a taken name gets a suffix.
 * @throws LookfirstError WRAP_REFUSED when a server already runs the gate, when no server can move
 *   (each reason listed), or when `gateServer` names a server that stays.
 * @throws LookfirstError WRAP_INVALID when the servers value is not an object.
 */
export function planServers(client: ClientKind, servers: unknown, file: string, key: string, input: PlanInput): ServerPlan {
  const { neededSeconds, gateServer } = input;
  const p = /^[A-Za-z]:[\\/]|^\\\\/.test(input.gateConfig) ? win32 : posix;
  const gateDir = p.dirname(input.gateConfig);
  // Every upstream a moved server could reuse: lookfirst.yaml's, then those this wrap adds.
  const known = new Map<string, UpstreamEntry>(input.existingUpstreams ?? []);
  if (servers === undefined)
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: no "${key}" here, so there is no server to wrap. Check the file, or pass the right one with --config-file.`,
    );
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
    throw new LookfirstError('WRAP_INVALID', `${file}: "${key}" is not an object of servers; fix it in the client first.`);
  const names = new Set(input.takenUpstreams);
  const moved: MovedServer[] = [];
  const kept: KeptServer[] = [];
  const timeouts: unknown[] = [];
  const startups: number[] = [];
  for (const [clientName, entry] of Object.entries(servers)) {
    const fate = fateOf(client, clientName, entry, file, {
      gateServer,
      ...(input.start === undefined ? {} : { start: input.start }),
      ...(input.launcher === undefined ? {} : { launcher: input.launcher }),
      ...(input.cli === undefined ? {} : { cli: input.cli }),
    });
    if (fate.kind === 'keep') {
      kept.push({ clientName, reason: fate.reason });
      continue;
    }
    const own = upstreamNameFor(clientName, new Set());
    const same = (name: string) => {
      const e = known.get(name);
      return e !== undefined && sameUpstream(e, fate.entry, gateDir);
    };
    const reuse = same(own) ? own : [...known.keys()].find(same);
    if (reuse !== undefined) moved.push({ clientName, upstream: reuse, entry: fate.entry, reused: true });
    else {
      const upstream = upstreamNameFor(clientName, names);
      names.add(upstream);
      known.set(upstream, fate.entry);
      moved.push({ clientName, upstream, entry: fate.entry });
    }
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
