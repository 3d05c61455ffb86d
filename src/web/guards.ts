/**
 * Request guards for the approval page. Security posture: a request is served only when every check
 * passes; a missing or unparseable header that a check needs means refusal (fail closed), except Origin
 * and Sec-Fetch-Site, which non-browser clients omit and which cannot be forged by a web page when absent
 * in the browser. Checks return a result; the app turns a refusal into 403. Pure.
 * @see BR-14 in shared/cases (DNS rebinding): Host is checked on every request, before any state change.
 */
import { timingSafeEqual } from 'node:crypto';

/** Outcome of a check. */
export type GuardResult = { ok: true } | { ok: false; reason: string };

/** Host header values this server answers to, e.g. `127.0.0.1:8471`, `localhost:8471`. */
export function allowedHosts(host: string, port: number): Set<string> {
  const names = host === '::1' ? ['[::1]', 'localhost'] : [host, 'localhost', '127.0.0.1'];
  return new Set(names.map((n) => `${n}:${port}`));
}

/** Checks Host (exact match against our own addresses). */
export function checkHost(hostHeader: string | undefined, hosts: Set<string>): GuardResult {
  if (!hostHeader) return { ok: false, reason: 'missing Host header' };
  return hosts.has(hostHeader.toLowerCase()) ? { ok: true } : { ok: false, reason: `Host "${hostHeader.slice(0, 80)}" is not this page's address` };
}

/** Checks that a state-changing request is not cross-site (Origin and Sec-Fetch-Site, when sent). */
export function checkSameOrigin(origin: string | undefined, fetchSite: string | undefined, hosts: Set<string>): GuardResult {
  if (fetchSite !== undefined && fetchSite !== 'same-origin' && fetchSite !== 'none') {
    return { ok: false, reason: `cross-site request (Sec-Fetch-Site: ${fetchSite.slice(0, 20)})` };
  }
  if (origin === undefined) return { ok: true };
  const m = /^http:\/\/([^/]+)$/.exec(origin);
  if (!m || !hosts.has(m[1]!.toLowerCase())) return { ok: false, reason: `foreign Origin "${origin.slice(0, 80)}"` };
  return { ok: true };
}

/** Constant-time comparison of the per-process CSRF token. */
export function checkCsrf(given: string | undefined, expected: string): GuardResult {
  if (!given) return { ok: false, reason: 'missing CSRF token' };
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b) ? { ok: true } : { ok: false, reason: 'wrong CSRF token' };
}
