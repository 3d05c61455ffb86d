/**
 * A gate on stdio that cannot start still owes its client an answer: without one, the client shows only
 * "Connection closed" and the reason sits in a stderr log few people find. This answers the client's
 * first request (normally `initialize`) with a JSON-RPC error that carries the reason, then lets the
 * process exit. Nothing else is served: no tool is listed, nothing runs.
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '../wire-error.js';
import { LineServerTransport } from './stdio-server.js';

/** How long to wait for the client's first request: real clients send `initialize` as soon as they spawn the gate. */
export const START_FAILURE_WAIT_MS = 3000;

/**
 * Answers the first request on `input` (and any that arrived with it) with an error whose message is
 * `message`, then stops reading (the input is paused, so an input the client never closes does not keep the
 * process alive). Resolves once that answer is written, when the input ends, or after
 * `waitMs` with no request.
 * @param message the sentence the client shows: why the gate stopped and what to do next (no secrets).
 * @param code the lookfirst error code, sent as `data.code` for clients that read it.
 */
export async function answerStartFailure(input: Readable, output: Writable, message: string, code: string, waitMs = START_FAILURE_WAIT_MS): Promise<void> {
  const transport = new LineServerTransport(input, output);
  await new Promise<void>((resolve) => {
    const timer = setTimeout(finish, waitMs);
    function finish() {
      clearTimeout(timer);
      void transport.close();
      // A client may keep its end of stdin open after the error (the SDK client does): a flowing stdin
      // would keep this process alive for as long, a gate that serves nothing. Paused, it lets it exit.
      input.pause();
      resolve();
    }
    transport.onclose = finish;
    transport.onerror = () => {};
    transport.onmessage = (m) => {
      const req = m as { id?: unknown; method?: unknown };
      // Notifications get no answer; only a request can carry the error back.
      if (typeof req.method !== 'string' || (typeof req.id !== 'string' && typeof req.id !== 'number')) return;
      const error = { code: ErrorCode.InternalError, message, data: { code } };
      transport.send({ jsonrpc: '2.0', id: req.id, error } as unknown as JSONRPCMessage).then(finish, finish);
    };
    void transport.start();
  });
}
