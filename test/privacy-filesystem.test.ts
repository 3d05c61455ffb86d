/**
 * The privacy filter end to end, in front of the real @modelcontextprotocol/server-filesystem: the SDK
 * client reads a file of private values and sees only placeholders; it writes with the placeholders and
 * the file on disk holds the real values; another client session cannot resolve them; an external
 * upstream under `ask` shows the person what would be sent, and under `never` the placeholder text goes.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { approve, auditEntries, FS_SERVER, NODE, ResultSchema, startAgent, textOf, tmp, verdictOf, writeConfig } from './helpers.js';
import { serveHttp } from './http-gate.js';

const IBAN = 'DE89 3704 0044 0532 0130 00';
const CARD = '4111 1111 1111 1111';
const PHONE = '+44 20 7946 0958';
const KEY = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
const EMAIL = 'jane.doe@example.org';
const SECRET_FILE = `Customer record\nIBAN: ${IBAN}\nCard: ${CARD}\nPhone: ${PHONE}\nAPI key: ${KEY}\nMail: ${EMAIL}\nIBAN again: ${IBAN}\n`;
const VALUES = [IBAN, CARD, PHONE, KEY, EMAIL];
const PLACEHOLDER = /\[\[[A-Z][A-Z0-9_]*_[0-9a-f]{32}\]\]/g;

function setup(upstreamExtra = '', extra = '') {
  const dir = tmp('lf-privacy-');
  const data = join(dir, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'customer.txt'), SECRET_FILE);
  const config = writeConfig(
    dir,
    `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n${upstreamExtra}privacy:\n  ttl_seconds: 600\nrules:\n  tools:\n    write_file: { action: allow }\n${extra}`,
  );
  return { dir, data, config };
}

function assertNoValues(text: string, where: string) {
  for (const v of VALUES) assert.ok(!text.includes(v), `${where} holds ${v} in clear: ${text}`);
}

describe('privacy filter in front of server-filesystem', () => {
  describe('when the client reads a file of private values', () => {
    const env = setup();
    it('sees placeholders, equal values share one, and writing them back puts the real values on disk', async () => {
      const agent = await startAgent(env.config, approve);
      try {
        const read = await agent.call('read_text_file', { path: join(env.data, 'customer.txt') });
        const text = textOf(read);
        assertNoValues(JSON.stringify(read), 'the read result');
        for (const label of ['IBAN', 'CARD', 'PHONE', 'SECRET', 'EMAIL']) assert.match(text, new RegExp(`\\[\\[${label}_[0-9a-f]{32}\\]\\]`), text);
        const ibans = [...text.matchAll(/\[\[IBAN_[0-9a-f]{32}\]\]/g)].map((m) => m[0]);
        assert.equal(ibans.length, 2);
        assert.equal(ibans[0], ibans[1], 'the same IBAN twice gets one placeholder');
        // A second read of the same file gives the same placeholders.
        assert.equal(textOf(await agent.call('read_text_file', { path: join(env.data, 'customer.txt') })), text);

        const out = join(env.data, 'copy.txt');
        const wrote = await agent.call('write_file', { path: out, content: text });
        assert.equal(verdictOf(wrote)?.outcome, 'executed', JSON.stringify(wrote));
        assert.equal(readFileSync(out, 'utf8'), SECRET_FILE, 'the file on disk holds the real values, byte for byte');

        // The log says which placeholders went (ids and kinds), and holds no value anywhere.
        const log = readFileSync(join(env.dir, 'audit.jsonl'), 'utf8');
        assertNoValues(log, 'the audit log');
        const resolved = auditEntries(env.dir).filter((e) => e.event === 'placeholders_resolved');
        assert.equal(resolved.length, 1);
        assert.equal(String(resolved[0]?.placeholders).split(',').length, new Set(text.match(PLACEHOLDER)).size);
      } finally {
        await agent.close();
      }
    });

    it('refuses a made-up placeholder, runs nothing, and locks resolution after three', async () => {
      const agent = await startAgent(env.config, approve);
      try {
        const out = join(env.data, 'probe.txt');
        const fake = `[[IBAN_${'0'.repeat(32)}]]`;
        const first = await agent.call('write_file', { path: out, content: `pay ${fake}` });
        assert.equal(verdictOf(first)?.outcome, 'denied');
        assert.match(textOf(first), /did not give this session/);
        // A placeholder cut short is refused too, never sent as text.
        const cut = await agent.call('write_file', { path: out, content: 'pay [[IBAN_3f9a1c2b…]]' });
        assert.equal(verdictOf(cut)?.outcome, 'denied');
        await agent.call('write_file', { path: out, content: `[[CARD_${'1'.repeat(32)}]]` });
        // Now even a real one is refused: the session is locked.
        const text = textOf(await agent.call('read_text_file', { path: join(env.data, 'customer.txt') }));
        const locked = await agent.call('write_file', { path: out, content: text });
        assert.equal(verdictOf(locked)?.outcome, 'denied');
        assert.match(textOf(locked), /resolves none for it/);
        assert.throws(() => readFileSync(out), /ENOENT/);
      } finally {
        await agent.close();
      }
      // Written behind the answer: read once the gate has stopped.
      assert.ok(auditEntries(env.dir).some((e) => e.event === 'placeholder_refused' && e.locked === true));
    });
  });

  describe('when an upstream echoes back a value a call sent', () => {
    const env = setup();
    it('masks it there too, glued to other text or not, in answers, errors and previews', async () => {
      const agent = await startAgent(env.config, approve);
      try {
        const text = textOf(await agent.call('read_text_file', { path: join(env.data, 'customer.txt') }));
        const card = /\[\[CARD_[0-9a-f]{32}\]\]/.exec(text)?.[0] ?? '';
        const key = /\[\[SECRET_[0-9a-f]{32}\]\]/.exec(text)?.[0] ?? '';
        // The upstream names the path it could not open: the card number glued between letters.
        const missing = await agent.call('read_text_file', { path: join(env.data, `x${card}y`) }).catch((err: Error) => ({ thrown: err.message }));
        assertNoValues(JSON.stringify(missing), 'the error naming the path');
        assert.match(JSON.stringify(missing), /x\[\[CARD_[0-9a-f]{32}\]\]y/);
        // A file written with glued values, read back: no detector sees `x<key>y`, the session still knows it.
        const glued = join(env.data, 'glued.txt');
        await agent.call('write_file', { path: glued, content: `x${key}y` });
        assert.equal(readFileSync(glued, 'utf8'), `x${KEY}y`);
        const back = await agent.call('read_text_file', { path: glued });
        assertNoValues(JSON.stringify(back), 'the file read back');
        // A preview (edit_file's diff) computed from the real values is masked the same way.
        const dry = await agent.call('edit_file', { path: glued, edits: [{ oldText: 'x', newText: `z${card}` }], dryRun: true });
        assertNoValues(JSON.stringify(dry), 'the dry-run diff');
      } finally {
        await agent.close();
      }
      assertNoValues(readFileSync(join(env.dir, 'audit.jsonl'), 'utf8'), 'the audit log');
    });
  });

  describe('when a person approves an edit', () => {
    it('shows the values the agent wrote in clear in the diff, and what the file held as placeholders', async () => {
      const env = setup();
      const agent = await startAgent(env.config, approve);
      try {
        const path = join(env.data, 'customer.txt');
        const text = textOf(await agent.call('read_text_file', { path }));
        const mail = /Mail: (\[\[EMAIL_[0-9a-f]{32}\]\])/.exec(text)?.[1] ?? '';
        const edited = await agent.call('edit_file', { path, edits: [{ oldText: `Mail: ${mail}`, newText: 'Mail: new.owner@example.com' }] });
        assert.equal(verdictOf(edited)?.outcome, 'executed', JSON.stringify(edited));
        const asked = agent.asked.at(-1) ?? '';
        assert.match(asked, /\+Mail: new\.owner@example\.com/, 'the agent’s own new value is readable in the diff');
        assertNoValues(asked, 'the question');
        assert.match(readFileSync(path, 'utf8'), /Mail: new\.owner@example\.com/);
      } finally {
        await agent.close();
      }
    });
  });

  describe('when two client sessions share one gate over HTTP', () => {
    const env = setup();
    const clients: Client[] = [];
    after(async () => {
      for (const c of clients) await c.close().catch(() => {});
    });

    it("does not let the second resolve the first one's placeholders", async () => {
      const served = await serveHttp(env.config);
      try {
        const connect = async (name: string) => {
          const c = new Client({ name, version: '1.0.0' }, { capabilities: {} });
          await c.connect(new StreamableHTTPClientTransport(served.url));
          clients.push(c);
          return c;
        };
        const call = (c: Client, name: string, args: Record<string, unknown>) =>
          c.request({ method: 'tools/call', params: { name, arguments: args } }, ResultSchema) as Promise<Record<string, unknown>>;
        const one = await connect('one');
        const two = await connect('two');
        const text = textOf(await call(one, 'read_text_file', { path: join(env.data, 'customer.txt') }));
        assertNoValues(text, 'the first session read');
        const stolen = join(env.data, 'stolen.txt');
        const r = await call(two, 'write_file', { path: stolen, content: text });
        assert.equal(verdictOf(r)?.outcome, 'denied', JSON.stringify(r));
        assert.throws(() => readFileSync(stolen), /ENOENT/);
        // The first session still can.
        const mine = join(env.data, 'mine.txt');
        assert.equal(verdictOf(await call(one, 'write_file', { path: mine, content: text }))?.outcome, 'executed');
        assert.equal(readFileSync(mine, 'utf8'), SECRET_FILE);
      } finally {
        await served.kill();
      }
    });
  });

  describe('when the upstream is external', () => {
    it('under ask (its default), a person sees which kinds of value would go, and to whom, before any goes', async () => {
      const env = setup('    external: true\n');
      const agent = await startAgent(env.config, approve);
      try {
        const text = textOf(await agent.call('read_text_file', { path: join(env.data, 'customer.txt') }));
        const out = join(env.data, 'sent.txt');
        const r = await agent.call('write_file', { path: out, content: text });
        assert.equal(verdictOf(r)?.outcome, 'executed', JSON.stringify(r));
        assert.equal(agent.asked.length, 1, 'the rule allows write_file, but real values toward an external upstream need a person');
        const asked = agent.asked[0] ?? '';
        assert.match(asked, /sends the real IBAN[^\n]* behind \[\[IBAN_[0-9a-f]{32}\]\][^\n]* to files/);
        assertNoValues(asked, 'the question');
        assert.equal(readFileSync(out, 'utf8'), SECRET_FILE);
      } finally {
        await agent.close();
      }
    });

    it('under never, the placeholder text itself goes', async () => {
      const env = setup('    external: true\n    privacy: { resolve: never }\n');
      const agent = await startAgent(env.config, approve);
      try {
        const text = textOf(await agent.call('read_text_file', { path: join(env.data, 'customer.txt') }));
        const out = join(env.data, 'kept.txt');
        assert.equal(verdictOf(await agent.call('write_file', { path: out, content: text }))?.outcome, 'executed');
        assert.equal(readFileSync(out, 'utf8'), text);
        assert.equal(agent.asked.length, 0);
      } finally {
        await agent.close();
      }
    });
  });
});
