/**
 * The redaction hook (`redact.hook`) end to end: the person sees the hook's copy of the preview, the
 * binding (call id, args_sha256) stays the gate's and the approved arguments run as the agent sent them;
 * a hook that throws, hangs, or returns nonsense denies the call and runs nothing; a hook that cannot be
 * loaded stops the gate at start with a sentence saying what to fix.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FS_SERVER, NODE, runCli, startAgent, textOf, tmp, verdictOf, writeConfig } from './helpers.js';

const HOOKS = `
import { existsSync, writeFileSync } from 'node:fs';
export function redact(p) {
  return {
    ...p,
    summary: p.summary.replaceAll('project-falcon', '[codename]'),
    diff: p.diff?.replaceAll('project-falcon', '[codename]'),
    arguments: { ...p.arguments, content: '[content hidden by the hook]' },
    call_id: 'forged-id',
    args_sha256: '0'.repeat(64),
  };
}
export function throws() { throw new Error('the hook refuses'); }
// Hangs the first time only (a marker file, since the gate starts a fresh worker after a hang).
const marker = new URL('./hung', import.meta.url);
export function hangsOnce(p) {
  if (!existsSync(marker)) {
    writeFileSync(marker, '');
    for (;;) {}
  }
  return p;
}
export function nonsense() { return 42; }
export const notAFunction = 1;
`;

function setup(hook: string, timeoutMs = 1000) {
  const dir = tmp('lf-redact-');
  const data = join(dir, 'data');
  mkdirSync(data);
  writeFileSync(join(dir, 'hooks.mjs'), HOOKS);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nredact:\n  hook: ./hooks.mjs#${hook}\n  timeout_ms: ${timeoutMs}\n`,
  );
  return { dir, data, config };
}

describe('redaction hook', () => {
  it('shows the person its redacted copy, keeps the binding, and runs the arguments the agent sent', async () => {
    const env = setup('redact');
    const agent = await startAgent(env.config, approve);
    try {
      const path = join(env.data, 'plan.txt');
      const r = await agent.call('write_file', { path, content: 'launch project-falcon on monday' });
      assert.equal(verdictOf(r)?.outcome, 'executed', JSON.stringify(r));
      const asked = agent.asked[0] ?? '';
      assert.doesNotMatch(asked, /project-falcon/);
      assert.match(asked, /\[content hidden by the hook\]/);
      assert.doesNotMatch(asked, /forged-id|0{64}/);
      assert.match(asked, new RegExp(`sha256 ${String(verdictOf(r)?.args_sha256).slice(0, 16)}`), 'the hash shown is the gate’s');
      assert.equal(readFileSync(path, 'utf8'), 'launch project-falcon on monday');
    } finally {
      await agent.close();
    }
  });

  for (const [hook, reason] of [
    ['throws', /redaction hook \(throws in .*\) threw: the hook refuses/],
    ['nonsense', /redaction hook \(nonsense in .*\) returned something that is not an object/],
  ] as const) {
    it(`denies the call when the hook ${hook === 'throws' ? 'throws' : 'returns something that is not a preview'}, and runs nothing`, async () => {
      const env = setup(hook);
      const agent = await startAgent(env.config, approve);
      try {
        const path = join(env.data, 'x.txt');
        const r = await agent.call('write_file', { path, content: 'x' });
        assert.equal(verdictOf(r)?.outcome, 'denied');
        assert.match(textOf(r), reason);
        assert.equal(agent.asked.length, 0, 'nobody was shown an unredacted preview');
        assert.equal(existsSync(path), false);
      } finally {
        await agent.close();
      }
    });
  }

  it('denies a call whose hook runs past its time limit, then works again with a fresh worker', async () => {
    const env = setup('hangsOnce', 500);
    const agent = await startAgent(env.config, approve);
    try {
      const first = join(env.data, 'a.txt');
      const r = await agent.call('write_file', { path: first, content: 'a' });
      assert.equal(verdictOf(r)?.outcome, 'denied');
      assert.match(textOf(r), /did not answer within redact\.timeout_ms \(500 ms\)/);
      assert.equal(existsSync(first), false);
      const second = join(env.data, 'b.txt');
      assert.equal(verdictOf(await agent.call('write_file', { path: second, content: 'b' }))?.outcome, 'executed');
      assert.equal(readFileSync(second, 'utf8'), 'b');
    } finally {
      await agent.close();
    }
  });

  it('stops the gate at start when the export is not a function, saying what to fix', () => {
    const env = setup('notAFunction');
    const r = runCli(['serve', '--config', env.config]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /redact\.hook: .*hooks\.mjs has no exported function "notAFunction"/);
    assert.doesNotMatch(r.stderr, /a bug/, 'a config problem, not a bug');
  });

  it('says a missing hook file is a path to fix, not a bug', () => {
    const env = setup('redact');
    writeFileSync(env.config, readFileSync(env.config, 'utf8').replace('./hooks.mjs', './nowhere.mjs'));
    const r = runCli(['serve', '--config', env.config]);
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /redact\.hook: cannot load .*nowhere\.mjs.*no such file: fix the path/);
    assert.doesNotMatch(r.stderr, /a bug/);
  });
});
