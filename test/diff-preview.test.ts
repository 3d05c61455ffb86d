/**
 * File writes and edits through the real server-filesystem show a unified diff of what they would change,
 * read through the server's own read tool: in the client's question, on the web page, and it matches the
 * change the approved call actually made. A new file reads as a creation; an edit whose text is not in the
 * file says that it would fail.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FS_SERVER, NODE, startAgent, tmp, writeConfig } from './helpers.js';

function fsGate() {
  const dir = tmp();
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(dir, `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n`);
  return { dir, data, config };
}

describe('diffs of file writes and edits', () => {
  it('shows what a write and an edit would change, and the file then changes exactly so', async () => {
    const g = fsGate();
    const file = join(g.data, 'config.toml');
    writeFileSync(file, 'name = "app"\nport = 8080\ndebug = false\n');
    const agent = await startAgent(g.config, approve);
    try {
      await agent.call('write_file', { path: file, content: 'name = "app"\nport = 9090\ndebug = false\n' });
      const asked = agent.asked[0] ?? '';
      assert.match(asked, /What the file would become \(unified diff\):/);
      assert.match(asked, /-port = 8080\n\+port = 9090/);
      assert.equal(readFileSync(file, 'utf8'), 'name = "app"\nport = 9090\ndebug = false\n');

      await agent.call('edit_file', { path: file, edits: [{ oldText: 'debug = false', newText: 'debug = true' }] });
      assert.match(agent.asked[1] ?? '', /-debug = false\n\+debug = true/);
      assert.match(readFileSync(file, 'utf8'), /debug = true/);

      await agent.call('write_file', { path: join(g.data, 'new.txt'), content: 'fresh\n' });
      assert.match(agent.asked[2] ?? '', /--- \/dev\/null\t\(new file\)/);
      assert.match(agent.asked[2] ?? '', /\+fresh/);

      // CRLF endings and a look-alike block further down: the diff shows the edit where the server makes it.
      const cfg = join(g.data, 'sshd.txt');
      writeFileSync(cfg, 'allow_root = no\r\nport = 22\n# example (ignored):\nallow_root = no\nport = 22\n');
      await agent.call('edit_file', { path: cfg, edits: [{ oldText: 'allow_root = no\nport = 22', newText: 'allow_root = yes\nport = 22' }] });
      assert.match(agent.asked[3] ?? '', /note: the file has CRLF line endings/);
      assert.match(agent.asked[3] ?? '', /@@ -1,\d+ \+1,\d+ @@\n-allow_root = no\n\+allow_root = yes/);
      assert.equal(readFileSync(cfg, 'utf8'), 'allow_root = yes\nport = 22\n# example (ignored):\nallow_root = no\nport = 22\n');

      const failing = await agent.call('edit_file', { path: file, edits: [{ oldText: 'not there', newText: 'x' }] });
      assert.match(
        agent.asked[4] ?? '',
        /no diff: edit 1: its oldText is in the file neither exactly nor line by line with whitespace ignored, so the edit would fail/,
      );
      assert.ok(failing);
    } finally {
      await agent.close();
    }
  });
});
