/**
 * Test helpers for the approval page, over raw HTTP so that tests control Host, Origin and every other
 * header: find a page's address on the gate's stderr, wait for a pending call, post a decision.
 */
import { request } from 'node:http';
import { waitFor } from './helpers.js';

/** The page's port and access key, as the gate printed them on stderr. */
export interface PageAddress {
  port: number;
  key: string;
}

/** Reads the page address from the gate's stderr (waits up to 5 s for it). */
export async function pageAddress(stderr: () => string): Promise<PageAddress> {
  await waitFor(() => /approval page at/.test(stderr()), 5000);
  const [, port, key] = /approval page at http:\/\/127\.0\.0\.1:(\d+)\/\?k=([A-Za-z0-9_-]+)/.exec(stderr()) ?? [];
  return { port: Number(port), key: key! };
}

/** A raw HTTP request to the page (Host defaults to the page's own address). */
export function http(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}

/** A pending call as the page shows it. */
export interface PendingOnPage {
  callId: string;
  argsSha256: string;
  csrf: string;
  page: string;
}

/** Waits (up to 5 s) until the page shows a pending call whose card matches `match`. */
export async function pendingCall(page: PageAddress, match: RegExp = /name="call_id"/): Promise<PendingOnPage> {
  let html = '';
  for (let i = 0; i < 100 && !(match.test(html) && /name="call_id"/.test(html)); i++) {
    html = (await http(page.port, 'GET', `/?k=${page.key}`)).body;
    if (!(match.test(html) && /name="call_id"/.test(html))) await new Promise((r) => setTimeout(r, 50));
  }
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]+)"`).exec(html)![1]!;
  return { page: html, callId: field('call_id'), argsSha256: field('args_sha256'), csrf: field('csrf') };
}

/** The form body of a decision. */
export function decisionForm(p: PendingOnPage, decision: 'approve' | 'deny', approver: string, overrides: Record<string, string> = {}): string {
  return new URLSearchParams({ csrf: p.csrf, call_id: p.callId, args_sha256: p.argsSha256, decision, approver, ...overrides }).toString();
}

export const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** Posts a decision as the page's own form would; returns the HTTP status (303 when taken). */
export async function decide(
  page: PageAddress,
  p: PendingOnPage,
  decision: 'approve' | 'deny',
  approver: string,
  headers: Record<string, string> = {},
): Promise<number> {
  return (await http(page.port, 'POST', `/decide?k=${page.key}`, { ...FORM, ...headers }, decisionForm(p, decision, approver))).status;
}
