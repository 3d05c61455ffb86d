/**
 * Request guards for the approval page. Security posture: a request is served only when every check
 * passes; a missing or unparseable header that a check needs means refusal (fail closed), except Origin
 * and Sec-Fetch-Site, which non-browser clients omit and which a web page cannot remove in a browser.
 * Checks return a result; the app turns a refusal into 403. Pure but for reading the interface list.
 * @see BR-14 in shared/cases (DNS rebinding): Host is checked on every request, before any state change.
 * @see https://fetch.spec.whatwg.org/#sec-fetch-site-header
 */
import { timingSafeEqual } from 'node:crypto';
import { networkInterfaces } from 'node:os';

/** Outcome of a check. */
export type GuardResult = { ok: true } | { ok: false; reason: string };

/** Who the page answers to: Host values, and the origins allowed to post. */
export interface Allowed {
  hosts: Set<string>;
  origins: Set<string>;
}

/**
 * Host values and origins of this page, e.g. `127.0.0.1:8471` and `http://127.0.0.1:8471`; with a
 * `publicUrl` (the address an authenticating proxy serves it at), that host and origin too.
 */
export function allowedHosts(host: string, port: number, publicUrl?: string): Allowed {
  const names = host === '::1' ? ['[::1]', 'localhost'] : [host, 'localhost', '127.0.0.1'];
  // Bound to every interface: this machine's own addresses name it too (IP literals cannot be rebound).
  if (host === '0.0.0.0' || host === '::') names.push(...localAddresses());
  const hosts = new Set(names.map((n) => `${n}:${port}`.toLowerCase()));
  const origins = new Set([...hosts].map((h) => `http://${h}`));
  if (publicUrl) {
    const u = new URL(publicUrl);
    hosts.add(u.host.toLowerCase());
    origins.add(u.origin.toLowerCase());
  }
  return { hosts, origins };
}

/** Checks Host (exact match against our own addresses). */
export function checkHost(hostHeader: string | undefined, allowed: Allowed): GuardResult {
  if (!hostHeader) return { ok: false, reason: 'missing Host header' };
  return allowed.hosts.has(hostHeader.toLowerCase())
    ? { ok: true }
    : { ok: false, reason: `Host "${hostHeader.slice(0, 80)}" is not this server's own address (set public_url for the name clients use)` };
}

/** Checks that a state-changing request is not cross-site (Origin and Sec-Fetch-Site, when sent). */
export function checkSameOrigin(origin: string | undefined, fetchSite: string | undefined, allowed: Allowed): GuardResult {
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    return { ok: false, reason: `cross-site request (Sec-Fetch-Site: ${fetchSite.slice(0, 20)})` };
  }
  if (origin === undefined) return { ok: true };
  if (!allowed.origins.has(origin.toLowerCase())) return { ok: false, reason: `foreign Origin "${origin.slice(0, 80)}"` };
  return { ok: true };
}

/** Constant-time comparison of a per-process secret (CSRF token, access key). */
export function checkCsrf(given: string | undefined, expected: string): GuardResult {
  if (!given) return { ok: false, reason: 'missing CSRF token' };
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b) ? { ok: true } : { ok: false, reason: 'wrong CSRF token' };
}

/** This machine's interface addresses as they appear in a Host header (`10.0.0.5`, `[fe80::1]`). */
function localAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flat()
    .filter((a) => a !== undefined)
    .map((a) => (a.family === 'IPv6' ? `[${a.address.split('%')[0]}]` : a.address));
}
