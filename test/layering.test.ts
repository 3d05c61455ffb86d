/**
 * The folders are the architecture: imports point one way (cli, web, demo → gateway → policy, confirm,
 * audit, config → errors, types, clock), peers in the middle layer do not import each other, and the pure
 * modules (policy/evaluate, audit/verify) touch no I/O.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from './helpers.js';

const SRC = join(ROOT, 'src');
// src/index.ts, the library entry, sits above everything it re-exports.
const RANK: Record<string, number> = { '.': 0, config: 1, policy: 1, confirm: 1, audit: 1, readback: 1, gateway: 2, web: 3, cli: 4, demo: 4, 'index.ts': 5 };

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.test.ts') ? [p] : [];
  });
}

const top = (file: string) => (relative(SRC, file) === 'index.ts' ? 'index.ts' : (relative(SRC, file).split('/').slice(0, -1)[0] ?? '.'));
const imports = (file: string) => [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)[^'"]*from '([^']+)'/gm)].map((m) => m[1]!);

describe('layering', () => {
  const files = sources(SRC);

  it('knows every folder under src/', () => {
    for (const f of files) assert.ok(top(f) in RANK, `${relative(SRC, f)}: folder "${top(f)}" has no layer; add it to RANK`);
  });

  it('imports only point down, never sideways between peers', () => {
    const bad: string[] = [];
    for (const f of files) {
      for (const spec of imports(f).filter((s) => s.startsWith('.'))) {
        const target = resolve(dirname(f), spec.replace(/\.js$/, '.ts'));
        const [from, to] = [top(f), top(target)];
        if (from !== to && RANK[to]! >= RANK[from]!) bad.push(`${relative(SRC, f)} → ${relative(SRC, target)}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it('keeps the decision and the verifier pure (no fs, net, process, clock)', () => {
    const pure = files.filter((f) => /policy\/evaluate\.ts$|audit\/verify\//.test(f));
    assert.ok(pure.length >= 3);
    for (const f of pure) {
      const text = readFileSync(f, 'utf8');
      for (const forbidden of ["'node:fs'", "'node:net'", "'node:http'", "'node:child_process'", 'process.env', 'Date.now']) {
        assert.ok(!text.includes(forbidden), `${relative(SRC, f)} uses ${forbidden}`);
      }
    }
  });
});
