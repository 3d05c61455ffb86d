/**
 * Which client sessions an upstream notification reaches. The gate holds one connection per upstream for
 * every client, so a notification names no client; sending each one to every session would show one
 * principal what another's calls caused. So:
 * - a log message (`notifications/message`) goes to the sessions with a request in flight when there are
 *   any (it is most likely about their calls), and to every session only when none is busy;
 * - a resource update (`notifications/resources/updated`) goes to the sessions that subscribed to that
 *   URI (a session that does not keep its subscriptions, a 2026-07-28 relay, gets every update);
 * - list changes carry nothing of anyone's and go to every session.
 * Honest limit: two principals with calls in flight at once both get the log messages of that moment.
 */
import type { Notification } from '@modelcontextprotocol/sdk/types.js';

/** What the scope needs of a session. */
export interface NotifiedSession {
  inflight: number;
  /** URIs this session subscribed to (`resources/subscribe`); undefined when not kept. */
  subscriptions?: Set<string>;
}

/** The sessions (among those ready) that an upstream notification is relayed to. */
export function recipientsOf<S extends NotifiedSession>(n: Notification, ready: S[]): S[] {
  if (n.method === 'notifications/message') {
    const busy = ready.filter((s) => s.inflight > 0);
    return busy.length > 0 ? busy : ready;
  }
  if (n.method === 'notifications/resources/updated') {
    const uri = (n.params as { uri?: unknown } | undefined)?.uri;
    return ready.filter((s) => s.subscriptions === undefined || (typeof uri === 'string' && s.subscriptions.has(uri)));
  }
  return ready;
}

/** Keeps a session's subscriptions up to date after a successful `resources/subscribe` or `unsubscribe`. */
export function trackSubscription(session: NotifiedSession | undefined, method: string, params: Record<string, unknown> | undefined): void {
  const uri = params?.uri;
  if (!session?.subscriptions || typeof uri !== 'string') return;
  if (method === 'resources/subscribe') session.subscriptions.add(uri);
  else if (method === 'resources/unsubscribe') session.subscriptions.delete(uri);
}
