/**
 * Pending mode (`confirm.mode: pending`) end to end, with the real gate, the real server-filesystem and
 * the approval page as the person's channel: a held call answers at once `pending_user_confirmation` (an
 * error result, not run); `lookfirst_confirm` runs nothing before the person decided, nothing with
 * invented evidence, and exactly once after a yes, naming each failed check; a denied call never runs.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type Agent, auditEntries, FS_SERVER, NODE, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';
import { decide, http, pageAddress, pendingCall } from './web-page.js';

const dirs: string[] = [];
const agents: Agent[] = [];
after(async () => {
  for (const a of agents) await a.close().catch(() => {});
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function gate(): Promise<{ agent: Agent; data: string; dir: string }> {
  const dir = tmp('lf-pending-');
  dirs.push(dir);
  const data = join(dir, 'data');
  mkdirSync(data);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nconfirm:\n  mode: pending\n  timeout_seconds: 60\n  elicitation: true\n  web:\n    enabled: true\n    port: 0\n`,
  );
  // The client could answer elicitation itself: pending mode must not ask it.
  const agent = await startAgent(config, () => ({ action: 'accept', content: { approve: true } }));
  agents.push(agent);
  return { agent, data, dir };
}

/** The pending answer: structuredContent when the tool has no output schema, `_meta.lookfirst_answer` always. */
function answerOf(r: Record<string, unknown>): Pending {
  return (r._meta as Record<string, unknown>).lookfirst_answer as Pending;
}

type Pending = { status: string; pending_id: string; preview: { tool: string; summary: string; args_sha256: string; expires_at: string; shown_on: string[] } };

describe('pending mode (confirm.mode: pending)', () => {
  it('answers at once with pending_user_confirmation, and lookfirst_confirm runs the call once after a yes', async () => {
    const { agent, data, dir } = await gate();
    const tools = (await agent.client.listTools()).tools.map((t) => t.name);
    assert.ok(tools.includes('lookfirst_confirm'), tools.join(','));
    const path = join(data, 'a.txt');
    const started = Date.now();
    const first = await agent.call('write_file', { path, content: 'hello' });
    assert.ok(Date.now() - started < 10_000, 'the pending answer comes at once, not after hold_seconds');
    assert.equal(first.isError, true, 'an error result, so strict clients accept it');
    const pending = answerOf(first);
    assert.equal(pending.status, 'pending_user_confirmation');
    assert.match(pending.pending_id, /^[0-9a-f-]{36}$/);
    assert.equal(pending.preview.tool, 'write_file');
    assert.match(pending.preview.summary, /a\.txt/);
    assert.deepEqual(pending.preview.shown_on, ['web']);
    assert.equal(existsSync(path), false, 'nothing ran');
    assert.equal(agent.asked.length, 0, 'the client was not asked (it could approve itself)');

    // Before the person decides: nothing runs, and the check that failed is named.
    const early = await agent.call('lookfirst_confirm', { pending_id: pending.pending_id });
    assert.equal(early.isError, true);
    assert.match(JSON.stringify(early), /evidence_exists/);
    assert.equal(existsSync(path), false);

    const page = await pageAddress(agent.stderr);
    const card = await pendingCall(page, /a\.txt/);
    assert.equal(card.callId, pending.pending_id);
    assert.equal(await decide(page, card, 'approve', 'alice'), 200);

    // Invented evidence is refused by name, and does not spend the real decision.
    const invented = await agent.call('lookfirst_confirm', { pending_id: pending.pending_id, evidence_ref: 'ev_0123456789abcdef' });
    assert.equal(invented.isError, true);
    assert.match(JSON.stringify(verdictOf(invented)), /evidence_exists/);
    assert.equal(existsSync(path), false);

    const ran = await agent.call('lookfirst_confirm', { pending_id: pending.pending_id });
    const v = verdictOf(ran);
    assert.equal(v?.outcome, 'executed', JSON.stringify(ran));
    assert.equal(v?.approved_by, 'web:alice');
    assert.equal(readFileSync(path, 'utf8'), 'hello');

    // The same confirmation again runs nothing.
    const again = await agent.call('lookfirst_confirm', { pending_id: pending.pending_id });
    assert.equal(again.isError, true);
    assert.match(JSON.stringify(again), /card_set_open/);
    const executed = auditEntries(dir).filter((e) => e.event === 'execution_started' && e.call_id === pending.pending_id);
    assert.equal(executed.length, 1, 'executed exactly once');
    // Its receipt says when it was proposed (the first write_file), not only when lookfirst_confirm ran it.
    const receipt = JSON.parse(readFileSync(join(dir, 'receipts', `${pending.pending_id}.json`), 'utf8')) as {
      when: { proposed?: string; shown: string; confirmed: string; executed: string };
    };
    const when = receipt.when;
    assert.ok(when.proposed, `a pending-mode receipt names when the call was proposed: ${JSON.stringify(when)}`);
    const received = auditEntries(dir).find((e) => e.event === 'call_received' && e.call_id === pending.pending_id);
    const receivedMs = typeof received?.ts === 'number' ? received.ts : Date.parse(String(received?.ts));
    assert.ok(Math.abs(Date.parse(when.proposed) - receivedMs) < 1000, JSON.stringify({ when, received }));
    assert.ok(when.proposed <= when.shown && when.shown <= when.confirmed && when.confirmed <= when.executed, JSON.stringify(when));
    // The page's history tells the call's end as it was: executed, whatever later confirmations asked.
    const state = JSON.parse((await http(page.port, 'GET', `/state.json?k=${page.key}`)).body) as { history: { callId: string; outcome?: string }[] };
    assert.equal(state.history.find((h) => h.callId === pending.pending_id)?.outcome, 'executed', JSON.stringify(state.history));
  });

  it('a denied pending call never runs, and lookfirst_confirm says it was denied', async () => {
    const { agent, data } = await gate();
    const path = join(data, 'b.txt');
    const first = await agent.call('write_file', { path, content: 'no' });
    const pending = answerOf(first);
    const page = await pageAddress(agent.stderr);
    const card = await pendingCall(page, /b\.txt/);
    assert.equal(await decide(page, card, 'deny', 'bob'), 200);
    const out = await agent.call('lookfirst_confirm', { pending_id: pending.pending_id });
    assert.equal(out.isError, true);
    assert.equal(verdictOf(out)?.outcome, 'denied', JSON.stringify(out));
    assert.equal(existsSync(path), false);
  });

  it('refuses a pending_id that is not one, and one that never existed, naming the check', async () => {
    const { agent } = await gate();
    const bad = await agent.call('lookfirst_confirm', { pending_id: '../../etc' });
    assert.equal(bad.isError, true);
    assert.match(JSON.stringify(bad), /card_set_open/);
    const unknown = await agent.call('lookfirst_confirm', { pending_id: '00000000-0000-4000-8000-000000000000' });
    assert.equal(unknown.isError, true);
    assert.match(JSON.stringify(unknown), /no such call is waiting/);
  });
});
