/**
 * Read-back after a confirmed write (issue 3, first part): ok, failed with the field, unclear for every
 * way the check cannot be made, none without a rule; and with the real server-filesystem.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { approve, FAKE_UPSTREAM, FS_SERVER, NODE, runCli, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';

const fake = (rules: string, extra = '') =>
  writeConfig(
    tmp(),
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM])}\nrules:\n  tools:\n${rules}${extra}`,
  );
const rule = (tool: string, reader: string, expect = '{ value: "$args.value" }') =>
  `    ${tool}:\n      action: confirm\n      readback: { tool: ${reader}, args: { key: "$args.key" }, expect: ${expect} }\n`;

async function writeAndCheck(config: string, tool: string, args: Record<string, unknown>) {
  const agent = await startAgent(config, approve);
  try {
    return verdictOf(await agent.call(tool, args))!;
  } finally {
    await agent.close();
  }
}

describe('read-back', () => {
  it('is ok when the target shows what was written (numbers compare as numbers)', async () => {
    const v = await writeAndCheck(fake(rule('store', 'get')), 'store', { key: 'a', value: 100.0 });
    assert.equal(v.outcome, 'executed');
    assert.equal(v.readback, 'ok');
  });

  it('fails with the field, expected and found, when the upstream lies', async () => {
    const config = fake(rule('store_lie', 'get'));
    const v = await writeAndCheck(config, 'store_lie', { key: 'a', value: 100 });
    assert.equal(v.readback, 'failed');
    assert.deepEqual(v.readback_detail, [{ path: 'value', expected: 100, found: 101 }]);
    assert.equal(runCli(['verify-log', '--config', config]).status, 0);
  });

  it('never equates the string "100" with the number 100', async () => {
    const v = await writeAndCheck(fake(rule('store', 'get', '{ value: 100 }')), 'store', { key: 'a', value: '100' });
    assert.equal(v.readback, 'failed');
  });

  it('can compare with a value from the write result ($result)', async () => {
    const v = await writeAndCheck(fake(rule('store', 'get', '{ key: "$result.key" }')), 'store', { key: 'k1', value: 1 });
    assert.equal(v.readback, 'ok');
  });

  const unclear: [string, string, RegExp][] = [
    ['the read tool errors', rule('store', 'get_broken'), /answered with an error/],
    ['the read tool is missing', rule('store', 'no_such_tool'), /not among the upstream tools/],
    ['the read tool declares itself a write', rule('store', 'get_unmarked'), /not allowed as a read/],
    ['the read tool is denied by a rule', `${rule('store', 'get')}    get: { action: deny }\n`, /not allowed as a read/],
    ['the read tool times out', rule('store', 'slow'), /failed/],
    ['a path is not in the read result', rule('store', 'get', '{ "nothing.here": 1 }'), /has no "nothing.here"/],
    ['a reference has no value', rule('store', 'get', '{ value: "$args.missing" }'), /\$args\.missing has no value/],
  ];
  for (const [why, rules, detail] of unclear) {
    it(`is unclear when ${why}`, async () => {
      const v = await writeAndCheck(fake(rules, 'execution:\n  timeout_seconds: 1\n'), 'store', { key: 'a', value: 1 });
      assert.equal(v.outcome, 'executed');
      assert.equal(v.readback, 'unclear');
      assert.match(String(v.readback_detail), detail);
    });
  }

  it('is none without a rule', async () => {
    const v = await writeAndCheck(fake('    echo: { action: allow }\n'), 'store', { key: 'a', value: 1 });
    assert.equal(v.readback, 'none');
  });

  it('checks a write_file with the real server-filesystem', async () => {
    const dir = tmp();
    const data = join(dir, 'data');
    mkdirSync(data);
    const config = writeConfig(
      dir,
      `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nrules:\n  tools:\n    write_file:\n      action: confirm\n      readback: { tool: read_text_file, args: { path: "$args.path" }, expect: { "content[0].text": "$args.content" } }\n`,
    );
    const v = await writeAndCheck(config, 'write_file', { path: join(data, 'r.txt'), content: 'checked' });
    assert.equal(v.outcome, 'executed');
    assert.equal(v.readback, 'ok');
  });
});
