import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LookfirstError } from '../errors.js';
import { defaultClientFile, startFolderOf, timeoutFor } from './clients.js';
import { mergeGateConfig, upstreamNamesIn } from './gate-config.js';
import { fateOf, isGateEntry, relativePathIn, upstreamNameFor } from './servers.js';

describe('isGateEntry', () => {
  it('recognises the gate however it is launched', () => {
    assert.ok(isGateEntry({ command: 'lookfirst', args: ['serve', '--config', 'x'] }));
    assert.ok(isGateEntry({ command: 'npx', args: ['-y', 'lookfirst@0.1.0', 'serve'] }));
    assert.ok(isGateEntry({ command: 'node', args: ['C:\\lookfirst\\dist\\cli\\main.js', 'serve'] }));
    assert.ok(!isGateEntry({ command: 'lookfirst', args: ['verify-log'] }));
    assert.ok(!isGateEntry({ command: 'npx', args: ['-y', 'lookfirst-other', 'serve'] }));
  });
  it('recognises the entry wrap writes from a clone in a folder of any name', () => {
    assert.ok(isGateEntry({ command: '/usr/bin/node', args: ['/tmp/x/dist/cli/main.js', 'serve', '--config', '/h/.config/lookfirst/p/lookfirst.yaml'] }));
    assert.ok(isGateEntry({ command: 'node', args: ['D:\\src\\gate\\dist\\cli\\main.js', 'serve', '--config=/c.yaml'] }));
    // Another tool's dist/cli/main.js without `serve --config` is not the gate.
    assert.ok(!isGateEntry({ command: 'node', args: ['/opt/other/dist/cli/main.js', 'serve'] }));
    assert.ok(!isGateEntry({ command: 'node', args: ['/opt/other/dist/cli/main.js', '--config', 'x'] }));
  });
  it("recognises this install's own launcher followed by serve, whatever its path", () => {
    const launcher = { command: '/usr/bin/node', args: ['--import', 'tsx', '/w/gate/src/cli/main.ts'] };
    assert.ok(isGateEntry({ command: '/usr/bin/node', args: ['--import', 'tsx', '/w/gate/src/cli/main.ts', 'serve'] }, 'x', { launcher }));
    assert.ok(!isGateEntry({ command: '/usr/bin/node', args: ['--import', 'tsx', '/w/gate/src/cli/main.ts', 'serve'] }, 'x'));
  });
  it('recognises lookfirst serve, npx … lookfirst serve, and the gate name running serve --config', () => {
    assert.ok(isGateEntry({ command: '/usr/local/bin/lookfirst', args: ['serve'] }));
    assert.ok(isGateEntry({ command: 'C:\\npm\\lookfirst.cmd', args: ['serve', '--config', 'c'] }));
    assert.ok(isGateEntry({ command: 'npx', args: ['--yes', 'lookfirst', 'serve', '--config', 'c'] }));
    assert.ok(isGateEntry({ command: 'npx', args: ['-y', 'lookfirst@latest', 'serve'] }));
    assert.ok(isGateEntry({ command: 'gate-wrapper', args: ['serve', '--config', 'c'] }, 'gate', { gateServer: 'gate' }));
    assert.ok(!isGateEntry({ command: 'gate-wrapper', args: ['serve', '--config', 'c'] }, 'other', { gateServer: 'gate' }));
    assert.ok(!isGateEntry({ command: 'gate-wrapper', args: ['run'] }, 'gate', { gateServer: 'gate' }));
  });
  it('makes fateOf refuse with a hint in the form that runs here', () => {
    const entry = { command: '/usr/bin/node', args: ['/tmp/x/dist/cli/main.js', 'serve', '--config', '/c.yaml'] };
    assert.throws(
      () => fateOf('claude-code', 'lookfirst', entry, '/p/.mcp.json', { cli: 'node /tmp/x/dist/cli/main.js' }),
      (e: unknown) =>
        e instanceof LookfirstError &&
        e.code === 'WRAP_REFUSED' &&
        e.message.includes('`node /tmp/x/dist/cli/main.js unwrap claude-code --config-file /p/.mcp.json`'),
    );
  });
});

