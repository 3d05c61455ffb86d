/**
 * A gate told to stop (SIGTERM) while calls wait for a person stops at once: the waits no longer keep
 * the process alive (their questions stay open in the state store for a restart), whatever the
 * confirmation deadline. Before, a 2026-07-28 client's open question kept the process running until its
 * deadline (`confirm.timeout_seconds`, minutes by default), long past a service manager's stop timeout.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { FAKE_UPSTREAM, NODE, tmp, writeConfig } from './helpers.js';
import { serveHttp, TOKEN } from './http-gate.js';
import { http } from './web-page.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'waiting-client', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

describe('a gate stopped while a call waits for a person', () => {
  it('exits on SIGTERM without waiting for the question’s deadline, and logs its stop', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'token.txt'), `${TOKEN}\n`);
    const config = writeConfig(
      dir,
      `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\nconfirm:\n  elicitation: false\n  timeout_seconds: 3600\n  hold_seconds: 1\n  web: { enabled: true, host: 127.0.0.1, port: 0 }\nhttp:\n  token_file: token.txt\n`,
    );
    const gate = await serveHttp(config);
    try {
      const r = await http(
        gate.port,
        'POST',
        '/mcp',
        { ...MCP_HEADERS, authorization: `Bearer ${TOKEN}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'write_note' },
        JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'write_note', arguments: { note: 'n' }, _meta: ENVELOPE } }),
      );
      assert.match(r.body, /NOT been executed yet/, r.body);
      gate.proc.kill('SIGTERM');
      // A liveness bound, not a timing goal: the deadline is an hour away.
      const exited = await Promise.race([
        new Promise<boolean>((resolve) => gate.proc.once('exit', () => resolve(true))),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 60_000).unref()),
      ]);
      assert.equal(exited, true, `the gate is still running a minute after SIGTERM: ${gate.stderr()}`);
      const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
      assert.match(log, /"event":"gate_stopped"[^\n]*"reason":"SIGTERM"/);
      assert.doesNotMatch(log, /"event":"executed"/, 'the waiting call never ran');
    } finally {
      await gate.kill('SIGKILL');
    }
  });
});
