/**
 * The self-approval warning (confirm.elicitation on: a client that can answer elicitation could approve
 * its own calls) is said when such a client connects, once per gate, and never to a gate whose client
 * cannot elicit: a warning that is always there is a warning nobody reads.
 */
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { approve, FAKE_UPSTREAM, NODE, startAgent, tmp, waitFor, writeConfig } from './helpers.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function config(extra = ''): string {
  const dir = tmp();
  dirs.push(dir);
  return writeConfig(
    dir,
    `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FAKE_UPSTREAM, '--side-effects', join(dir, 'effects.txt')])}\n${extra}`,
  );
}

const WARNING =
  /warning: the client "test-agent" can answer elicitation and confirm\.elicitation is on: .*\(self-approval\)\. For such clients set confirm\.elicitation: false/;

describe('the self-approval warning', () => {
  it('is not printed when the connecting client does not declare elicitation', async () => {
    const agent = await startAgent(config('confirm:\n  web: { enabled: true, port: 0 }\n'));
    try {
      await agent.client.listTools();
      assert.ok(await waitFor(() => /serving \d+ tool/.test(agent.stderr()), 5000));
    } finally {
      await agent.close();
    }
    assert.doesNotMatch(agent.stderr(), /self-approval/);
  });

  it('is printed once, naming the client, when a client that declares elicitation connects', async () => {
    const agent = await startAgent(config(), approve);
    try {
      await agent.client.listTools();
      assert.ok(await waitFor(() => WARNING.test(agent.stderr()), 5000), agent.stderr());
    } finally {
      await agent.close();
    }
    assert.equal(agent.stderr().match(/self-approval/g)?.length, 1);
  });

  it('is not printed with confirm.elicitation: false, even to a client that can elicit', async () => {
    const agent = await startAgent(config('confirm:\n  elicitation: false\n  web: { enabled: true, port: 0 }\n'), approve);
    try {
      await agent.client.listTools();
    } finally {
      await agent.close();
    }
    assert.doesNotMatch(agent.stderr(), /self-approval/);
  });
});
