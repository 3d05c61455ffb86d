/**
 * Where a webhook receiver answers: `POST /decision/<call_id>` with a JSON body
 * `{ "decision": "approve"|"deny", "actor": "...", "args_sha256": "...", "token": "..." }`.
 * The token must be HMAC-SHA256(secret, call_id) and the hash the one held, else 403 and nothing
 * executes; a call that is no longer waiting (decided, timed out, withdrawn, unknown) gets 409 saying
 * which, and that late or replayed decision is reported to `onRefused` (the gate logs it, rate-limited,
 * as it logs the 403s): a receiver whose people decide too late, or a replay, shows in the log. A decision
 * is taken only for calls that were delivered to the webhook receiver. The actor (required) is as the
 * receiver reports it (trust `shared-secret`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { checkWebhookToken } from '../confirm/channels/webhook.js';
import type { EndedHow, PendingApprovals } from '../confirm/pending.js';
import { close, isJson, listen, parseJsonObject, readBody, safeName, sendJson } from './http.js';
import { createListener, type ListenerLimits, SMALL_REQUEST_TIMEOUT_MS } from './listener.js';

/** Options of the decision endpoint. */
export interface WebhookEndpointOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  secret: string;
  pending: PendingApprovals;
  /** Called for every refused request (the gate logs them). */
  onRefused?: (reason: string) => void;
  /** Overrides of the connection limits (tests use short timeouts); see listener.ts. */
  limits?: Partial<ListenerLimits>;
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
  const server = createListener(
    (req, res) => {
      handle(req, res).catch((err) => sendJson(res, 500, { error: `internal error: ${(err as Error).message}` }));
    },
    { requestTimeoutMs: SMALL_REQUEST_TIMEOUT_MS, ...opts.limits },
  );
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
    const late = (how: EndedHow | undefined) => refuse(res, 409, `webhook decision for ${callId.slice(0, 40)}: ${lateReason(how)}`);
    const view = opts.pending.get(callId);
    if (!view) return late(opts.pending.ended(callId));
    if (!view.channels.includes('webhook')) return refuse(res, 403, `webhook decision for ${callId.slice(0, 40)}: the call was not sent to the webhook`);
    if (body.args_sha256 !== view.argsSha256) return refuse(res, 403, `webhook decision for ${callId.slice(0, 40)}: args_sha256 does not match the held call`);
    const actor = safeName(typeof body.actor === 'string' ? body.actor : '');
    if (!actor) return sendJson(res, 400, { error: 'actor is required: name the person who decided (letters, digits, space, . _ @ -)' });
    const comment = typeof body.comment === 'string' ? body.comment.slice(0, 500) : undefined;
    const result = await opts.pending.decide(callId, view.argsSha256, body.decision === 'approve', {
      channel: 'webhook',
      actor: `webhook:${actor}`,
      trust: 'shared-secret',
      comment,
      // For the receipt: what this endpoint checked (pending.decide adds call_open and stamps the time).
      evidence: {
        method: 'webhook',
        decidedAtMs: 0,
        checks: [
          { name: 'shared_secret', ok: true, detail: 'token = HMAC-SHA256(secret, call_id)' },
          { name: 'action_unchanged', ok: true, detail: `args_sha256 ${view.argsSha256.slice(0, 12)}…` },
        ],
      },
    });
    if (!result.ok)
      return result.status === 'gone' ? late(opts.pending.ended(callId)) : refuse(res, 403, `webhook decision for ${callId.slice(0, 40)}: ${result.reason}`);
    sendJson(res, 200, { ok: true, decision: body.decision });
  }

  /** Why a decision came too late, in words for the receiver and the log (no secrets, no arguments). */
  function lateReason(how: EndedHow | undefined): string {
    if (!how) return 'no such call is waiting (decided, timed out or withdrawn, or from before the gate restarted); nothing was run';
    if (how.kind === 'decided') return `replayed: the call was already ${how.approved ? 'approved' : 'denied'} by ${how.by}; this decision changes nothing`;
    if (how.kind === 'timed out') return 'too late: nobody decided before the confirmation timeout (confirm.timeout_seconds), so nothing was run';
    return `too late: the call was withdrawn (${how.reason}); nothing was run`;
  }

  const port = await listen(server, opts.host, opts.port, 'webhook decision endpoint', 'confirm.webhook.listen_port');
  const shown = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return { url: `http://${shown}:${port}`, port, close: () => close(server) };
}
