/**
 * One connected client session as the gateway and its helpers see it (its own file so that the helpers
 * that relay to sessions, gateway/upstream-questions.ts and gateway/notify-scope.ts, need not import the
 * gateway that holds them).
 */
import { createHash } from 'node:crypto';
import type { Notification, Result } from '@modelcontextprotocol/sdk/types.js';
import type { Config } from '../config/load.js';
import type { PrivacySession } from '../privacy/filter.js';
import type { Holds } from './hold.js';
import type { TaintMemory } from './taint.js';

/**
 * One connected client: whether it finished initializing, its request ids in progress (2025 sessions),
 * its holds, and how to reach and close it. 2025 sessions are a v1 SDK server on a transport; 2026-07-28
 * sessions are kept by gateway/modern.ts.
 */
export interface Session {
  ready: boolean;
  activeIds: Set<string>;
  holds: Holds;
  /** Relays an upstream notification (list changes, resource updates) to this client. */
  notify(n: Notification): Promise<void>;
  /** Requests of this client in progress: an upstream's question during a call goes to the one busy client. */
  inflight: number;
  /** Its principal's taint memory (gateway/taint-principals.ts); none for a relay to every 2026 HTTP client. */
  taint?: TaintMemory;
  /** URIs it subscribed to, when kept: resource updates reach only subscribers (gateway/notify-scope.ts). */
  subscriptions?: Set<string>;
  /** Relays an upstream's question (elicitation, sampling) to this client; absent where it cannot be asked. */
  ask?: (method: string, params: Record<string, unknown> | undefined, signal: AbortSignal) => Promise<Result>;
  close(): Promise<void>;
  /** Its placeholders, when the privacy filter is on: whatever it is sent is masked with them. */
  privacy?: PrivacySession;
}

/** How the HTTP endpoint names a principal a bearer token authenticated (`token:<digest>`). */
export const AUTHENTICATED_PREFIX = 'token:';

/**
 * Whether a principal is an authenticated identity (a bearer token), the same on every replica. Only then
 * are its held calls shared across its sessions and replicas (gateway/hold.ts): `stdio`, `loopback` and
 * other unauthenticated principals may be several clients under one name, so each session keeps its own.
 */
export function isAuthenticated(principal: string | undefined): boolean {
  return principal?.startsWith(AUTHENTICATED_PREFIX) === true;
}

/**
 * Who owns a session's held calls across sessions and replicas: an authenticated principal together with
 * the name its client gives (two clients that share a token are two owners; the same client reconnecting
 * elsewhere is the same one). Undefined for a principal that is not authenticated: its holds stay in the
 * session.
 */
export function holdsOwner(principal: string | undefined, clientName: string): string | undefined {
  if (!isAuthenticated(principal)) return undefined;
  return `${principal}:${createHash('sha256').update(clientName).digest('base64url').slice(0, 16)}`;
}

/**
 * Whose calls a principal makes, for paired devices (confirm.device): `users[principal]`, else
 * `default_user`; undefined when devices are off (no card is shown anywhere).
 */
export function userOf(config: Pick<Config, 'confirm'>, principal: string | undefined): string | undefined {
  const d = config.confirm.device;
  if (!d) return undefined;
  return d.users[principal ?? 'stdio'] ?? d.defaultUser;
}
