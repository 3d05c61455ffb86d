/**
 * `serve` refusing a tampered log and `verify-log` name the same line (1-based, the line of the file
 * that was changed), and serve's hint names the exact command to run, `--config` included: a person
 * who reads one and then runs the other must not be sent looking at two different lines.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { approve, FAKE_UPSTREAM, NODE, runCli, startAgent, tmp, writeConfig } from './helpers.js';

describe('a tampered audit log', () => {
  let dir: string;
  let config: string;
  let original: string;
  before(async () => {
    dir = tmp();
    config = writeConfig(
      dir,
      `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n`,
    );
    const agent = await startAgent(config, approve);
    for (let i = 0; i < 3; i++) await agent.call('echo', { i });
    await agent.call('write_note', { text: 'a note' });
    await agent.close();
    original = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
  });

  /** Writes the log with `change` applied to its lines, and runs both commands on it. */
  function both(change: (lines: string[]) => string[]) {
    const lines = original.split('\n').slice(0, -1);
    writeFileSync(join(dir, 'audit.jsonl'), `${change(lines).join('\n')}\n`);
    try {
      const serve = runCli(['serve', '--config', config]);
      const verify = runCli(['verify-log', '--config', config]);
      assert.equal(serve.status, 1, serve.stderr);
      assert.equal(verify.status, 2, verify.stdout);
      return { serve: serve.stderr, verify: verify.stdout };
    } finally {
      writeFileSync(join(dir, 'audit.jsonl'), original);
    }
  }

  const firstLine = (verify: string) => Number(/^line (\d+):/m.exec(verify)?.[1]);

  it('names the edited line in both, and the hint has --config with the path used', () => {
    const r = both((lines) => lines.map((l, i) => (i === 2 ? l.replace('"event":"read"', '"event":"reed"') : l)));
    assert.equal(firstLine(r.verify), 3);
    assert.match(r.verify, /^line 3: entry edited: its signature does not match its content$/m);
    assert.match(r.serve, /audit\.jsonl line 3: entry edited: its signature does not match its content; the log is damaged/);
    // The command as this process was started (cliName), then --config with the path serve was given.
    assert.ok(r.serve.includes(` verify-log --config ${config} to see every problem`), r.serve);
    assert.match(r.serve, /Run node \S*main\.js verify-log --config /);
  });

  it('names the same line in both for a removed entry', () => {
    const r = both((lines) => lines.filter((_, i) => i !== 4));
    const line = firstLine(r.verify);
    assert.equal(line, 5);
    assert.match(r.serve, new RegExp(`audit\\.jsonl line ${line}: entry #4 removed`));
  });

  it('names the same line in both for entries put out of order', () => {
    const r = both((lines) => {
      const out = [...lines];
      [out[1], out[3]] = [out[3]!, out[1]!];
      return out;
    });
    const line = firstLine(r.verify);
    assert.equal(line, 2);
    assert.match(r.serve, new RegExp(`audit\\.jsonl line ${line}: entry reordered`));
  });
});
