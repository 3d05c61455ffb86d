import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type PilotFacts, type PilotItem, pilotItems, scorePilot } from './pilot.js';
import { healthy } from './test-facts.js';

const ready = (yaml = 'confirm:\n  elicitation: false\n  web: { enabled: true }\n', over: Partial<PilotFacts> = {}): PilotFacts => ({
  ...healthy(yaml),
  replicas: 1,
  trustedHead: { path: '/backup/audit.jsonl.head', exists: true, besideLog: false, verdict: 'intact' },
  ...over,
});

const item = (items: PilotItem[], id: string) => {
  const found = items.find((i) => i.id === id);
  assert.ok(found, `no item ${id}`);
  return found;
};

describe('lookfirst pilot-status, its checklist', () => {
  it('passes every item of a ready gate: score 7/7, exit 0', () => {
    const items = pilotItems(ready());
    assert.deepEqual(
      items.filter((i) => !i.pass),
      [],
    );
    assert.deepEqual(scorePilot(items), { passed: 7, total: 7, exitCode: 0 });
  });

  it('fails a key others can read, with chmod as the fix', () => {
    const f = ready();
    const i = item(pilotItems({ ...f, key: { ...f.key, mode: 0o644 } }), 'key');
    assert.equal(i.pass, false);
    assert.equal(i.fix, 'chmod 600 /cfg/audit.key');
  });

  describe('the trusted head', () => {
    it('fails without --trusted-head, saying what to copy', () => {
      const i = item(pilotItems(ready(undefined, { trustedHead: undefined })), 'trusted-head');
      assert.equal(i.pass, false);
      assert.match(i.fix ?? '', /cp \/cfg\/audit\.jsonl\.head/);
    });
    it("fails a copy in the log's own folder", () => {
      const i = item(
        pilotItems(ready(undefined, { trustedHead: { path: '/cfg/copy.head', exists: true, besideLog: true, verdict: 'intact' } })),
        'trusted-head',
      );
      assert.equal(i.pass, false);
      assert.match(i.detail, /own folder/);
    });
    it('fails when the log does not continue the copy', () => {
      const i = item(pilotItems(ready(undefined, { trustedHead: { path: '/b/h', exists: true, besideLog: false, verdict: 'tampered' } })), 'trusted-head');
      assert.equal(i.pass, false);
    });
  });

  it('fails a log that does not exist yet, and says to start the gate once', () => {
    const f = ready();
    const i = item(pilotItems({ ...f, log: { ...f.log, state: 'absent' } }), 'log');
    assert.equal(i.pass, false);
    assert.match(i.fix ?? '', /serve --config/);
  });

  describe('writing tools', () => {
    it('fails a tool the classifier calls a write only because it could not tell, naming it', () => {
      const f = ready();
      f.upstreams = [{ name: 'files', kind: 'stdio', ok: true, tools: [{ name: 'frobnicate_widget' }, { name: 'read_file' }], elapsedMs: 1 }];
      const i = item(pilotItems(f), 'writes-covered');
      assert.equal(i.pass, false);
      assert.match(i.detail, /frobnicate_widget/);
      assert.match(i.fix ?? '', /"frobnicate_widget": \{ action: confirm \}/);
    });
    it('passes the same tool once a rule names it', () => {
      const f = ready('confirm:\n  elicitation: false\n  web: { enabled: true }\nrules:\n  tools:\n    frobnicate_widget: { action: confirm }\n');
      f.upstreams = [{ name: 'files', kind: 'stdio', ok: true, tools: [{ name: 'frobnicate_widget' }], elapsedMs: 1 }];
      assert.equal(item(pilotItems(f), 'writes-covered').pass, true);
    });
    it('fails when an upstream could not be listed', () => {
      const f = ready();
      f.upstreams = [{ name: 'files', kind: 'stdio', ok: false, tools: [], elapsedMs: 1 }];
      assert.equal(item(pilotItems(f), 'writes-covered').pass, false);
    });
  });

  it('fails with only elicitation: no reachable channel, and the self-approval risk', () => {
    const items = pilotItems(ready(''));
    assert.equal(item(items, 'channel').pass, false);
    assert.equal(item(items, 'self-approval').pass, false);
  });

  it('passes self-approval in pending mode', () => {
    assert.equal(item(pilotItems(ready('confirm:\n  mode: pending\n  web: { enabled: true }\n')), 'self-approval').pass, true);
  });

  it('fails a memory store with more than one replica, passes it with one', () => {
    const memory = { kind: 'memory' as const, reachable: true };
    assert.equal(item(pilotItems(ready(undefined, { store: memory, replicas: 2 })), 'store').pass, false);
    assert.equal(item(pilotItems(ready(undefined, { store: memory, replicas: 1 })), 'store').pass, true);
  });

  it('exits 2 when any item fails', () => {
    assert.equal(scorePilot(pilotItems(ready(''))).exitCode, 2);
  });
});
