/**
 * `lookfirst check` and `lookfirst pilot-status` in front of hostile upstreams (fakes: no real server
 * misbehaves on purpose): one that dies printing terminal escape sequences on stderr, one that lists
 * tools whose names carry escapes, C1 controls and bidi overrides, one that floods stdout with a line
 * that never ends. Nothing they send reaches the terminal raw, in lines or in --json, and the check
 * ends within its --timeout.
 */
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NODE, runCliAsync, tmp, writeConfig } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const cli = (args: string[]) => runCliAsync(args, 90_000);

const EVIL = 'x\u001b]0;pwned\u0007\u001b[2J\u009b31m\u202eexe.txt\u2028next';
/** Anything a terminal acts on or reorders with: C0 but newline, DEL, C1, bidi, line separators. */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

/** A stdio MCP server in a few lines: answers initialize and tools/list with the tools given. */
const lister = (tools: unknown[]) => `
const rl = require('node:readline').createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\\n');
rl.on('line', (l) => {
  const m = JSON.parse(l);
  if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'evil', version: '1' } } });
  else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: ${JSON.stringify(tools)} } });
  else if (m.id !== undefined) send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
});`;

function configWith(scripts: Record<string, string>, extra = ''): string {
  const dir = tmp('lf-check-hostile-');
  dirs.push(dir);
  let yaml = 'upstreams:\n';
  for (const [name, script] of Object.entries(scripts)) {
    const file = join(dir, `${name}.cjs`);
    writeFileSync(file, script);
    yaml += `  ${name}:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([file])}\n`;
  }
  return writeConfig(dir, yaml + extra);
}

describe('check and pilot-status in front of hostile upstreams', () => {
  it("never print an upstream's escape sequences, C1 controls or bidi characters raw, in lines or --json", { timeout: 120_000 }, async () => {
    const config = configWith(
      {
        dies: `process.stderr.write(${JSON.stringify(`fatal: ${EVIL}\n`)}); process.exit(1);`,
        names: lister([
          { name: EVIL, description: 'does something', inputSchema: { type: 'object' } },
          { name: `update_${EVIL}`, description: 'x', inputSchema: { type: 'object' } },
        ]),
      },
      `rules:\n  tools:\n    ${JSON.stringify(`names__${EVIL}`)}: { action: confirm }\n    "nothing_*": { action: deny }\n`,
    );
    for (const args of [['check'], ['check', '--json'], ['pilot-status'], ['pilot-status', '--json']]) {
      const r = await cli([...args, '--config', config, '--timeout', '5']);
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.doesNotMatch(r.stdout, RAW, `${args.join(' ')} printed a raw control: ${JSON.stringify(r.stdout)}`);
      assert.doesNotMatch(r.stderr, RAW, `${args.join(' ')} printed a raw control on stderr: ${JSON.stringify(r.stderr)}`);
      if (args.includes('--json')) JSON.parse(r.stdout);
    }
    const plain = await cli(['check', '--config', config, '--timeout', '5']);
    assert.match(plain.stdout, /upstream dies .*could not be listed/);
    assert.match(plain.stdout, /\\u001B\]0;pwned/, 'the escape is shown as text');
  });

  it("never prints an http upstream's url credentials, an env value or a postgres password, in lines, --json or errors", { timeout: 120_000 }, async () => {
    const dir = tmp('lf-check-secrets-');
    dirs.push(dir);
    const config = writeConfig(
      dir,
      'upstreams:\n  a:\n    url: "http://user:hunter2pass@127.0.0.1:1/mcp?token=SECRETTOKEN123"\n  b:\n    url: "http://127.0.0.1:1/mcp?key=SECRETKEY456"\n' +
        'store: { kind: postgres, url: "postgres://bob:pgsecretpw@127.0.0.1:1/db" }\n',
    );
    const other = tmp('lf-check-secrets-');
    dirs.push(other);
    const broken = writeConfig(other, `upstreams:\n  a:\n    command: ${JSON.stringify(NODE)}\n    env: { API_KEY: 123456789012345 }\n`, { keygen: false });
    for (const [file, args] of [
      [config, ['check']],
      [config, ['check', '--json']],
      [config, ['pilot-status']],
      [config, ['pilot-status', '--json']],
      [broken, ['check']],
      [broken, ['check', '--json']],
    ] as const) {
      const r = await cli([...args, '--config', file, '--timeout', '2']);
      assert.ok(r.status === 2 || r.status === 1, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.doesNotMatch(
        r.stdout + r.stderr,
        /hunter2pass|SECRETTOKEN123|SECRETKEY456|pgsecretpw|123456789012345/,
        `${args.join(' ')}: ${r.stdout}${r.stderr}`,
      );
    }
  });

  it('lists an upstream whose one page holds 150 000 tools (a spread push overflowed the stack)', { timeout: 180_000 }, async () => {
    const config = configWith({ many: lister(Array.from({ length: 150_000 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } }))) });
    const r = await cli(['check', '--json', '--config', config, '--timeout', '60']);
    const checks = (JSON.parse(r.stdout) as { checks: { id: string; level: string; message: string }[] }).checks;
    const many = checks.find((c) => c.id === 'upstream.many');
    assert.equal(many?.level, 'OK', JSON.stringify(many));
    assert.match(many?.message ?? '', /150000 tools/);
  });

  it('ends within its --timeout when an upstream floods stdout with a line that never ends', { timeout: 120_000 }, async () => {
    const config = configWith({ flood: `const b = Buffer.alloc(1 << 20, 0x61); const go = () => process.stdout.write(b, go); go();` });
    const started = Date.now();
    const r = await cli(['check', '--config', config, '--timeout', '2']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /upstream flood .*could not be listed/);
    assert.ok(Date.now() - started < 60_000, `took ${Date.now() - started} ms`);
  });
});
