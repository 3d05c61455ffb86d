import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../errors.js';
import { parseConfig } from './load.js';

const UPSTREAM = 'upstreams:\n  f:\n    command: x\n';
const FILE = '/etc/lf/lookfirst.yaml';
const storeOf = (yaml: string) => parseConfig(UPSTREAM + yaml, FILE).store;
const problems = (yaml: string) => {
  try {
    parseConfig(UPSTREAM + yaml, FILE);
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems.map((p) => ({ path: p.path, line: p.line, message: p.message }));
  }
  assert.fail('expected a ConfigError');
};

describe('config store key', () => {
  describe('when the config names no store', () => {
    it('uses sqlite in lookfirst-state.db beside the audit log', () => {
      assert.deepEqual(storeOf(''), { kind: 'sqlite', path: '/etc/lf/lookfirst-state.db' });
      assert.deepEqual(storeOf('audit:\n  log: /var/log/lf/audit.jsonl\n'), { kind: 'sqlite', path: '/var/log/lf/lookfirst-state.db' });
      assert.deepEqual(storeOf('store: {}\n'), { kind: 'sqlite', path: '/etc/lf/lookfirst-state.db' });
    });
  });

  describe('when each kind is given what it needs', () => {
    it('resolves a sqlite path against the config folder', () => {
      assert.deepEqual(storeOf('store:\n  kind: sqlite\n  path: state/gate.db\n'), { kind: 'sqlite', path: '/etc/lf/state/gate.db' });
    });
    it('takes a postgres url as it is', () => {
      assert.deepEqual(storeOf('store:\n  kind: postgres\n  url: postgresql://lf@db:5432/lf\n'), { kind: 'postgres', url: 'postgresql://lf@db:5432/lf' });
      assert.deepEqual(storeOf('store: { kind: postgres, url: "postgres://db/lf" }\n'), { kind: 'postgres', url: 'postgres://db/lf' });
    });
    it('takes memory with nothing else', () => {
      assert.deepEqual(storeOf('store:\n  kind: memory\n'), { kind: 'memory' });
    });
  });

  describe('when the store key is wrong', () => {
    it('names store.kind for an unknown kind and lists the kinds', () => {
      const [p] = problems('store:\n  kind: redis\n');
      assert.equal(p?.path, 'store.kind');
      assert.equal(p?.line, 5);
      assert.match(p!.message, /"memory", "sqlite", "postgres"/);
    });
    it('names store.url when postgres has no url', () => {
      const [p] = problems('store:\n  kind: postgres\n');
      assert.equal(p?.path, 'store.url');
      assert.match(p!.message, /required with kind: postgres/);
    });
    it('names store.url when the url is not postgres:// or postgresql://, without echoing it', () => {
      const [p] = problems('store:\n  kind: postgres\n  url: mysql://root:hunter2@db/lf\n');
      assert.equal(p?.path, 'store.url');
      assert.match(p!.message, /must start with postgres:\/\/ or postgresql:\/\//);
      assert.doesNotMatch(p!.message, /hunter2/);
    });
    it('names store.path when memory is given a path', () => {
      const [p] = problems('store:\n  kind: memory\n  path: state.db\n');
      assert.equal(p?.path, 'store.path');
      assert.match(p!.message, /only for kind: sqlite/);
    });
    it('names store.url when sqlite is given a url', () => {
      const [p] = problems('store:\n  url: postgres://db/lf\n');
      assert.equal(p?.path, 'store.url');
      assert.match(p!.message, /only for kind: postgres \(this store is sqlite\)/);
    });
    it('reports every store problem at once, with an unknown key and a suggestion', () => {
      const p = problems('store:\n  kind: memory\n  path: a.db\n  url: postgres://db/lf\n  pth: b.db\n');
      assert.deepEqual(p.map((x) => x.path).sort(), ['store.path', 'store.pth', 'store.url']);
      assert.match(p.find((x) => x.path === 'store.pth')!.message, /did you mean "path"/);
    });
  });
});