describe('where a moved stdio server starts', () => {
  const project = { start: { scope: 'project', dir: '/work/p' } } as const;
  it('in the project root, for a project file, when it names no cwd; a relative cwd is read from there', () => {
    assert.deepEqual(fateOf('claude-code', 'a', { command: 'npx', args: ['fs', './data'] }, 'f', project), {
      kind: 'move',
      entry: { command: 'npx', args: ['fs', './data'], cwd: '/work/p' },
    });
    assert.deepEqual(fateOf('gemini', 'a', { command: 'x', cwd: 'sub' }, 'f', project), {
      kind: 'move',
      entry: { command: 'x', args: [], cwd: '/work/p/sub' },
    });
    assert.deepEqual(fateOf('gemini', 'a', { command: 'x', cwd: '/srv' }, 'f', project), { kind: 'move', entry: { command: 'x', args: [], cwd: '/srv' } });
  });
  it('stays with the client, for a user file, when it names a relative path, since that client starts servers in no set folder', () => {
    for (const e of [
      { command: 'npx', args: ['fs', './data'] },
      { command: 'node', args: ['server.js'] },
      { command: 'bin/server' },
      { command: 'x', args: ['--root=../data'] },
    ]) {
      const f = fateOf('claude-desktop', 'a', e, 'f');
      assert.equal(f.kind, 'keep', JSON.stringify(e));
      assert.match((f as { reason: string }).reason, /relative path.*absolute cwd/);
    }
  });
  it('moves without a cwd, for a user file, when no path in it is relative', () => {
    assert.deepEqual(fateOf('codex', 'a', { command: 'npx', args: ['-y', '@scope/server', '/home/sam/x', 'postgresql://h/db'] }, 'f'), {
      kind: 'move',
      entry: { command: 'npx', args: ['-y', '@scope/server', '/home/sam/x', 'postgresql://h/db'] },
    });
  });
  it('relativePathIn finds ./x, ../x, x=./y, scripts and relative commands, not package names or addresses', () => {
    assert.equal(relativePathIn('npx', ['-y', '@modelcontextprotocol/server-filesystem', './data']), './data');
    assert.equal(relativePathIn('./server', []), './server');
    assert.equal(relativePathIn('python', ['src\\tools.py']), 'src\\tools.py');
    assert.equal(relativePathIn('npx', ['-y', '@a/b', 'ghcr.io/x/y', 'https://h/x.js', '/abs/s.js', 'C:\\x\\s.js', '.env-free']), undefined);
    assert.equal(relativePathIn('/usr/bin/node', []), undefined);
  });
});

describe('startFolderOf', () => {
  const home = '/home/sam';
  it('is the project root for project files', () => {
    assert.deepEqual(startFolderOf('claude-code', '/work/p/.mcp.json', home, 'linux'), { scope: 'project', dir: '/work/p' });
    assert.deepEqual(startFolderOf('cursor', '/work/p/.cursor/mcp.json', home, 'linux'), { scope: 'project', dir: '/work/p' });
    assert.deepEqual(startFolderOf('vscode', '/work/p/.vscode/mcp.json', home, 'linux'), { scope: 'project', dir: '/work/p' });
    assert.deepEqual(startFolderOf('gemini', '/work/p/.gemini/settings.json', home, 'linux'), { scope: 'project', dir: '/work/p' });
    assert.deepEqual(startFolderOf('vscode', 'C:\\w\\p\\.vscode\\mcp.json', 'C:\\Users\\sam', 'win32'), { scope: 'project', dir: 'C:\\w\\p' });
  });
  it('is user for the user files', () => {
    for (const [client, file] of [
      ['claude-desktop', '/home/sam/.config/Claude/claude_desktop_config.json'],
      ['claude-code', '/home/sam/.claude.json'],
      ['cursor', '/home/sam/.cursor/mcp.json'],
      ['gemini', '/home/sam/.gemini/settings.json'],
      ['codex', '/home/sam/.codex/config.toml'],
      ['vscode', '/home/sam/.config/Code/User/mcp.json'],
    ] as const)
      assert.deepEqual(startFolderOf(client, file, home, 'linux'), { scope: 'user' }, file);
  });
});

describe('fateOf', () => {
  it('keeps a relative cwd in a user file and a non-string env value, moves an absolute cwd', () => {
    assert.equal(fateOf('gemini', 'a', { command: 'x', cwd: 'sub' }, 'f').kind, 'keep');
    assert.equal(fateOf('claude-desktop', 'a', { command: 'x', env: { PORT: 8080 } }, 'f').kind, 'keep');
    assert.deepEqual(fateOf('gemini', 'a', { command: 'x', cwd: '/srv' }, 'f'), { kind: 'move', entry: { command: 'x', args: [], cwd: '/srv' } });
  });
  it('keeps an HTTP server on Claude Desktop, whose file has no remote servers', () => {
    assert.equal(fateOf('claude-desktop', 'a', { url: 'https://x/mcp' }, 'f').kind, 'keep');
  });
  it('moves Codex http_headers as headers', () => {
    assert.deepEqual(fateOf('codex', 'a', { url: 'https://x/mcp', http_headers: { A: 'b' } }, 'f'), {
      kind: 'move',
      entry: { url: 'https://x/mcp', headers: { A: 'b' } },
    });
  });
});

