/**
 * `lookfirst wrap` and `unwrap` as a user runs them: the built CLI on copies of real client config files
 * (test/fixtures/clients) in temp folders. Wrapping rewrites the client's file to start the gate, puts
 * its servers in lookfirst.yaml, and unwrap puts the original back byte for byte; a dry run writes
 * nothing; an already-wrapped file is refused. One suite starts the gate exactly as the rewritten
 * Claude Code file says, with the SDK client, in front of the real filesystem server.
 * Over 400 lines: one user journey, whose suites share the fixtures, the built CLI and the temp cleanup.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parse as parseToml } from '@decimalturn/toml-patch';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { parse as parseJsonc } from 'jsonc-parser';
import { loadConfig } from '../src/config/load.js';
import { FS_SERVER, MAIN, MEMORY_SERVER, NODE, ROOT, runCli, tmp } from './helpers.js';

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
  gate_config_note: string | null;
  warning: string | null;
  server: string;
  command: string;
  args: string[];
  moved: { name: string; upstream: string; kind: string; reused: boolean }[];
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
  {
    client: 'vscode',
    fixture: 'vscode.mcp.json',
    key: 'servers',
    moved: ['memory', 'github'],
    secret: undefined,
    comment: 'The reference memory server, for notes across chats.',
  },
  { client: 'gemini', fixture: 'gemini.settings.json', key: 'mcpServers', moved: ['pythonTools', 'httpServer'], secret: 's3cret' },
  {
    client: 'codex',
    fixture: 'codex.config.toml',
    key: 'mcp_servers',
    moved: ['files'],
    secret: 'codex-example-secret',
    comment: 'The reference filesystem server.',
  },
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

    it('puts the moved servers in a lookfirst.yaml the gate loads, whose first line names its JSON Schema', () => {
      assert.ok(readFileSync(s.gate_config, 'utf8').startsWith(`# yaml-language-server: $schema=${join(ROOT, 'schema/lookfirst.schema.json')}\n`));
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

    if ('comment' in c)
      it("carries a moved server's comment from the client's file to lookfirst.yaml, above its entry", () => {
        assert.match(readFileSync(s.gate_config, 'utf8'), new RegExp(`\n {2}# ${c.comment.replace(/[.,]/g, '\\$&')}\n {2}${c.moved[0]}:\n`));
        assert.ok(!text.includes(c.comment));
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

  it('unwrap --dry-run prints the diff it would make, secrets masked, and writes nothing (with --force too)', () => {
    const file = copyOf('cursor.mcp.json');
    wrap('cursor', file);
    const dir = join(file, '..');
    const before = readdirSync(dir).sort();
    const wrapped = readFileSync(file, 'utf8');
    const r = runCli(['unwrap', 'cursor', '--config-file', file, '--dry-run']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\+.*"PGPASSWORD": "\*\*\*"/m, 'the restored server shows, masked');
    assert.match(r.stdout, /^-.*"lookfirst"/m, "the gate's entry goes");
    assert.doesNotMatch(r.stdout, /hunter2/);
    assert.match(r.stdout, /would restore .* byte for byte.*\n\(dry run: nothing was written/);
    assert.equal(readFileSync(file, 'utf8'), wrapped);
    assert.deepEqual(readdirSync(dir).sort(), before);

    const edited = wrapped.replace('"mcpServers": {', '"mcpServers": {\n        "mine": { "command": "added-later" },');
    writeFileSync(file, edited);
    const f = runCli(['unwrap', 'cursor', '--config-file', file, '--force', '--dry-run', '--json']);
    assert.equal(f.status, 0, f.stderr);
    const out = JSON.parse(f.stdout) as { dry_run: boolean; edited_copy: string; diff: string };
    assert.equal(out.dry_run, true);
    assert.equal(out.edited_copy, `${file}.lookfirst-edited`);
    assert.match(out.diff, /^-.*added-later/m);
    assert.equal(readFileSync(file, 'utf8'), edited);
    assert.deepEqual(readdirSync(dir).sort(), before);
  });

  it('unwrap with nothing to restore says so', () => {
    const file = copyOf('cursor.mcp.json');
    const r = runCli(['unwrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /nothing to restore/);
  });

  it('unwrap refuses a damaged note or an unreadable backup with a sentence, dry run or not, and writes nothing', () => {
    const file = copyOf('cursor.mcp.json');
    wrap('cursor', file);
    const dir = join(file, '..');
    const note = `${file}.lookfirst-wrap.json`;
    const backup = `${file}.lookfirst-backup`;
    const good = readFileSync(note, 'utf8');
    const wrapped = readFileSync(file, 'utf8');
    const unchanged = () => {
      assert.equal(readFileSync(file, 'utf8'), wrapped);
      assert.ok(!readdirSync(dir).some((n) => n.includes('lookfirst-edited')));
    };
    const { original_sha256: _o, ...noHash } = JSON.parse(good) as Record<string, unknown>;
    for (const bad of ['null', '[]', '"x"', '{}', JSON.stringify(noHash), good.replace('"cursor"', '"undefined"')]) {
      writeFileSync(note, bad);
      for (const extra of [['--dry-run'], [], ['--force']]) {
        const r = runCli(['unwrap', 'cursor', '--config-file', file, ...extra]);
        assert.equal(r.status, 1, `${bad} ${extra}: ${r.stderr}`);
        assert.match(r.stderr, /is not the note wrap wrote; nothing was changed/, bad);
        assert.doesNotMatch(r.stderr, /unexpected error|undefined/);
        unchanged();
      }
    }
    writeFileSync(note, good);
    const saved = readFileSync(backup);
    rmSync(backup);
    mkdirSync(backup);
    for (const extra of [['--dry-run'], []]) {
      const r = runCli(['unwrap', 'cursor', '--config-file', file, ...extra]);
      assert.equal(r.status, 1, r.stderr);
      assert.match(r.stderr, /lookfirst-backup cannot be read \(EISDIR\)/);
      unchanged();
    }
    rmSync(backup, { recursive: true });
    writeFileSync(backup, saved);
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

/**
 * Modes only stop a user other than root, so as root these runs drop to nobody (65534): the files and
 * folders are handed to that user first, and the refusals are the ones a user meets.
 */
