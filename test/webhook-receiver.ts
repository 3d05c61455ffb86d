/**
 * A real webhook receiver for tests: HTTPS with a test CA's certificate (test/tls.ts), or plain HTTP on
 * loopback (`allow_insecure_loopback`); it records every preview the gate sends and answers 202. And the
 * receiver's side of a decision: a POST to the preview's decision_url with its token and hash.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { WebhookPreview } from '../src/confirm/channels/webhook.js';
import { waitFor } from './helpers.js';
import type { TestPki } from './tls.js';

/** A receiver on 127.0.0.1 (a free port). */
export class WebhookReceiver {
  previews: WebhookPreview[] = [];
  port = 0;
  private readonly server: Server;
  private readonly scheme: 'http' | 'https';

  /** @param pki HTTPS with its certificate (reach it as `localhost`); plain HTTP without. */
  constructor(pki?: TestPki) {
    const record = (req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        this.previews.push(JSON.parse(body) as WebhookPreview);
        res.writeHead(202).end();
      });
    };
    this.scheme = pki ? 'https' : 'http';
    this.server = pki ? createHttpsServer({ key: pki.key, cert: pki.cert }, record) : createHttpServer(record);
  }

  /** Listens; resolves to itself. */
  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  /** The hook address for `confirm.webhook.url`. */
  get url(): string {
    return `${this.scheme}://${this.scheme === 'https' ? 'localhost' : '127.0.0.1'}:${this.port}/hook`;
  }

  /** The first preview matching `match`, waiting up to `ms` for it. */
  async next(match: (p: WebhookPreview) => boolean = () => true, ms = 20_000): Promise<WebhookPreview> {
    assert.ok(await waitFor(() => this.previews.some(match), ms), 'no preview reached the receiver');
    return this.previews.find(match) as WebhookPreview;
  }

  close(): Promise<void> {
    return new Promise((r) => {
      this.server.closeAllConnections();
      this.server.close(() => r());
    });
  }
}

/** Answers a preview as a receiver would; resolves to the HTTP status (200 when taken). */
export async function answerPreview(p: WebhookPreview, decision: 'approve' | 'deny', actor: string): Promise<number> {
  const res = await fetch(p.decision_url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ decision, actor, args_sha256: p.args_sha256, token: p.token }),
  });
  await res.text();
  return res.status;
}
