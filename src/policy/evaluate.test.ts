import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ToolAnnotations } from '../types.js';
import { classifyCall } from './classify.js';
import { compilePolicy, decide as decideWith, globToRegExp, type Policy, unmatchedRules } from './evaluate.js';

/** The gate's decision for a call of `name` with these annotations (and no arguments). */
const decide = (policy: Policy, name: string, annotations: ToolAnnotations | undefined) => decideWith(policy, name, classifyCall(name, {}, annotations));

describe('policy decision', () => {
  const none = compilePolicy([]);

  it('allows what the classifier calls read-only, confirms what it calls a mutation', () => {
    assert.equal(decide(none, 'read_file', { readOnlyHint: true }).action, 'allow');
    assert.equal(decide(none, 'read_file', undefined).action, 'allow');
    assert.match(decide(none, 'read_file', undefined).reason, /^classifier: read-only/);
    assert.match(decide(none, 'delete_file', { readOnlyHint: true }).reason, /^classifier: mutation, risk high/);
  });
  it('confirms a tool with destructiveHint true or false', () => {
    assert.equal(decide(none, 'write_file', { readOnlyHint: false, destructiveHint: true }).action, 'confirm');
    assert.equal(decide(none, 'create_directory', { destructiveHint: false }).action, 'confirm');
  });
  it('confirms a tool with no annotations (fail-safe)', () => {
    assert.equal(decide(none, 'create_entities', undefined).action, 'confirm');
    assert.equal(decide(none, 'x', {}).action, 'confirm');
  });
  it('does not take a non-boolean readOnlyHint as read-only', () => {
    assert.equal(decide(none, 'x', { readOnlyHint: 'true' as unknown as boolean }).action, 'confirm');
  });

  describe('when a rule names the tool', () => {
    it('lets the rule win over annotations in both directions', () => {
      const p = compilePolicy([
        { pattern: 'read_file', action: 'deny' },
        { pattern: 'write_file', action: 'allow' },
      ]);
      assert.equal(decide(p, 'read_file', { readOnlyHint: true }).action, 'deny');
      const d = decide(p, 'write_file', { destructiveHint: true });
      assert.deepEqual([d.action, d.reason, d.rule, d.classification?.risk], ['allow', 'rule "write_file"', 'write_file', 'high']);
    });
    it('shows the risk a rule sets, whatever the classifier said, and says why first', () => {
      const p = compilePolicy([{ pattern: 'create_directory', action: 'confirm', risk: 'high' }]);
      const d = decide(p, 'create_directory', { destructiveHint: false });
      assert.equal(d.classification?.risk, 'high');
      assert.equal(d.classification?.reasons[0], 'rule "create_directory" sets risk high');
      assert.equal(d.classification?.kind, 'mutation', 'a rule sets the risk shown, never the kind');
    });
    it('prefers an exact rule over a glob', () => {
      const p = compilePolicy([
        { pattern: 'files__*', action: 'deny' },
        { pattern: 'files__read_file', action: 'allow' },
      ]);
      assert.equal(decide(p, 'files__read_file', undefined).action, 'allow');
      assert.equal(decide(p, 'files__write_file', undefined).action, 'deny');
    });
    it('lets deny win among matching globs, whatever their order', () => {
      const a = compilePolicy([
        { pattern: 'files__*', action: 'allow' },
        { pattern: 'files__move_*', action: 'deny' },
      ]);
      const b = compilePolicy([
        { pattern: 'files__move_*', action: 'deny' },
        { pattern: 'files__*', action: 'allow' },
      ]);
      assert.equal(decide(a, 'files__move_file', { readOnlyHint: true }).action, 'deny');
      assert.equal(decide(b, 'files__move_file', { readOnlyHint: true }).action, 'deny');
    });
  });

  it('names the rules that match no tool', () => {
    const p = compilePolicy([
      { pattern: 'write_file', action: 'confirm' },
      { pattern: 'wirte_*', action: 'deny' },
      { pattern: 'nothing', action: 'allow' },
    ]);
    assert.deepEqual(unmatchedRules(p, ['write_file', 'read_file']).sort(), ['nothing', 'wirte_*']);
  });
});

describe('tool-name globs', () => {
  it('let * cross every character a tool name may hold', () => {
    const p = compilePolicy([
      { pattern: 'crm__*', action: 'deny' },
      { pattern: '*', action: 'confirm' },
    ]);
    for (const name of ['crm__send/money', 'crm__a.b', 'crm__..', 'crm__', 'crm__x__y', 'crm__é😀']) {
      assert.equal(decide(p, name, { readOnlyHint: true }).action, 'deny', name);
    }
    for (const name of ['other/tool', '.', '..', 'a.b']) assert.equal(decide(p, name, { readOnlyHint: true }).action, 'confirm', name);
  });
  it('treat every other character literally', () => {
    const re = globToRegExp('a.b+[c]?');
    assert.equal(re.test('a.b+[c]x'), true);
    assert.equal(re.test('aXb+[c]x'), false);
    assert.equal(re.test('a.b+[c]'), false);
  });
});

describe('tool-name globs', () => {
  it('take a hyphen as itself (a rule such as brave-search__* does not stop the gate)', () => {
    assert.ok(globToRegExp('brave-search__*').test('brave-search__web'));
    assert.ok(!globToRegExp('a-b').test('a_b'));
  });
});
