/**
 * `lookfirst wrap` and `unwrap` as a user runs them: the built CLI on copies of real client config files
 * (test/fixtures/clients) in temp folders. Wrapping rewrites the client's file to start the gate, puts
 * its servers in lookfirst.yaml, and unwrap puts the original back byte for byte; a dry run writes
 * nothing; an already-wrapped file is refused. One suite starts the gate exactly as the rewritten
 * Claude Code file says, with the SDK client, in front of the real filesystem server.
 */
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse as parseToml } from '@decimalturn/toml-patch';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseJsonc } from 'jsonc-parser';
import { loadConfig } from '../src/config/load.js';
import { FS_SERVER, MEMORY_SERVER, NODE, ROOT, runCli, tmp } from './helpers.js';

const FIXTURES = join(ROOT, 'test/fixtures/clients');
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A temp folder holding a copy of one fixture; returns the copy's path. */
function copyOf(fixture: string, name = fixture.split('/').pop()!): string {
  const dir = tmp('lf-wrap-');
  dirs.push(dir);
  const file = join(dir, name);
  copyFileSync(join(FIXTURES, fixture), file);
  return file;
}

interface Summary {
  file: string;
  gate_config: string;
  server: string;
  command: string;
  args: string[];
  moved: { name: string; upstream: string; kind: string }[];
  kept: { name: string; reason: string }[];
  timeout: { setting: string; value?: number; note: string };
  diff?: string;
}

function wrap(client: string, file: string, ...extra: string[]): Summary {
  const r = runCli(['wrap', client, '--config-file', file, '--json', ...extra]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Summary;
}

const CASES = [
  { client: 'claude-desktop', fixture: 'claude_desktop_config.json', key: 'mcpServers', moved: ['filesystem', 'github'], secret: 'ghp_exampleSecretValue123' },
  { client: 'claude-code', fixture: 'claude-code.mcp.json', key: 'mcpServers', moved: ['files', 'linear'], secret: 'lin_api_exampleSecret' },
  { client: 'cursor', fixture: 'cursor.mcp.json', key: 'mcpServers', moved: ['postgres', 'notion'], secret: 'hunter2' },
  { client: 'vscode', fixture: 'vscode.mcp.json', key: 'servers', moved: ['memory', 'github'], secret: undefined },
  { client: 'gemini', fixture: 'gemini.settings.json', key: 'mcpServers', moved: ['pythonTools', 'httpServer'], secret: 's3cret' },
  { client: 'codex', fixture: 'codex.config.toml', key: 'mcp_servers', moved: ['files'], secret: 'codex-example-secret' },
] as const;

for (const c of CASES) {
  describe(`wrap ${c.client} on ${c.fixture}`, () => {
    const file = copyOf(c.fixture);
    const original = readFileSync(file);
    const s = wrap(c.client, file);
    const text = readFileSync(file, 'utf8');
    const doc = (c.client === 'codex' ? parseToml(text) : parseJsonc(text)) as Record<string, Record<string, { command: string; args: string[] }>>;

    it('leaves a file that parses, with one entry starting the gate on the absolute lookfirst.yaml', () => {
      const entry = doc[c.key]?.lookfirst;
      assert.ok(entry);
      assert.equal(entry.command, NODE);
      assert.deepEqual(entry.args, [join(ROOT, 'dist/cli/main.js'), 'serve', '--config', s.gate_config]);
      for (const m of c.moved) assert.equal(doc[c.key]?.[m], undefined, `${m} should have moved`);
      for (const k of s.kept) assert.ok(doc[c.key]?.[k.name], `${k.name} should have stayed`);
    });

    it('puts the moved servers in a lookfirst.yaml the gate loads', () => {
      const config = loadConfig(s.gate_config);
      assert.deepEqual(
        config.upstreams.map((u) => u.name),
        s.moved.map((m) => m.upstream),
      );
      assert.deepEqual(
        s.moved.map((m) => m.name),
        [...c.moved],
      );
    });

    it('raises the timeout where the client has a setting, and says what it did', () => {
      const entry = doc[c.key]?.lookfirst as unknown as { tool_timeout_sec?: number; timeout?: number } | undefined;
      if (c.client === 'codex') assert.equal(entry?.tool_timeout_sec, 195);
      if (c.client === 'gemini') assert.equal(entry?.timeout, 195_000);
      assert.ok(s.timeout.note.length > 0);
    });

    // One client is enough: the check is the same for all, and each CLI start costs seconds on a busy machine.
    it('refuses to wrap the same file twice', { skip: c.client !== 'claude-code' && 'checked once, on claude-code' }, () => {
      const r = runCli(['wrap', c.client, '--config-file', file]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /wrapped already/);
    });

    it('unwrap restores the original byte for byte and removes its backup', () => {
      const r = runCli(['unwrap', c.client, '--config-file', file]);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(readFileSync(file).equals(original));
      assert.ok(!existsSync(`${file}.lookfirst-backup`) && !existsSync(`${file}.lookfirst-wrap.json`));
    });

    it('a dry run prints the diff with secrets masked and writes nothing', () => {
      const dir = tmp('lf-wrap-dry-');
      dirs.push(dir);
      const f = join(dir, c.fixture);
      copyFileSync(join(FIXTURES, c.fixture), f);
      const r = runCli(['wrap', c.client, '--config-file', f, '--dry-run']);
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stdout, /^-{3} /m);
      assert.match(r.stdout, /\+{3} .*lookfirst\.yaml/);
      if (c.secret !== undefined) {
        assert.ok(!r.stdout.includes(c.secret), 'a secret was printed');
        assert.match(r.stdout, /\*\*\*/);
      }
      assert.deepEqual(readdirSync(dir), [c.fixture]);
      assert.ok(readFileSync(f).equals(readFileSync(join(FIXTURES, c.fixture))));
    });
  });
}

