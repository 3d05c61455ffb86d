import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ApprovalRequest } from '../channel.js';
import { type ApproveSchema, createElicitationChannel } from './elicitation.js';

const call = { callId: 'c1', tool: 'write_file', upstream: 'files', upstreamTool: 'write_file', args: {}, argsCanonical: '{}', argsSha256: 'a'.repeat(64) };

async function formFor(purpose: ApprovalRequest['purpose']): Promise<ApproveSchema> {
  let sent: ApproveSchema | undefined;
  const channel = createElicitationChannel(
    {
      clientSupportsForm: () => true,
      clientName: () => 'client',
      elicit: async (params) => {
        sent = params.requestedSchema;
        return { action: 'decline' };
      },
    },
    true,
  );
  await channel.ask({ call, summary: 's', deadlineMs: Date.now() + 60_000, purpose }, new AbortController().signal);
  assert.ok(sent);
  return sent;
}

describe('the elicitation form', () => {
  it('says what a yes does: run the call, only unlock its tool, or accept a definition', async () => {
    assert.match((await formFor(undefined)).properties.approve.description, /executes it/);
    const unlock = (await formFor('unlock')).properties.approve;
    assert.equal(unlock.title, 'Unlock this tool?');
    assert.match(unlock.description, /does not run/);
    assert.doesNotMatch(unlock.description, /executes/);
    assert.equal((await formFor('definition')).properties.approve.title, 'Accept this definition?');
  });
});