it('upstreamNameFor folds a name to the gate rule', () => {
  assert.equal(upstreamNameFor('GitHub.com / Tools', new Set()), 'github-com-tools');
  assert.equal(upstreamNameFor('---', new Set(['server'])), 'server-2');
});

describe('defaultClientFile', () => {
  const place = { home: '/home/sam', cwd: '/work/p' };
  it("finds Claude Desktop's file on each OS", () => {
    assert.equal(defaultClientFile('claude-desktop', { ...place, platform: 'linux' }, 'project'), '/home/sam/.config/Claude/claude_desktop_config.json');
    assert.equal(
      defaultClientFile('claude-desktop', { ...place, platform: 'darwin' }, 'project'),
      '/home/sam/Library/Application Support/Claude/claude_desktop_config.json',
    );
    assert.equal(
      defaultClientFile('claude-desktop', { platform: 'win32', home: 'C:\\Users\\sam', cwd: 'C:\\p', appData: 'C:\\Users\\sam\\AppData\\Roaming' }, 'project'),
      'C:\\Users\\sam\\AppData\\Roaming\\Claude\\claude_desktop_config.json',
    );
  });
  it('uses the project file or the user file by scope', () => {
    assert.equal(defaultClientFile('claude-code', { ...place, platform: 'linux' }, 'project'), '/work/p/.mcp.json');
    assert.equal(defaultClientFile('claude-code', { ...place, platform: 'linux' }, 'user'), '/home/sam/.claude.json');
    assert.equal(defaultClientFile('vscode', { ...place, platform: 'linux' }, 'project'), '/work/p/.vscode/mcp.json');
    assert.equal(defaultClientFile('codex', { ...place, platform: 'linux' }, 'project'), '/home/sam/.codex/config.toml');
  });
});

it('timeoutFor says so when a client has no setting to raise', () => {
  assert.equal(timeoutFor('claude-desktop', 195, []).value, undefined);
  assert.match(timeoutFor('vscode', 400, []).note, /400 s/);
  assert.equal(timeoutFor('codex', 195, [30]).value, 195);
});

describe('mergeGateConfig', () => {
  const moved = [{ clientName: 'files', upstream: 'files', entry: { command: 'npx', args: ['-y', 'srv'] } }];
  it('writes a new lookfirst.yaml with the upstreams and the approval page on', () => {
    const text = mergeGateConfig(undefined, moved, '/p/lookfirst.yaml', '/p/.mcp.json');
    assert.match(text, /^# Written by `lookfirst wrap` from \/p\/\.mcp\.json/);
    assert.deepEqual([...upstreamNamesIn(text, 'f')], ['files']);
    assert.match(text, /enabled: true/);
  });
  it('adds to an existing file and keeps its comments', () => {
    const existing = '# my gate\nupstreams:\n  memory:\n    # notes\n    command: node # why node\nconfirm:\n  hold_seconds: 30\n';
    const text = mergeGateConfig(existing, moved, 'f', 's');
    assert.ok(text.startsWith('# my gate\nupstreams:\n  memory:\n    # notes\n    command: node # why node\n  files:\n'));
    assert.match(text, /hold_seconds: 30/);
  });
  it("names the package's JSON Schema on a new file's first line, for editors", () => {
    const text = mergeGateConfig(undefined, moved, '/p/lookfirst.yaml', '/p/.mcp.json', '/opt/lookfirst/schema/lookfirst.schema.json');
    assert.ok(text.startsWith('# yaml-language-server: $schema=/opt/lookfirst/schema/lookfirst.schema.json\n# Written by'), text);
    assert.ok(!mergeGateConfig(undefined, moved, 'f', 's', '/a\nupstreams: {}').includes('yaml-language-server'));
  });
  it('adds no copy of a reused upstream, and leaves the text as it was when every one is reused', () => {
    const existing = '# my gate\nupstreams:\n  files: { command: npx, args: [-y, srv] }\n';
    const reused = [{ ...moved[0]!, reused: true }];
    assert.equal(mergeGateConfig(existing, reused, 'f', 's'), existing);
    const fresh = mergeGateConfig(undefined, [...reused, { clientName: 'b', upstream: 'b', entry: { command: 'b', args: [] } }], 'f', 's');
    assert.deepEqual([...upstreamNamesIn(fresh, 'f')], ['b']);
  });
  it('refuses to overwrite an upstream of the same name', () => {
    assert.throws(() => mergeGateConfig('upstreams:\n  files:\n    command: x\n', moved, 'f', 's'), /upstreams\.files exists already/);
  });
});