describe('refusals', () => {
  for (const [client, fixture] of [
    ['claude-code', 'wrapped/claude-code.mcp.json'],
    ['codex', 'wrapped/codex.config.toml'],
  ] as const) {
    it(`refuses an already-wrapped ${client} file and writes nothing`, () => {
      const file = copyOf(fixture);
      const r = runCli(['wrap', client, '--config-file', file]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /already runs the gate/);
      assert.deepEqual(readdirSync(join(file, '..')), [file.split('/').pop()]);
    });
  }

  it('names the line and column of a syntax error, and writes nothing', () => {
    const file = copyOf('invalid.mcp.json');
    const r = runCli(['wrap', 'cursor', '--config-file', file, '--json']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /invalid\.mcp\.json: not valid JSON \(line 5, column 7/);
    assert.equal((JSON.parse(r.stdout) as { error: { code: string } }).error.code, 'WRAP_INVALID');
    assert.deepEqual(readdirSync(join(file, '..')), ['invalid.mcp.json']);
  });

  it('refuses to unwrap a file whose servers changed since wrap, and --force keeps the edit beside the restored file', () => {
    const file = copyOf('cursor.mcp.json');
    const original = readFileSync(file);
    wrap('cursor', file);
    const edited = readFileSync(file, 'utf8').replace('"mcpServers": {', '"mcpServers": {\n        "mine": { "command": "added-later" },');
    writeFileSync(file, edited);
    const r = runCli(['unwrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /changed since `lookfirst wrap`.*--force/s);
    assert.equal(readFileSync(file, 'utf8'), edited);
    const f = runCli(['unwrap', 'cursor', '--config-file', file, '--force']);
    assert.equal(f.status, 0, f.stderr);
    assert.ok(readFileSync(file).equals(original));
    assert.equal(readFileSync(`${file}.lookfirst-edited`, 'utf8'), edited);
  });

  it('when the client changed only the rest of its file, unwrap puts back the servers block and keeps the rest', () => {
    const file = copyOf('claude-code.mcp.json', '.claude.json');
    const original = readFileSync(file, 'utf8');
    wrap('claude-code', file);
    // As Claude Code does with its own state in ~/.claude.json.
    writeFileSync(file, readFileSync(file, 'utf8').replace('{\n', '{\n  "numStartups": 7,\n'));
    const r = runCli(['unwrap', 'claude-code', '--config-file', file, '--json']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { restored: string }).restored, 'servers-only');
    assert.equal(readFileSync(file, 'utf8'), original.replace('{\n', '{\n  "numStartups": 7,\n'));
  });

  it('unwrap with nothing to restore says so', () => {
    const file = copyOf('cursor.mcp.json');
    const r = runCli(['unwrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /nothing to restore/);
  });
});

describe('when a wrapped Claude Code project is started the way its .mcp.json says', () => {
  const dir = tmp('lf-wrap-run-');
  dirs.push(dir);
  const data = join(dir, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'hello.txt'), 'hello\n');
  const mcp = join(dir, '.mcp.json');
  writeFileSync(mcp, `${JSON.stringify({ mcpServers: { files: { type: 'stdio', command: NODE, args: [FS_SERVER, data] } } }, null, 2)}\n`);
  // An existing gate config (its page on a free port) that wrap adds to.
  writeFileSync(
    join(dir, 'lookfirst.yaml'),
    `# my gate\nupstreams:\n  memory:\n    command: ${JSON.stringify(NODE)}\n    args: [${JSON.stringify(MEMORY_SERVER)}]\nconfirm:\n  web: { enabled: true, port: 0 }\n`,
  );
  let client: Client | undefined;
  after(async () => {
    await client?.close();
  });

  it('lists the tools of both upstreams through the gate', async () => {
    const s = wrap('claude-code', mcp);
    assert.deepEqual(
      s.moved.map((m) => m.upstream),
      ['files'],
    );
    const k = runCli(['keygen', '--config', s.gate_config]);
    assert.equal(k.status, 0, k.stderr);
    const entry = (JSON.parse(readFileSync(mcp, 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers.lookfirst!;
    client = new Client({ name: 'wrap-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: entry.command, args: entry.args, stderr: 'pipe', env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1' } }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('files__read_text_file'), names.join(', '));
    assert.ok(
      names.some((n) => n.startsWith('memory__')),
      names.join(', '),
    );
    assert.match(readFileSync(s.gate_config, 'utf8'), /^# my gate\n/);
  });
});
