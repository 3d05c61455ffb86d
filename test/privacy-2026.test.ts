/**
 * Placeholders of a 2026-07-28 session over HTTP, across two gate replicas sharing one store (SQLite, on
 * one host): the session is the bearer token with the client's name, the same on both, so a value read on
 * one replica has the same placeholder on the other, and a write sent to the other resolves it. Another
 * client name under the same token is another session: it resolves nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { FS_SERVER, NODE, textOf, tmp, verdictOf, writeConfig } from './helpers.js';
import { type ServedHttp, serveHttp, TOKEN } from './http-gate.js';

const IBAN = 'NL91 ABNA 0417 1643 00';
const EMAIL = 'piet.jansen@example.nl';
const FILE = `Betaling naar ${IBAN}, bevestiging aan ${EMAIL}.\n`;

describe('privacy filter for 2026-07-28 clients across replicas', () => {
  const served: ServedHttp[] = [];
  const clients: Client[] = [];
  after(async () => {
    for (const c of clients) await c.close().catch(() => {});
    for (const s of served) await s.kill();
  });

  it('keeps one placeholder per value for the session on both replicas, and resolves it on either', async () => {
    const root = tmp('lf-privacy-2026-');
    const data = join(root, 'data');
    mkdirSync(data);
    writeFileSync(join(data, 'payment.txt'), FILE);
    writeFileSync(join(root, 'token.txt'), `${TOKEN}\n`);
    for (const name of ['one', 'two']) {
      const dir = join(root, name);
      mkdirSync(dir);
      const config = writeConfig(
        dir,
        `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\nhttp:\n  token_file: ../token.txt\nstore:\n  kind: sqlite\n  path: ../shared-state.db\nprivacy: {}\nrules:\n  tools:\n    write_file: { action: allow }\n`,
      );
      served.push(await serveHttp(config));
    }
    const auth = { requestInit: { headers: { authorization: `Bearer ${TOKEN}` } } };
    const connect = async (name: string, replica: ServedHttp) => {
      const c = new Client({ name, version: '1.0.0' }, { capabilities: {}, versionNegotiation: { mode: { pin: '2026-07-28' } } });
      await c.connect(new StreamableHTTPClientTransport(replica.url, auth));
      clients.push(c);
      return c;
    };
    const [one, two] = served as [ServedHttp, ServedHttp];
    const onOne = await connect('agent', one);
    const onTwo = await connect('agent', two);
    const read = async (c: Client) =>
      textOf((await c.callTool({ name: 'read_text_file', arguments: { path: join(data, 'payment.txt') } })) as Record<string, unknown>);
    const first = await read(onOne);
    assert.ok(!first.includes(IBAN) && !first.includes(EMAIL), first);
    assert.match(first, /\[\[IBAN_[0-9a-f]{32}\]\]/);
    assert.equal(await read(onTwo), first, 'the same values have the same placeholders on the other replica');

    const out = join(data, 'copy.txt');
    const wrote = (await onTwo.callTool({ name: 'write_file', arguments: { path: out, content: first } })) as Record<string, unknown>;
    assert.equal(verdictOf(wrote)?.outcome, 'executed', JSON.stringify(wrote));
    assert.equal(readFileSync(out, 'utf8'), FILE);

    const other = await connect('another-agent', two);
    const stolen = join(data, 'stolen.txt');
    const refused = (await other.callTool({ name: 'write_file', arguments: { path: stolen, content: first } })) as Record<string, unknown>;
    assert.equal(verdictOf(refused)?.outcome, 'denied', JSON.stringify(refused));
    assert.throws(() => readFileSync(stolen), /ENOENT/);
  });
});
