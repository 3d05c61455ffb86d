/**
 * The temp-folder guard (test/temp-guard.ts) in a process of its own, as the test command loads it: it
 * fails a file that leaves something in its temp folder, and never one whose cleanup runs at exit, even
 * when that cleanup was registered after the guard (test/postgres.ts stops its server at exit: the guard
 * must not report the server's folder, nor remove it under the running server, before that).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const GUARD = fileURLToPath(new URL('./temp-guard.ts', import.meta.url));

/** Runs `script` (CommonJS) under the guard as a test file's process would; its status, stderr and guard folder. */
function underGuard(script: string): { status: number | null; stderr: string; dir: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_TEST_CONTEXT: 'child-v8' };
  // This file runs under the guard itself: the child must guard on its own, not count as one of ours.
  delete env.LOOKFIRST_TEMP_GUARD;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', GUARD, '-e', `${script};process.stdout.write(process.env.TMPDIR)`], {
    env,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stderr: r.stderr, dir: r.stdout };
}

describe('the temp-folder guard', () => {
  it('fails a file that leaves a folder behind, names it, and removes its temp folder', () => {
    const r = underGuard("require('fs').mkdtempSync(require('path').join(require('os').tmpdir(), 'left-'))");
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /temp-guard: this test file left 1 item\(s\) in its temp folder: left-/);
    assert.equal(existsSync(r.dir), false);
  });

  it('passes a file whose exit-time cleanup was registered after the guard, and checks after it', () => {
    const r = underGuard(
      "const fs=require('fs');const d=fs.mkdtempSync(require('path').join(require('os').tmpdir(),'server-'));" +
        "process.on('exit',()=>fs.rmSync(d,{recursive:true,force:true}))",
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
    assert.equal(existsSync(r.dir), false);
  });

  it('waits a moment at exit for a stopped process that is still removing its own folder, as Chromium does', () => {
    const r = underGuard(
      "const fs=require('fs');const d=fs.mkdtempSync(require('path').join(require('os').tmpdir(),'.org.chromium.Chromium.'));" +
        "require('child_process').spawn(process.execPath,['-e','setTimeout(()=>require(\\'fs\\').rmSync('+JSON.stringify(d)+',{recursive:true,force:true}),500)'],{detached:true,stdio:'ignore'}).unref()",
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stderr, '');
  });

  it("removes a folder whose test process was killed before its exit check, and never a running file's", () => {
    // A pid that has ended: a process started and waited for.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const orphan = join(tmpdir(), `lf-test-${dead}-orphan`);
    const live = join(tmpdir(), `lf-test-${process.pid}-live`);
    mkdirSync(orphan);
    writeFileSync(join(orphan, 'left-by-a-killed-file'), 'x');
    mkdirSync(live);
    try {
      const r = underGuard('0');
      assert.equal(r.status, 0, r.stderr);
      assert.equal(existsSync(orphan), false, 'the killed process folder is swept');
      assert.equal(existsSync(live), true, "a running process's folder is left alone");
    } finally {
      rmSync(orphan, { recursive: true, force: true });
      rmSync(live, { recursive: true, force: true });
    }
  });
});
