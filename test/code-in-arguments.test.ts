/**
 * Code in arguments through the real gate: an upstream that calls every tool read-only and runs what it
 * is given. Writes hidden in SQL, GraphQL and shell are held for a person (and never run when declined),
 * and in a dry run they are recorded, not run; proven reads pass.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decline, nodeUpstream, ROOT, startAgent, tmp, verdictOf, writeConfig } from './helpers.js';

const CODE_UPSTREAM = join(ROOT, 'test/fixtures/code-upstream.mjs');

const WRITES: [string, Record<string, string>][] = [
  ['query_database', { query: 'TRUNCATE users' }],
  ['query_database', { query: 'DROP USER bob' }],
  ['query_database', { query: 'GRANT admin TO mallory' }],
  ['query_database', { query: "COPY users TO '/tmp/x'" }],
  ['query_database', { query: 'ALTER ROLE app SUPERUSER' }],
  ['query_database', { query: "SELECT \"dblink_exec\"('host=x', 'DROP TABLE t')" }],
  ['query_database', { query: "SELECT nextval/**/('s')" }],
  ['query_database', { query: "SELECT dblink_send_query('c', 'DELETE FROM t')" }],
  ['query_database', { query: "SELECT load_extension('/tmp/x.so')" }],
  ['graphql_query', { query: '# only a read\nmutation { deleteUser(id: 1) { id } }' }],
  ['graphql_query', { query: 'query { a ' }],
  ['get_shell_output', { command: 'ls; r\\m -rf /tmp/x' }],
];
const READS: [string, Record<string, string>][] = [
  ['query_database', { query: 'SELECT id, lower(email) FROM users WHERE id = 1' }],
  ['graphql_query', { query: 'query { viewer { login } }' }],
  ['get_shell_output', { command: 'ls -la | grep x | wc -l' }],
];

function gate() {
  const dir = tmp('lf-code-');
  const executed = join(dir, 'executed.jsonl');
  const config = writeConfig(dir, `upstreams:\n${nodeUpstream('db', CODE_UPSTREAM, ['--executed', executed])}`);
  const ran = () =>
    existsSync(executed)
      ? readFileSync(executed, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { text: string })
      : [];
  return { config, ran };
}

describe('code in arguments, through the gate', () => {
  it('holds every write hidden in code for a person, runs none when declined, and passes proven reads', async () => {
    const g = gate();
    const agent = await startAgent(g.config, decline);
    try {
      for (const [tool, args] of WRITES) {
        const result = await agent.call(tool, args);
        assert.equal(verdictOf(result)?.outcome, 'denied', `${tool} ${JSON.stringify(args)}`);
      }
      assert.equal(agent.asked.length, WRITES.length, 'a person was asked about each one');
      assert.deepEqual(g.ran(), [], 'nothing the person declined ran');
      for (const [tool, args] of READS) await agent.call(tool, args);
      assert.equal(agent.asked.length, WRITES.length, `nobody was asked about a proven read: ${agent.asked.slice(WRITES.length).join(' / ').slice(0, 600)}`);
      assert.deepEqual(
        g.ran().map((r) => r.text),
        READS.map(([, a]) => Object.values(a)[0]),
      );
    } finally {
      await agent.close();
    }
  });

  it('in a dry run records the same writes instead of running them', async () => {
    const g = gate();
    const agent = await startAgent(g.config, decline, {}, ['--dry-run']);
    try {
      for (const [tool, args] of WRITES.slice(0, 4)) assert.equal(verdictOf(await agent.call(tool, args))?.outcome, 'dry_run');
      assert.deepEqual(g.ran(), []);
    } finally {
      await agent.close();
    }
  });
});
