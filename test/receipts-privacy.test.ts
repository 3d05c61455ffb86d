/**
 * Receipts under the privacy filter, end to end (the real gate in pending mode, the real
 * server-filesystem, the approval page as the person): a receipt is public evidence, so the card text it
 * keeps is masked as the audit log masks its own; no private value that the log keeps out is in it, and it
 * still verifies.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FS_SERVER, NODE, runCli, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { decide, pageAddress, pendingCall } from './web-page.js';

const EMAIL = 'jane.doe@example.org';
const IBAN = 'DE89 3704 0044 0532 0130 00';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('a receipt under the privacy filter', () => {
  it('keeps the card text with private values masked, as the log does, and verifies', async () => {
    const dir = tmp('lf-receipt-privacy-');
    dirs.push(dir);
    const data = join(dir, 'data');
    mkdirSync(data);
    const config = writeConfig(
      dir,
      `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nprivacy:\n  ttl_seconds: 600\nconfirm:\n  mode: pending\n  timeout_seconds: 60\n  web:\n    enabled: true\n    port: 0\n`,
    );
    const agent = await startAgent(config);
    try {
      // The agent's own arguments name a private value (a file named for an e-mail address): the person
      // sees it on the card; the public receipt must not keep it.
      const first = await agent.call('write_file', { path: join(data, `${EMAIL}.txt`), content: `IBAN ${IBAN}` });
      const id = ((first._meta as Record<string, unknown>).lookfirst_answer as { pending_id: string }).pending_id;
      const page = await pageAddress(agent.stderr);
      const card = await pendingCall(page, /example/);
      assert.equal(await decide(page, card, 'approve', 'alice'), 200);
      const ran = await agent.call('lookfirst_confirm', { pending_id: id });
      assert.equal(verdictOf(ran)?.outcome, 'executed', JSON.stringify(ran));
    } finally {
      await agent.close();
    }
    const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
    assert.ok(!log.includes(EMAIL), 'the log keeps the value out');
    const files = readdirSync(join(dir, 'receipts'));
    assert.equal(files.length, 1);
    const file = join(dir, 'receipts', files[0]!);
    const text = readFileSync(file, 'utf8');
    assert.ok(!text.includes(EMAIL), `the receipt holds ${EMAIL}: ${text}`);
    assert.ok(!text.includes(IBAN));
    const shown = (JSON.parse(text) as { what: { shown?: string } }).what.shown ?? '';
    assert.match(shown, /write_file: writes \d+ bytes to .*\[\[EMAIL\]\]/);
    const verified = runCli(['receipt', 'verify', file, '--config', config]);
    assert.equal(verified.status, 0, verified.stdout + verified.stderr);
  });
});
