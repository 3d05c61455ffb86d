import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultClientFile, timeoutFor } from './clients.js';
import { mergeGateConfig, upstreamNamesIn } from './gate-config.js';
import { fateOf, isGateEntry, upstreamNameFor } from './servers.js';

describe('isGateEntry', () => {
  it('recognises the gate however it is launched', () => {
    assert.ok(isGateEntry({ command: 'lookfirst', args: ['serve', '--config', 'x'] }));
    assert.ok(isGateEntry({ command: 'npx', args: ['-y', 'lookfirst@0.1.0', 'serve'] }));
    assert.ok(isGateEntry({ command: 'node', args: ['C:\\lookfirst\\dist\\cli\\main.js', 'serve'] }));
    assert.ok(!isGateEntry({ command: 'lookfirst', args: ['verify-log'] }));
    assert.ok(!isGateEntry({ command: 'npx', args: ['-y', 'lookfirst-other', 'serve'] }));
  });
});

describe('fateOf', () => {
  it('keeps a relative cwd and a non-string env value, moves an absolute cwd', () => {
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
