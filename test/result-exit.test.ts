/**
 * One exit for tool results (issue 12 §2): every `tools/call` the gate sends on a client's behalf goes
 * through gateway/tool-result.ts, which remembers an untrusted source's answer, so that no path can
 * forget taint. A new place that sends `tools/call` upstream fails this test until it is listed here
 * with the reason it needs no taint, or routed through the exit.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers.js';

const SRC = join(ROOT, 'src');

/** Files that send tools/call upstream, and why each is safe. */
const SENDERS: Record<string, string> = {
  'gateway/tool-result.ts': 'the exit itself',
  'gateway/fast-path.ts': 'raw reads of tools that are not untrusted sources (it refuses them)',
  'gateway/diff-preview.ts': "the gate's own read for a preview a person sees; never returned to the client",
  'gateway/readback.ts': "the gate's own read-back after a write; never returned to the client as a result",
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

describe('the one exit for tool results', () => {
  it('is the only place that sends tools/call upstream for a client', () => {
    const senders = sources(SRC)
      .filter((f) => /\.(?:request|sendRaw)\(\s*'tools\/call'/.test(readFileSync(f, 'utf8')))
      .map((f) => relative(SRC, f));
    assert.deepEqual(senders.sort(), Object.keys(SENDERS).sort());
  });

  it('keeps untrusted-source tools off the raw fast path', () => {
    assert.match(readFileSync(join(SRC, 'gateway/fast-path.ts'), 'utf8'), /isUntrusted\(this\.deps, tool\)\) return false/);
  });
});
