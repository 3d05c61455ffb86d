/**
 * Everything a client may ask besides tools passes through faithfully: resources, resource templates,
 * prompts, completions, logging, ping; tools/list follows every upstream page. Checked against the real
 * server-everything, direct vs through the gate.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approve, connectDirect, EVERYTHING_SERVER, FAKE_UPSTREAM, NODE, ResultSchema, startAgent, tmp, writeConfig } from './helpers.js';

const everything = (name: string) => `  ${name}:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([EVERYTHING_SERVER, 'stdio'])}\n`;

describe('pass-through with one upstream (server-everything)', () => {
  it('answers resources, templates, prompts and completions exactly as the server does', async () => {
    const config = writeConfig(tmp(), `upstreams:\n${everything('everything')}`);
    const direct = await connectDirect(NODE, [EVERYTHING_SERVER, 'stdio']);
    const agent = await startAgent(config, approve);
    try {
      const requests = [
        { method: 'resources/list' },
        { method: 'resources/templates/list' },
        { method: 'resources/read', params: { uri: 'demo://resource/static/document/architecture.md' } },
        { method: 'prompts/list' },
        { method: 'prompts/get', params: { name: 'args-prompt', arguments: { city: 'Lyon' } } },
        { method: 'completion/complete', params: { ref: { type: 'ref/prompt', name: 'completable-prompt' }, argument: { name: 'department', value: 'E' } } },
      ];
      for (const req of requests) {
        assert.deepEqual(await agent.client.request(req as never, ResultSchema), await direct.request(req as never, ResultSchema), req.method);
      }
      assert.deepEqual(agent.client.getServerCapabilities()?.resources, { subscribe: true, listChanged: true });
      assert.equal(agent.client.getServerCapabilities()?.tasks, undefined, 'tasks are not offered: the gate does not forward them');
      await agent.client.setLoggingLevel('error');
      await agent.client.ping();
    } finally {
      await direct.close();
      await agent.close();
    }
  });
});

describe('pass-through with two upstreams', () => {
  it('prefixes prompts, routes resources and completions, and pages across upstreams', async () => {
    const config = writeConfig(tmp(), `upstreams:\n${everything('ev')}${everything('ev2')}`);
    const agent = await startAgent(config, approve);
    try {
      const page1 = await agent.client.request({ method: 'resources/list' }, ResultSchema);
      assert.equal(typeof page1.nextCursor, 'string');
      const page2 = await agent.client.request({ method: 'resources/list', params: { cursor: page1.nextCursor as string } }, ResultSchema);
      assert.equal(page2.nextCursor, undefined);
      assert.equal((page1.resources as unknown[]).length + (page2.resources as unknown[]).length, 14);
      const bad = await agent.client.request({ method: 'resources/list', params: { cursor: 'not-ours' } }, ResultSchema).catch((e: Error) => e);
      assert.ok(bad instanceof Error && /Invalid cursor/.test(bad.message));

      const prompts = await agent.client.request({ method: 'prompts/list' }, ResultSchema);
      const names = (prompts.prompts as { name: string }[]).map((p) => p.name);
      assert.ok(names.includes('ev__simple-prompt'), names.join());
      const got = await agent.client.request({ method: 'prompts/get', params: { name: 'ev2__args-prompt', arguments: { city: 'Lyon' } } }, ResultSchema);
      assert.match(JSON.stringify(got), /Lyon/);
      const done = await agent.client.request(
        {
          method: 'completion/complete',
          params: { ref: { type: 'ref/prompt', name: 'ev__completable-prompt' }, argument: { name: 'department', value: 'E' } },
        },
        ResultSchema,
      );
      assert.deepEqual((done.completion as { values: string[] }).values, ['Engineering']);
      const read = await agent.client.request({ method: 'resources/read', params: { uri: 'demo://resource/static/document/features.md' } }, ResultSchema);
      assert.ok((read.contents as unknown[]).length > 0);
    } finally {
      await agent.close();
    }
  });
});

describe('tools/list pagination', () => {
  it('follows every upstream page, so no tool is lost and every one is decided on', async () => {
    const args = [FAKE_UPSTREAM, '--paginate'];
    const config = writeConfig(tmp(), `upstreams:\n  fake:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify(args)}\n`);
    const direct = await connectDirect(NODE, [FAKE_UPSTREAM]);
    const agent = await startAgent(config, approve);
    try {
      const all = await direct.request({ method: 'tools/list' }, ResultSchema);
      const viaGate = await agent.client.request({ method: 'tools/list' }, ResultSchema);
      assert.deepEqual(viaGate.tools, all.tools);
      assert.ok((all.tools as unknown[]).length > 6);
      assert.match(JSON.stringify(await agent.call('a__b', {})), /a__b reached/);
    } finally {
      await direct.close();
      await agent.close();
    }
  });
});
