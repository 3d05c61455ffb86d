/**
 * Test helpers for the approval page, over raw HTTP so that tests control Host, Origin and every other
 * header: find a page's address on the gate's stderr, wait for a pending call, post a decision as the
 * page's own script does (JSON, CSRF header, same-origin).
 */
import { request } from 'node:http';
import { waitFor } from './helpers.js';

/** The page's port and access key, as the gate printed them on stderr. */
export interface PageAddress {
  port: number;
  key: string;
}

/** Reads the page address from the gate's stderr (waits up to 30 s for it: a loaded machine starts slowly). */
export async function pageAddress(stderr: () => string): Promise<PageAddress> {
  // The whole line, up to its newline: a chunk can end inside the address, and half an address is port 80.
  const line = /approval page at http:\/\/127\.0\.0\.1:(\d+)\/\?k=([A-Za-z0-9_-]+)\s/;
  await waitFor(() => line.test(stderr()), 30_000);
  const [, port, key] = line.exec(stderr()) ?? [];
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

/** A pending call as the page shows it, and the page's CSRF token. */
export interface PendingOnPage {
  callId: string;
  argsSha256: string;
  csrf: string;
  /** The card as the page's state gives it (display strings). */
  card: { tool: string; summary: string; args: string; warnings: string[]; client: string; risk: string; channels: string[] };
}

/** The page's CSRF token, read from the shell as the script reads it. */
export async function csrfOf(page: PageAddress): Promise<string> {
  const shell = (await http(page.port, 'GET', `/?k=${page.key}`)).body;
  return /name="lookfirst-csrf" content="([^"]+)"/.exec(shell)![1]!;
}

/** Waits (up to 5 s) until the page shows a pending call whose card matches `match`. */
export async function pendingCall(page: PageAddress, match: RegExp = /./): Promise<PendingOnPage> {
  const csrf = await csrfOf(page);
  for (let i = 0; i < 100; i++) {
    const state = JSON.parse((await http(page.port, 'GET', `/state.json?k=${page.key}`)).body) as { pending: PendingOnPage['card'][] };
    const card = state.pending.find((c) => match.test(JSON.stringify(c))) as (PendingOnPage['card'] & { callId: string; argsSha256: string }) | undefined;
    if (card) return { callId: card.callId, argsSha256: card.argsSha256, csrf, card };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no pending call appeared on the page within 5 s');
}

/** The JSON body of a decision. */
export function decisionBody(p: PendingOnPage, decision: 'approve' | 'deny', approver: string, overrides: Record<string, unknown> = {}): string {
  return JSON.stringify({ call_id: p.callId, args_sha256: p.argsSha256, decision, approver, ...overrides });
}

/** Headers the page's own script sends. */
export function jsonHeaders(p: { csrf: string }, port: number): Record<string, string> {
  return { 'content-type': 'application/json', 'x-lookfirst-csrf': p.csrf, origin: `http://127.0.0.1:${port}`, 'sec-fetch-site': 'same-origin' };
}

/** Posts a decision as the page's script would; returns the HTTP status (200 when taken). */
export async function decide(
  page: PageAddress,
  p: PendingOnPage,
  decision: 'approve' | 'deny',
  approver: string,
  headers: Record<string, string> = {},
  overrides: Record<string, unknown> = {},
): Promise<number> {
  return (
    await http(page.port, 'POST', `/decision?k=${page.key}`, { ...jsonHeaders(p, page.port), ...headers }, decisionBody(p, decision, approver, overrides))
  ).status;
}
