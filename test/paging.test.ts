/**
 * Paging against an upstream whose cursors cycle back to an earlier cursor (not the last one):
 * (none) → p1 → p2 → p1. The gate stops paging at once, for tools/list (which it pages itself) and for
 * every list a client pages through it (resources, resource templates, prompts), with one upstream and
 * with two. The upstream records its requests, so each test counts exactly what it was asked.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { type Agent, NODE, ROOT, startAgent, tmp, waitFor, writeConfig } from './helpers.js';

const LOOP = join(ROOT, 'test/fixtures/cursor-loop-upstream.mjs');

function upstreamYaml(name: string, events: string): string {
  return `  ${name}:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([LOOP, '--events', events])}\n`;
}

/** How many requests of `method` the upstream received. */
function asked(events: string, method: string): number {
  return readFileSync(events, 'utf8')
    .split('\n')
    .filter(Boolean)
    .filter((l) => (JSON.parse(l) as { method: string }).method === method).length;
}

/** Follows nextCursor as a client does (at most 50 pages, so that a failure shows as a count). */
async function pageThrough(agent: Agent, method: string, key: string): Promise<unknown[][]> {
  const pages: unknown[][] = [];
  let cursor: unknown;
  for (let n = 0; n < 50; n++) {
    const r = await agent.client.request({ method, params: cursor === undefined ? {} : { cursor } } as never, ResultSchema);
    pages.push(r[key] as unknown[]);
    cursor = r.nextCursor;
    if (cursor === undefined) break;
  }
  return pages;
}

const LISTS = [
  ['resources/list', 'resources'],
  ['resources/templates/list', 'resourceTemplates'],
  ['prompts/list', 'prompts'],
] as const;

describe('a cursor that comes back to an earlier one', () => {
  it('stops tools/list paging at once: three requests per listing, each page read once', async () => {
    const dir = tmp();
    const events = join(dir, 'events.jsonl');
    const agent = await startAgent(writeConfig(dir, `upstreams:\n${upstreamYaml('loop', events)}`));
    try {
      assert.ok(await waitFor(() => /serving \d+ tool/.test(agent.stderr()), 5000));
      assert.equal(asked(events, 'tools/list'), 3, 'the start read pages 0, 1, 2 and stopped at the repeat');
      const listed = await agent.client.listTools();
      assert.deepEqual(
        listed.tools.map((t) => t.name),
        ['tool_0', 'tool_1', 'tool_2'],
      );
      assert.equal(listed.nextCursor, undefined);
      assert.equal(asked(events, 'tools/list'), 6, 'a client listing re-reads the three pages, no more');
      assert.match(agent.stderr(), /tools\/list gave a cursor it had given before \(page 3\); paging stopped there/);
    } finally {
      await agent.close();
    }
  });

  for (const [method, key] of LISTS) {
    it(`ends ${method} for a client that pages through the gate (one upstream)`, async () => {
      const dir = tmp();
      const events = join(dir, 'events.jsonl');
      const agent = await startAgent(writeConfig(dir, `upstreams:\n${upstreamYaml('loop', events)}`));
      try {
        const pages = await pageThrough(agent, method, key);
        assert.equal(pages.length, 3, 'three pages, then no nextCursor');
        assert.equal(asked(events, method), 3);
        assert.match(agent.stderr(), new RegExp(`${method.replace(/\//g, '\\/')} gave a cursor it had given before; its list ends there`));
      } finally {
        await agent.close();
      }
    });
  }

  it('ends each upstream of two at its own repeat, and the list as a whole', async () => {
    const dir = tmp();
    const a = join(dir, 'a.jsonl');
    const b = join(dir, 'b.jsonl');
    const agent = await startAgent(writeConfig(dir, `upstreams:\n${upstreamYaml('one', a)}${upstreamYaml('two', b)}`));
    try {
      for (const [method, key] of LISTS) {
        const pages = await pageThrough(agent, method, key);
        assert.equal(pages.length, 6, `${method}: three pages of each upstream`);
        assert.deepEqual([asked(a, method), asked(b, method)], [3, 3]);
      }
      assert.deepEqual([asked(a, 'tools/list'), asked(b, 'tools/list')], [3, 3]);
    } finally {
      await agent.close();
    }
  });
});
