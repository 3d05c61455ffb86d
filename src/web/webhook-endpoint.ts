/**
 * Where a webhook receiver answers: `POST /decision/<call_id>` with a JSON body
 * `{ "decision": "approve"|"deny", "actor": "...", "args_sha256": "...", "token": "..." }`.
 * The token must be HMAC-SHA256(secret, call_id) and the hash the one held, else 403 and nothing
 * executes; a call that is no longer waiting (decided, timed out, withdrawn, unknown) gets 409. A decision
 * is taken only for calls that were delivered to the webhook receiver. The actor (required) is as the
 * receiver reports it (trust `shared-secret`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { checkWebhookToken } from '../confirm/channels/webhook.js';
import type { PendingApprovals } from '../confirm/pending.js';
import { close, isJson, listen, parseJsonObject, readBody, safeName, sendJson } from './http.js';

/** Options of the decision endpoint. */
export interface WebhookEndpointOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  secret: string;
  pending: PendingApprovals;
  /** Called for every refused request (the gate logs them). */
  onRefused?: (reason: string) => void;
}

/** A running decision endpoint. */
export interface WebhookEndpoint {
  /** `http://host:port`, the default base of decision_url. */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts the endpoint.
 * @throws LookfirstError `WEB_UNAVAILABLE` when the address cannot be bound.
 */
export async function startWebhookEndpoint(opts: WebhookEndpointOptions): Promise<WebhookEndpoint> {
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => sendJson(res, 500, { error: `internal error: ${(err as Error).message}` }));
  });
  const refuse = (res: ServerResponse, status: number, reason: string) => {
    opts.onRefused?.(reason);
    sendJson(res, status, { error: reason });
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const m = /^\/decision\/([^/?#]{1,200})$/.exec(new URL(req.url ?? '/', 'http://x.invalid').pathname);
    if (!m) return sendJson(res, 404, { error: 'not found: decisions go to POST /decision/<call_id>' });
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' }, { allow: 'POST' });
    if (!isJson(req)) return sendJson(res, 415, { error: 'send application/json' });
    const text = await readBody(req);
    if (text === undefined) return sendJson(res, 413, { error: 'body too large' });
    const body = parseJsonObject(text);
    if (typeof body === 'string') return sendJson(res, 400, { error: body });
    let callId: string;
    try {
      callId = decodeURIComponent(m[1]!);
    } catch {
      return sendJson(res, 400, { error: 'the call id in the path is not valid' });
    }
    // The token is checked before anything about the call is revealed, even whether it exists.
    if (!checkWebhookToken(opts.secret, callId, body.token)) return refuse(res, 403, `webhook decision for ${callId.slice(0, 40)}: missing or wrong token`);
    if (body.decision !== 'approve' && body.decision !== 'deny') return sendJson(res, 400, { error: 'decision must be "approve" or "deny"' });
    const view = opts.pending.get(callId);
    if (!view) return sendJson(res, 409, { error: 'this call is no longer waiting (decided, timed out, or withdrawn)' });
    if (!view.channels.includes('webhook')) return refuse(res, 403, `webhook decision for ${callId.slice(0, 40)}: the call was not sent to the webhook`);
    if (body.args_sha256 !== view.argsSha256) return refuse(res, 403, `webhook decision for ${callId.slice(0, 40)}: args_sha256 does not match the held call`);
    const actor = safeName(typeof body.actor === 'string' ? body.actor : '');
    if (!actor) return sendJson(res, 400, { error: 'actor is required: name the person who decided (letters, digits, space, . _ @ -)' });
    const comment = typeof body.comment === 'string' ? body.comment.slice(0, 500) : undefined;
    const result = opts.pending.decide(callId, view.argsSha256, body.decision === 'approve', {
      channel: 'webhook',
      actor: `webhook:${actor}`,
      trust: 'shared-secret',
      comment,
    });
    if (!result.ok) return sendJson(res, result.status === 'gone' ? 409 : 403, { error: result.reason });
    sendJson(res, 200, { ok: true, decision: body.decision });
  }

  const port = await listen(server, opts.host, opts.port, 'webhook decision endpoint', 'confirm.webhook.listen_port');
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return { url: `http://${shown}:${port}`, port, close: () => close(server) };
}