const asRoot = process.getuid?.() === 0;
const USER = 65534;
/**
 * Why nobody cannot run this Node and CLI at all (a Node under a private folder, such as one installed
 * into a `mktemp -d`), or false. Then the refusals cannot be shown as a user meets them, so they are skipped
 * with that reason instead of failing on a spawn that never started.
 */
const cannotDrop: string | false = (() => {
  if (!asRoot) return false;
  const r = spawnSync(NODE, [MAIN, '--version'], { encoding: 'utf8', timeout: 30_000, uid: USER, gid: USER });
  if (r.status === 0) return false;
  return `user ${USER} cannot run ${NODE} ${MAIN} (${r.error?.message ?? r.stderr.trim().split('\n')[0] ?? `exit ${r.status}`})`;
})();
function runAsUser(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(NODE, [MAIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', LOOKFIRST_NO_OPEN: '1' },
    timeout: 30_000,
    ...(asRoot ? { uid: USER, gid: USER } : {}),
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** A temp folder the user running the CLI owns. */
function userDir(): string {
  const dir = tmp('lf-wrap-mode-');
  dirs.push(dir);
  if (asRoot) chownSync(dir, USER, USER);
  return dir;
}
function userFile(path: string, text: string, mode = 0o644): string {
  writeFileSync(path, text, { mode });
  chmodSync(path, mode);
  if (asRoot) chownSync(path, USER, USER);
  return path;
}
const GATE = '# my gate\nupstreams:\n  other:\n    command: y\n';
const CLIENT = '{\n  "mcpServers": {\n    "files": { "command": "x", "env": { "TOKEN": "s3cret-token" } }\n  }\n}\n';

describe('files the user or the system made awkward', { skip: cannotDrop }, () => {
  it('refuses a read-only client file before writing anything (no backup, lookfirst.yaml as it was)', () => {
    const dir = userDir();
    const file = userFile(join(dir, 'mcp.json'), CLIENT, 0o444);
    userFile(join(dir, 'lookfirst.yaml'), GATE);
    const r = runAsUser(['wrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stderr, /not writable.*nothing was written/);
    assert.equal(readFileSync(join(dir, 'lookfirst.yaml'), 'utf8'), GATE);
    assert.deepEqual(readdirSync(dir).sort(), ['lookfirst.yaml', 'mcp.json']);
  });

  it('says plainly, without a stack trace, that a read-only folder cannot take the backup', () => {
    const dir = userDir();
    const file = userFile(join(dir, 'mcp.json'), CLIENT);
    chmodSync(dir, 0o555);
    try {
      const r = runAsUser(['wrap', 'cursor', '--config-file', file, '--gate-config', join(dir, '..', 'nowhere', 'g.yaml')]);
      assert.equal(r.status, 1, r.stdout);
      assert.doesNotMatch(r.stderr, /unexpected error| {4}at /);
      assert.match(r.stderr, /cannot write the backup .*nothing was changed/);
      assert.equal(readFileSync(file, 'utf8'), CLIENT);
      assert.deepEqual(readdirSync(dir), ['mcp.json']);
    } finally {
      chmodSync(dir, 0o755);
    }
  });

  it('undoes lookfirst.yaml, the backup and the note when the client file cannot be replaced', () => {
    // The client's file is a link into a folder that allows no new file: its write fails after lookfirst.yaml's.
    const dir = userDir();
    const locked = join(dir, 'locked');
    mkdirSync(locked);
    if (asRoot) chownSync(locked, USER, USER);
    const target = userFile(join(locked, 'mcp.json'), CLIENT);
    chmodSync(locked, 0o555);
    const link = join(dir, 'mcp.json');
    symlinkSync(target, link);
    userFile(join(dir, 'lookfirst.yaml'), GATE);
    try {
      const r = runAsUser(['wrap', 'cursor', '--config-file', link]);
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stderr, /nothing was changed/);
      assert.equal(readFileSync(join(dir, 'lookfirst.yaml'), 'utf8'), GATE);
      assert.equal(readFileSync(target, 'utf8'), CLIENT);
      assert.deepEqual(readdirSync(dir).sort(), ['locked', 'lookfirst.yaml', 'mcp.json']);
    } finally {
      chmodSync(locked, 0o755);
    }
  });

  it('writes through a symlinked client file (the link stays a link) and unwrap restores its target byte for byte', () => {
    const dir = userDir();
    const target = userFile(join(dir, 'real.json'), CLIENT, 0o640);
    const link = join(dir, 'mcp.json');
    symlinkSync(target, link);
    const s = wrap('cursor', link, '--gate-config', join(dir, 'lookfirst.yaml'));
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.match(readFileSync(target, 'utf8'), /"lookfirst"/);
    assert.equal(statSync(target).mode & 0o777, 0o640);
    assert.deepEqual(
      s.moved.map((m) => m.name),
      ['files'],
    );
    const r = runCli(['unwrap', 'cursor', '--config-file', link]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(lstatSync(link).isSymbolicLink());
    assert.equal(readFileSync(target, 'utf8'), CLIENT);
  });

  it('takes group and other access off an existing lookfirst.yaml that now holds env values, and says so', () => {
    const dir = userDir();
    const file = userFile(join(dir, 'mcp.json'), CLIENT);
    userFile(join(dir, 'lookfirst.yaml'), GATE, 0o644);
    const r = runAsUser(['wrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(statSync(join(dir, 'lookfirst.yaml')).mode & 0o777, 0o600);
    assert.match(r.stdout, /gate config mode: 0644 → 0600/);
    assert.match(readFileSync(join(dir, 'lookfirst.yaml'), 'utf8'), /^# my gate\n/);
  });

  it('unwrap --force never overwrites an edited copy kept by an earlier one', () => {
    const file = copyOf('cursor.mcp.json');
    const edit = (n: number) => {
      wrap('cursor', file, '--gate-config', join(file, '..', `g${n}.yaml`));
      writeFileSync(file, `${readFileSync(file, 'utf8').replace('"mcpServers": {', `"mcpServers": { "mine${n}": { "command": "c" },`)}`);
      const r = runCli(['unwrap', 'cursor', '--config-file', file, '--force']);
      assert.equal(r.status, 0, r.stderr);
    };
    edit(1);
    edit(2);
    assert.match(readFileSync(`${file}.lookfirst-edited`, 'utf8'), /mine1/);
    assert.match(readFileSync(`${file}.lookfirst-edited.2`, 'utf8'), /mine2/);
  });

  it('unwrap as another client than the one wrapped is refused', () => {
    const file = copyOf('cursor.mcp.json');
    wrap('cursor', file);
    const r = runCli(['unwrap', 'vscode', '--config-file', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /wrapped as cursor, not vscode/);
    assert.ok(existsSync(`${file}.lookfirst-backup`));
  });

  it('a dry run shows what wrap writes: a server kept for its $' + '{VAR} is not shown as moved', () => {
    const file = copyOf('claude-code.mcp.json');
    const r = runCli(['wrap', 'claude-code', '--config-file', file, '--dry-run']);
    assert.equal(r.status, 0, r.stderr);
    const clientDiff = r.stdout.slice(0, r.stdout.indexOf('--- /dev/null'));
    assert.doesNotMatch(clientDiff, /^-\s+"api"/m);
    assert.doesNotMatch(clientDiff, /^-\s+"old-sse"/m);
    assert.match(clientDiff, /^-\s+"files"/m);
  });

  it('names the per-project servers of ~/.claude.json that stay outside the gate', () => {
    const dir = userDir();
    const file = userFile(
      join(dir, '.claude.json'),
      '{"projects":{"/home/sam/app":{"mcpServers":{"db":{"command":"pg"}}}},"mcpServers":{"a":{"command":"x"}}}',
    );
    const r = runCli(['wrap', 'claude-code', '--config-file', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /not wrapped, the client still runs them without the gate: projects\["\/home\/sam\/app"\]\.mcpServers: db/);
  });

  it('a dry run masks a password or token in a server address, in both files', () => {
    const dir = userDir();
    const file = userFile(join(dir, 'mcp.json'), '{"mcpServers":{"a":{"type":"http","url":"https://sam:PASSW0RD@x.example/mcp?key=TOKQ"}}}');
    const r = runCli(['wrap', 'cursor', '--config-file', file, '--dry-run']);
    assert.equal(r.status, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /PASSW0RD|TOKQ/);
    assert.match(r.stdout, /^\+\s+url: https:\/\/sam:\*\*\*@x\.example\/mcp\?key=\*\*\*$/m);
  });

  it('wraps a VS Code file with a byte order mark and CRLF, and unwrap gives the same bytes back', () => {
    const dir = userDir();
    const text = '\uFEFF{\r\n\t"servers": {\r\n\t\t"a": { "command": "x" }\r\n\t}\r\n}\r\n';
    const file = userFile(join(dir, 'mcp.json'), text);
    wrap('vscode', file);
    assert.ok(readFileSync(file, 'utf8').startsWith('\uFEFF{\r\n'));
    assert.equal(runCli(['unwrap', 'vscode', '--config-file', file]).status, 0);
    assert.equal(readFileSync(file, 'utf8'), text);
  });
});

describe('when a file is wrapped, unwrapped and wrapped again', () => {
  it('reuses the upstreams lookfirst.yaml has instead of adding -2 copies, leaves it unchanged, and says so', () => {
    const file = copyOf('claude_desktop_config.json');
    const first = wrap('claude-desktop', file);
    const yaml = readFileSync(first.gate_config, 'utf8');
    assert.equal(runCli(['unwrap', 'claude-desktop', '--config-file', file]).status, 0);
    const r = runCli(['wrap', 'claude-desktop', '--config-file', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /filesystem → upstreams\.filesystem \(reused: the same server is there already/);
    assert.match(r.stdout, /gate config: .* \(unchanged: every server was there already\)/);
    assert.equal(readFileSync(first.gate_config, 'utf8'), yaml);
    assert.deepEqual(
      loadConfig(first.gate_config).upstreams.map((u) => u.name),
      first.moved.map((m) => m.upstream),
    );
  });

  it('two clients onto one lookfirst.yaml share a server they both run, and a different one of the same name gets a suffix', () => {
    const dir = tmp('lf-wrap-two-');
    dirs.push(dir);
    const gate = join(dir, 'lookfirst.yaml');
    const server = (extra: string) => ({ files: { command: NODE, args: [FS_SERVER, dir] }, notes: { command: NODE, args: [MEMORY_SERVER, extra] } });
    writeFileSync(join(dir, 'cursor.json'), JSON.stringify({ mcpServers: server('a') }, null, 2));
    writeFileSync(join(dir, 'claude.json'), JSON.stringify({ mcpServers: server('b') }, null, 2));
    wrap('cursor', join(dir, 'cursor.json'), '--gate-config', gate);
    const s = wrap('claude-code', join(dir, 'claude.json'), '--gate-config', gate);
    assert.deepEqual(
      s.moved.map((m) => [m.name, m.upstream, m.reused]),
      [
        ['files', 'files', true],
        ['notes', 'notes-2', false],
      ],
    );
    assert.deepEqual(
      loadConfig(gate).upstreams.map((u) => u.name),
      ['files', 'notes', 'notes-2'],
    );
  });
});

describe("when the client's file is inside a git work tree", () => {
  /** A project with a `.git` folder, its client file one folder down, and a config home of its own. */
  function project(): { proj: string; app: string; mcp: string; home: string } {
    const proj = tmp('lf-wrap-git-');
    const home = tmp('lf-wrap-xdg-');
    dirs.push(proj, home);
    mkdirSync(join(proj, '.git'));
    const app = join(proj, 'app');
    mkdirSync(app);
    const mcp = join(app, '.mcp.json');
    writeFileSync(mcp, CLIENT);
    return { proj, app, mcp, home };
  }

  it("puts lookfirst.yaml (and so the audit key) in a private folder of lookfirst's config folder, not in the project", () => {
    const { proj, app, mcp, home } = project();
    const r = runCli(['wrap', 'claude-code', '--config-file', mcp, '--json'], { env: { XDG_CONFIG_HOME: home } });
    assert.equal(r.status, 0, r.stderr);
    const s = JSON.parse(r.stdout) as Summary;
    const folder = join(home, 'lookfirst', `${basename(proj).toLowerCase()}-claude-code-`);
    assert.ok(s.gate_config.startsWith(folder) && /-[0-9a-f]{8}\/lookfirst\.yaml$/.test(s.gate_config), s.gate_config);
    assert.match(s.gate_config_note ?? '', /inside the git work tree/);
    assert.equal(statSync(join(s.gate_config, '..')).mode & 0o777, 0o700);
    assert.deepEqual(readdirSync(app).sort(), ['.mcp.json', '.mcp.json.lookfirst-backup', '.mcp.json.lookfirst-wrap.json']);
    const k = runCli(['keygen', '--config', s.gate_config]);
    assert.equal(k.status, 0, k.stderr);
    assert.equal(loadConfig(s.gate_config).audit.keyPath.startsWith(folder), true);
    // Unwrapped and wrapped again, the same file finds the same folder, and its servers there.
    assert.equal(runCli(['unwrap', 'claude-code', '--config-file', mcp]).status, 0);
    const again = runCli(['wrap', 'claude-code', '--config-file', mcp, '--json'], { env: { XDG_CONFIG_HOME: home } });
    assert.equal((JSON.parse(again.stdout) as Summary).gate_config, s.gate_config);
    assert.equal((JSON.parse(again.stdout) as Summary).moved[0]?.reused, true);
  });

  it('uses a lookfirst.yaml already beside the file, warning loudly that it could be committed', () => {
    const { app, mcp, home } = project();
    writeFileSync(join(app, 'lookfirst.yaml'), GATE);
    const r = runCli(['wrap', 'claude-code', '--config-file', mcp, '--json'], { env: { XDG_CONFIG_HOME: home } });
    assert.equal(r.status, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as Summary).gate_config, join(app, 'lookfirst.yaml'));
    assert.match(r.stderr, /WARNING: .*lookfirst\.yaml is inside the git work tree .*could be committed/);
    assert.deepEqual(readdirSync(home), []);
  });
});

describe("when a project's server names a path relative to the project (issue 17: relative paths)", () => {
  const proj = tmp('lf-wrap-rel-');
  const elsewhere = tmp('lf-wrap-rel-gate-');
  dirs.push(proj, elsewhere);
  mkdirSync(join(proj, 'data'));
  writeFileSync(join(proj, 'data', 'hello.txt'), 'hello\n');
  const mcp = join(proj, '.mcp.json');
  writeFileSync(mcp, `${JSON.stringify({ mcpServers: { files: { command: NODE, args: [FS_SERVER, './data'] } } }, null, 2)}\n`);
  const gate = join(elsewhere, 'lookfirst.yaml');
  // A gate config outside the project (its page on a free port), as the default under ~/.config/lookfirst is.
  writeFileSync(
    gate,
    `upstreams:\n  memory:\n    command: ${JSON.stringify(NODE)}\n    args: [${JSON.stringify(MEMORY_SERVER)}]\nconfirm:\n  web: { enabled: true, port: 0 }\n`,
  );
  let client: Client | undefined;
  after(async () => {
    await client?.close();
  });

  it('gives the moved server the project root as cwd, so the gate, started anywhere, starts it there', async () => {
    const s = wrap('claude-code', mcp, '--gate-config', gate);
    const files = loadConfig(gate).upstreams.find((u) => u.name === 'files');
    assert.equal(files?.kind === 'stdio' ? files.cwd : undefined, proj);
    assert.ok(readFileSync(gate, 'utf8').includes(`cwd: ${proj}\n`));
    assert.equal(runCli(['keygen', '--config', s.gate_config]).status, 0);
    const entry = (JSON.parse(readFileSync(mcp, 'utf8')) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers.lookfirst!;
    client = new Client({ name: 'wrap-rel-test', version: '1.0.0' });
    // The filesystem server exits at once when ./data is not there: its tools listed mean it found the folder.
    await client.connect(
      new StdioClientTransport({
        command: entry.command,
        args: entry.args,
        cwd: elsewhere,
        stderr: 'pipe',
        env: { ...getDefaultEnvironment(), LOOKFIRST_NO_OPEN: '1' },
      }),
    );
    const names = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(names.includes('files__read_text_file'), names.join(', '));
  });

  it("keeps a user file's server with a relative path unwrapped, saying why, and moves the others", () => {
    const dir = tmp('lf-wrap-rel-user-');
    dirs.push(dir);
    const file = join(dir, 'claude_desktop_config.json');
    writeFileSync(
      file,
      JSON.stringify({ mcpServers: { files: { command: 'npx', args: ['-y', 'fs', './data'] }, abs: { command: 'npx', args: ['-y', 'fs', dir] } } }),
    );
    const s = wrap('claude-desktop', file, '--dry-run');
    assert.deepEqual(
      s.moved.map((m) => m.name),
      ['abs'],
    );
    assert.equal(s.kept[0]?.name, 'files');
    assert.match(s.kept[0]!.reason, /"\.\/data" is a relative path.*no set folder.*absolute cwd/);
  });
});

describe('when the file already starts a gate, in any form (issue 17: a gate in front of a gate)', () => {
  const forms: [string, Record<string, unknown>][] = [
    ['this install', { command: NODE, args: [MAIN, 'serve', '--config', '/x/lookfirst.yaml'] }],
    ['a clone in another folder', { command: '/usr/bin/node', args: ['/tmp/x/dist/cli/main.js', 'serve', '--config', '/x/lookfirst.yaml'] }],
    ['lookfirst on PATH', { command: 'lookfirst', args: ['serve', '--config', '/x/lookfirst.yaml'] }],
    ['npx', { command: 'npx', args: ['-y', 'lookfirst@0.1.0', 'serve', '--config', '/x/lookfirst.yaml'] }],
    ['the gate name running serve --config', { command: '/opt/bin/my-gate', args: ['serve', '--config', '/x/lookfirst.yaml'] }],
  ];
  for (const [what, entry] of forms)
    it(`refuses ${what}, exit 1, and writes nothing`, () => {
      const dir = tmp('lf-wrap-gate-');
      dirs.push(dir);
      const file = join(dir, '.mcp.json');
      writeFileSync(file, JSON.stringify({ mcpServers: { lookfirst: entry, other: { command: 'npx', args: ['-y', 'x', '/abs'] } } }));
      const r = runCli(['wrap', 'claude-code', '--config-file', file]);
      assert.equal(r.status, 1, r.stdout);
      assert.match(r.stderr, /server "lookfirst" already runs the gate/);
      assert.deepEqual(readdirSync(dir), ['.mcp.json']);
    });

  it('refuses the file wrap itself wrote, once its backup and note are gone', () => {
    const file = copyOf('cursor.mcp.json');
    wrap('cursor', file);
    rmSync(`${file}.lookfirst-backup`);
    rmSync(`${file}.lookfirst-wrap.json`);
    const before = readFileSync(file);
    const r = runCli(['wrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 1, r.stdout);
    assert.match(r.stderr, /already runs the gate/);
    assert.ok(readFileSync(file).equals(before));
  });
});

describe('hints name the command that runs here (issue 17: hints)', () => {
  const here = `node ${MAIN}`;
  it('wrap names keygen and unwrap, in its output and in the new lookfirst.yaml, as they run here', () => {
    const file = copyOf('claude_desktop_config.json');
    const r = runCli(['wrap', 'claude-desktop', '--config-file', file]);
    assert.equal(r.status, 0, r.stderr);
    assert.ok(r.stdout.includes(`\`${here} unwrap claude-desktop --config-file ${file}\``), r.stdout);
    assert.ok(r.stdout.includes(`next: ${here} keygen --config `), r.stdout);
    assert.ok(readFileSync(join(file, '..', 'lookfirst.yaml'), 'utf8').includes(`\`${here} keygen --config `));
    const again = runCli(['wrap', 'claude-desktop', '--config-file', file]);
    assert.equal(again.status, 1);
    assert.ok(again.stderr.includes(`\`${here} unwrap claude-desktop --config-file ${file}\``), again.stderr);
    assert.doesNotMatch(r.stdout + again.stderr, /`lookfirst (unwrap|keygen)/);
  });
});

describe('a client file that is not valid JSON (issue 17: parse errors in words)', () => {
  it('says what is wrong in words, once', () => {
    const file = copyOf('invalid.mcp.json');
    const r = runCli(['wrap', 'cursor', '--config-file', file]);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /line 5, column 7: expected ","\)/);
    assert.doesNotMatch(r.stderr, /CommaExpected|CloseBraceExpected/);
    assert.equal(r.stderr.match(/not valid JSON/g)?.length, 1, r.stderr);
    const broken = join(file, '..', 'open.mcp.json');
    writeFileSync(broken, '{\n  "mcpServers": {\n');
    const o = runCli(['wrap', 'cursor', '--config-file', broken]);
    assert.match(o.stderr, /line 3, column 1: expected "\}" \(an object is not closed\)/);
    assert.equal(o.stderr.match(/line 3, column 1/g)?.length, 1, o.stderr);
  });
});
