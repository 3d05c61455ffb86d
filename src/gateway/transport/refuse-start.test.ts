import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { answerStartFailure } from './refuse-start.js';

/** Runs answerStartFailure on in-memory streams; returns what it wrote once it resolved. */
async function run(feed: (input: PassThrough) => void, waitMs = 2000): Promise<unknown[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  let written = '';
  output.on('data', (c: Buffer) => {
    written += c.toString();
  });
  const done = answerStartFailure(input, output, 'lookfirst could not start: the reason', 'AUDIT_LOCKED', waitMs);
  feed(input);
  await done;
  return written
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);
}

describe('a gate that cannot start, on stdio', () => {
  it('answers each request with the reason, and no notification', async () => {
    const sent = await run((input) => {
      input.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
      input.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n');
      input.write('{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n');
    });
    const error = { code: -32603, message: 'lookfirst could not start: the reason', data: { code: 'AUDIT_LOCKED' } };
    assert.deepEqual(sent, [
      { jsonrpc: '2.0', id: 1, error },
      { jsonrpc: '2.0', id: 2, error },
    ]);
  });

  it('stops waiting when the input ends, or after the wait, with no request', async () => {
    assert.deepEqual(await run((input) => input.end()), []);
    const t0 = performance.now();
    assert.deepEqual(await run(() => {}, 50), []);
    assert.ok(performance.now() - t0 < 1000);
  });

  it('leaves an input the client never closes paused, so it keeps no process alive', async () => {
    const input = new PassThrough();
    const done = answerStartFailure(input, new PassThrough(), 'the reason', 'AUDIT_LOCKED', 2000);
    input.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n');
    await done;
    assert.equal(input.isPaused(), true);
  });
});
