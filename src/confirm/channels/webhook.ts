/**
 * The webhook channel (`confirm.webhook`): POSTs each held call to a receiver (a chat bot, an on-call
 * tool), which answers later with `POST <decision_url>` (src/web/webhook-endpoint.ts). Each call gets its
 * own token, HMAC-SHA256(secret, call_id) (RFC 2104), so a leaked token opens only its own call. The
 * receiver must show the `*_display` fields, never the raw ones: only those have hidden and bidi
 * characters made visible. Delivery failures (receiver down, non-2xx, timeout) mean "could not show",
 * so the call goes to the other channels, or is denied when there are none.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { LookfirstError } from '../../errors.js';
import type { ApprovalRequest, OutOfBandChannel } from '../channel.js';
import { lookalikeLines } from '../lookalike.js';
import { oneLine, showHidden, showHiddenInJson } from '../visible.js';

/** Shortest shared secret accepted (characters). */
export const MIN_SECRET_CHARS = 32;

/**
 * Reads a secret file (one trailing newline dropped). Never puts the secret in a message.
 * @param setting the config key that names the file, for the message (e.g. `confirm.webhook.secret_file`).
 * @throws LookfirstError `code` when unreadable or shorter than 32 characters.
 */
export function loadSecret(path: string, setting: string, code: 'WEBHOOK_SECRET' | 'HTTP_TOKEN'): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new LookfirstError(
      code,
      `cannot read ${setting} ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}). Create it with at least ${MIN_SECRET_CHARS} random characters, e.g. openssl rand -hex 32 > ${path}`,
    );
  }
  if (text.length < MIN_SECRET_CHARS)
    throw new LookfirstError(
      code,
      `${setting} ${path} holds ${text.length} characters; at least ${MIN_SECRET_CHARS} are needed (e.g. openssl rand -hex 32 > ${path})`,
    );
  return text;
}

/** Reads the webhook's shared secret; see loadSecret. */
export function loadWebhookSecret(path: string): string {
  return loadSecret(path, 'confirm.webhook.secret_file', 'WEBHOOK_SECRET');
}

/** The per-call token: HMAC-SHA256(secret, call_id), hex. */
export function webhookToken(secret: string, callId: string): string {
  return createHmac('sha256', secret).update(callId, 'utf8').digest('hex');
}

/** Constant-time check of a token a receiver sent for a call. */
export function checkWebhookToken(secret: string, callId: string, token: unknown): boolean {
  if (typeof token !== 'string') return false;
  const want = Buffer.from(webhookToken(secret, callId));
  const got = Buffer.from(token);
  return got.length === want.length && timingSafeEqual(got, want);
}

/** The JSON body POSTed to the receiver. */
export interface WebhookPreview {
  call_id: string;
  purpose: 'execute' | 'unlock' | 'definition';
  /** Tool name with hidden characters escaped, on one line: show this. */
  tool_display: string;
  summary: string;
  /** Pretty JSON of the arguments with hidden characters as `\uXXXX`: show this. */
  arguments_display: string;
  /** Unified diff of a file write or edit, hidden characters escaped (absent when none). */
  diff_display?: string;
  /** Look-alike warnings; show each one. */
  warnings: string[];
  risk: string;
  client_display: string;
  /** Raw values, for machines only: they may hold characters that hide or reorder text. */
  tool: string;
  arguments: Record<string, unknown>;
  args_sha256: string;
  expires_at: string;
  decision_url: string;
  token: string;
}

/** Builds the preview for one call. */
export function webhookPreview(req: ApprovalRequest, secret: string, decisionBase: string): WebhookPreview {
  const { call } = req;
  return {
    call_id: call.callId,
    purpose: req.purpose ?? 'execute',
    tool_display: oneLine(call.tool),
    summary: oneLine(req.summary),
    arguments_display: showHiddenInJson(JSON.stringify(call.args, null, 2)),
    diff_display: req.diff === undefined ? undefined : showHidden(req.diff),
    warnings: lookalikeLines(req.lookalikes ?? []),
    risk: req.risk ?? 'medium',
    client_display: oneLine(showHidden(req.client ?? 'client')),
    tool: call.tool,
    arguments: call.args,
    args_sha256: call.argsSha256,
    expires_at: new Date(req.deadlineMs).toISOString(),
    decision_url: `${decisionBase}/decision/${encodeURIComponent(call.callId)}`,
    token: webhookToken(secret, call.callId),
  };
}

/** Options of the webhook channel. */
export interface WebhookChannelOptions {
  url: string;
  secret: string;
  /** PEM of a private CA that signed the receiver's certificate. */
  ca?: Buffer;
  /** Base of decision_url, e.g. `http://127.0.0.1:8472`. */
  decisionBase: () => string | undefined;
  timeoutMs: number;
}

/** The webhook channel. */
export function createWebhookChannel(opts: WebhookChannelOptions): OutOfBandChannel {
  return {
    name: 'webhook',
    availability: () => (opts.decisionBase() === undefined ? 'the decision listener is not running' : true),
    async present(req, signal) {
      const body = JSON.stringify(webhookPreview(req, opts.secret, opts.decisionBase()!));
      try {
        const status = await post(opts, body, AbortSignal.any([signal, AbortSignal.timeout(opts.timeoutMs)]));
        return status >= 200 && status < 300 ? true : `the receiver answered ${status}`;
      } catch (err) {
        return `the receiver cannot be reached (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
      }
    },
  };
}

function post(opts: WebhookChannelOptions, body: string, signal: AbortSignal): Promise<number> {
  const url = new URL(opts.url);
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(
      url,
      {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'lookfirst-webhook' },
        ...(url.protocol === 'https:' && opts.ca ? { ca: opts.ca } : {}),
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
