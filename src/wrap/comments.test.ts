import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseDocument } from 'yaml';
import { parseConfig } from '../config/load.js';
import { commentLines } from './comments.js';
import { maskGateConfig, mergeGateConfig } from './gate-config.js';

describe('commentLines', () => {
  it('takes the markers off line, block and TOML comments, and a block comment’s leading stars', () => {
    assert.deepEqual(commentLines('\t// prod database, read-only user'), ['prod database, read-only user']);
    assert.deepEqual(commentLines('# the reference server'), ['the reference server']);
    assert.deepEqual(commentLines('/**\n * Two lines\n *\n * of notes\n */'), ['Two lines', 'of notes']);
    assert.deepEqual(commentLines('/* unclosed'), ['unclosed']);
    assert.deepEqual(commentLines('//'), []);
  });

  it('makes every character that could end a YAML comment line or hide text visible', () => {
    const lines = commentLines('// a\u2028b\u0085c\rd\u202ee\u0000');
    assert.deepEqual(lines, ['a', 'b\\u0085c', 'd\\u202ee\\u0000']);
  });
});

describe('comments carried into lookfirst.yaml', () => {
  it('sit above the moved upstream, in a new file and in an existing one, and change no value', () => {
    const moved = [
      { clientName: 'db', upstream: 'db', entry: { command: 'pg-mcp', args: [] }, comments: ['prod database', 'read-only user'] },
      { clientName: 'mem', upstream: 'mem', entry: { command: 'memory', args: [] } },
    ];
    const fresh = mergeGateConfig(undefined, moved, '/g/lookfirst.yaml', 'mcp.json');
    assert.match(fresh, /\nupstreams:\n {2}# prod database\n {2}# read-only user\n {2}db:\n/);
    const merged = mergeGateConfig('# mine\nupstreams:\n  x:\n    command: y # kept\n', moved, '/g/lookfirst.yaml', 'mcp.json');
    assert.match(merged, /command: y # kept\n {2}# prod database\n {2}# read-only user\n {2}db:\n/);
    assert.deepEqual(parseDocument(merged).toJS().upstreams, {
      x: { command: 'y' },
      db: { command: 'pg-mcp', args: [] },
      mem: { command: 'memory', args: [] },
    });
  });

  it('cannot add a key or a value through a hostile comment', () => {
    const hostile = commentLines('// x\u2028rules:\u2028  - { tool: "*", action: allow }\n\u0085confirm: {mode: auto}');
    const out = mergeGateConfig(undefined, [{ clientName: 'a', upstream: 'a', entry: { command: 'c', args: [] }, comments: hostile }], '/g/l.yaml', 'f');
    const doc = parseDocument(out).toJS() as Record<string, unknown>;
    assert.deepEqual(Object.keys(doc).sort(), ['confirm', 'upstreams']);
    assert.deepEqual(doc.confirm, { web: { enabled: true } });
  });
});

describe('when hostile comments of every kind ride along', () => {
  it('leaves a lookfirst.yaml the config loader reads with exactly the moved values, new or merged', () => {
    const raws = [
      '// a\u2028rules: [{ tool: "*", action: allow }]',
      '/* */ upstreams: {} ',
      '// \r\nconfirm: { mode: auto }',
      '// \ufeffbom \u0085nel \u202eltr',
      `// ${'A'.repeat(100_000)}`,
      `// # $${'{HOME}'} $${'{SECRET}'} &anchor *alias !!tag`,
      '/*\n- a\n? b\n---\n...\n*/',
      "# \ud800 lone half, \\ and \"quotes\" ''' ]] [x]",
    ];
    const entry = { command: 'pg', args: ['--x'] };
    const moved = [{ clientName: 'db', upstream: 'db', entry, comments: raws.flatMap(commentLines) }];
    for (const existing of [undefined, '# mine\nupstreams:\n  x:\n    command: y\n']) {
      const cfg = parseConfig(mergeGateConfig(existing, moved, '/g/lookfirst.yaml', 'f'), '/g/lookfirst.yaml');
      const db = cfg.upstreams.find((u) => u.name === 'db') as { command?: string; args?: string[] } | undefined;
      assert.equal(db?.command, 'pg');
      assert.deepEqual(db?.args, ['--x']);
      assert.deepEqual(cfg.rules, []);
      assert.deepEqual(
        cfg.upstreams.map((u) => u.name),
        existing === undefined ? ['db'] : ['x', 'db'],
      );
    }
  });
});

describe('maskGateConfig', () => {
  it('masks the credentials of an address given as an argument, as the client side of the diff does', () => {
    const text = 'upstreams:\n  pg:\n    command: npx\n    args: [server-postgres, "postgresql://app:PGSECRET@db/x", -y]\n';
    const masked = maskGateConfig(text, 'f');
    assert.ok(!masked.includes('PGSECRET'), masked);
    assert.match(masked, /postgresql:\/\/app:\*\*\*@db\/x/);
  });
});
