/**
 * `lookfirst check` and `lookfirst pilot-status` as a user runs them: the built CLI against real configs
 * in temp folders, in front of the real @modelcontextprotocol/server-filesystem. Checks that check starts
 * no gate (no log, no state file, a port held by someone else is only a warning), never prints a token,
 * names a rule that matches no tool, and exits 0 / 2 / 1 as documented; and that pilot-status scores a
 * gate that ran once, with a head copy kept elsewhere, 7/7.
 */
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { FS_SERVER, NODE, runCliAsync, startAgent, tmp, writeConfig } from './helpers.js';
import { type PostgresServer, postgresMissing, startPostgres } from './postgres.js';
import { removeTemp } from './temp.js';

const cli = (args: string[]) => runCliAsync(args, 120_000);

/** A port nothing listens on now (bound, then closed). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const fsUpstream = (data: string) => `upstreams:\n  files:\n    command: ${JSON.stringify(NODE)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n`;

function folder(): { dir: string; data: string } {
  const dir = tmp('lf-check-');
  const data = join(dir, 'data');
  mkdirSync(data);
  writeFileSync(join(data, 'hello.txt'), 'hello\n');
  return { dir, data };
}

type Check = { id: string; level: string; message: string };

describe('lookfirst check', () => {
  describe('when everything is in order (a port the page would use is held by someone else)', () => {
    const { dir, data } = folder();
    const token = `tok-${'a1b2c3d4'.repeat(8)}`;
    let holder: Server;
    let port: number;
    let text: Awaited<ReturnType<typeof cli>>;
    let json: Awaited<ReturnType<typeof cli>>;
    before(async () => {
      holder = createServer((s) => s.destroy());
      await new Promise<void>((r) => holder.listen(0, '127.0.0.1', r));
      port = (holder.address() as { port: number }).port;
      writeFileSync(join(dir, 'http.token'), `${token}\n`, { mode: 0o600 });
      const config = writeConfig(
        dir,
        `${fsUpstream(data)}rules:\n  tools:\n    write_file: { action: confirm }\n    "read_*": { action: allow }\nconfirm:\n  elicitation: false\n  web: { enabled: true, port: ${port} }\nhttp:\n  token_file: http.token\n`,
      );
      [text, json] = await Promise.all([cli(['check', '--config', config]), cli(['check', '--config', config, '--json'])]);
    });
    after(async () => {
      await new Promise((r) => holder.close(r));
      removeTemp(dir);
    });

    it('exits 0, every line OK but the one naming the port in use', () => {
      assert.equal(text.status, 0, text.stdout + text.stderr);
      const lines = text.stdout.trim().split('\n');
      const notOk = lines.filter((l) => !l.startsWith('OK ') && !/OK, \d+ WARN/.test(l));
      assert.equal(notOk.length, 1, text.stdout);
      assert.match(notOk[0] ?? '', new RegExp(`^WARN  something already listens on 127\\.0\\.0\\.1:${port} \\(confirm\\.web\\.port\\)`));
      assert.match(text.stdout, /upstream files \(stdio\) answered in \d+ ms with \d+ tools/);
    });

    it('prints the JSON shape the help documents', () => {
      assert.equal(json.status, 0);
      const out = JSON.parse(json.stdout) as { config: string; checks: Check[]; summary: { ok: number; warn: number; error: number } };
      assert.equal(out.config, join(dir, 'lookfirst.yaml'));
      assert.deepEqual(out.summary, { ok: out.checks.length - 1, warn: 1, error: 0 });
      for (const c of out.checks) assert.deepEqual(Object.keys(c).sort(), ['id', 'level', 'message']);
      assert.ok(out.checks.some((c) => c.id === 'upstream.files' && c.level === 'OK'));
    });

    it('starts no gate: no log, no head, no state file, no receipts', () => {
      assert.deepEqual(readdirSync(dir).sort(), ['audit.key', 'audit.pub', 'data', 'http.token', 'lookfirst.yaml']);
    });

    it('never prints the token', () => {
      for (const out of [text, json]) assert.ok(!(out.stdout + out.stderr).includes(token));
      assert.match(text.stdout, /holds 1 token, readable by its owner only \(not shown\)/);
    });
  });

  describe('when the key is missing, an upstream command does not exist, PostgreSQL does not answer and the redaction hook is not there', () => {
    const { dir, data } = folder();
    let r: Awaited<ReturnType<typeof cli>>;
    before(async () => {
      const port = await freePort();
      const config = writeConfig(
        dir,
        `${fsUpstream(data)}  ghost:\n    command: ${JSON.stringify(join(dir, 'no-such-server'))}\nrules:\n  tools:\n    "files__delete_*": { action: deny }\nstore:\n  kind: postgres\n  url: postgresql://lf:pw-never-shown@127.0.0.1:${port}/lf\nhttp:\n  token_file: open.token\nredact: { hook: ./no-such-hook.mjs }\n`,
        { keygen: false },
      );
      writeFileSync(join(dir, 'open.token'), `${'x'.repeat(40)}\n`);
      chmodSync(join(dir, 'open.token'), 0o644);
      r = await cli(['check', '--config', config, '--timeout', '5']);
    });
    after(() => removeTemp(dir));

    it('exits 2 with one ERROR line for each, saying what to do', () => {
      assert.equal(r.status, 2, r.stdout + r.stderr);
      const errors = r.stdout.split('\n').filter((l) => l.startsWith('ERROR'));
      assert.ok(
        errors.some((l) => /no audit key at .*audit\.key.*keygen --config/.test(l)),
        r.stdout,
      );
      assert.ok(
        errors.some((l) => /upstream ghost \(stdio\) could not be listed: .*ENOENT/.test(l)),
        r.stdout,
      );
      assert.ok(
        errors.some((l) => /PostgreSQL store at 127\.0\.0\.1:\d+\/lf cannot be reached .*start the database or fix store\.url/.test(l)),
        r.stdout,
      );
      assert.ok(
        errors.some((l) => /redaction hook cannot be loaded, so the gate will not start: .*no-such-hook\.mjs/.test(l)),
        r.stdout,
      );
      assert.match(r.stdout, /\d+ OK, \d+ WARN, 4 ERROR: fix the ERROR lines before serving/);
    });

    it('lists the other upstream all the same, and warns about a token file others can read', () => {
      assert.match(r.stdout, /^OK {4}upstream files \(stdio\) answered/m);
      assert.match(r.stdout, /^WARN {2}http\.token_file .* is readable by others \(mode 0644\): run chmod 600/m);
    });

    it('names the rule that matches no tool, and says the missing upstream might have it', () => {
      assert.match(r.stdout, /^WARN {2}rule "files__delete_\*" \(line \d+\) matches no tool of any upstream \(upstream ghost could not be listed/m);
    });

    it('never prints the database password', () => {
      assert.ok(!(r.stdout + r.stderr).includes('pw-never-shown'));
    });
  });

  describe('with a PostgreSQL store that answers', { skip: postgresMissing() }, () => {
    const { dir, data } = folder();
    let db: PostgresServer;
    before(async () => {
      db = await startPostgres();
    });
    after(() => {
      db?.stop();
      removeTemp(dir);
    });

    it('says it answers, and creates nothing in it', async () => {
      const config = writeConfig(
        dir,
        `${fsUpstream(data)}store:\n  kind: postgres\n  url: ${db.url}\nconfirm:\n  elicitation: false\n  web: { enabled: true, port: 0 }\n`,
      );
      const r = await cli(['check', '--config', config, '--json']);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const store = (JSON.parse(r.stdout) as { checks: Check[] }).checks.find((c) => c.id === 'store');
      assert.equal(store?.level, 'OK');
      assert.match(store?.message ?? '', /^PostgreSQL store at 127\.0\.0\.1:\d+\/postgres answers$/);
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      try {
        const { rows } = await client.query("SELECT to_regclass('lookfirst_store') AS t");
        assert.equal(rows[0]?.t, null, 'check created the store table');
      } finally {
        await client.end();
      }
    });
  });

  it('reports an invalid config as ERROR lines (exit 2), and a missing one as a usage error (exit 1)', async () => {
    const { dir } = folder();
    try {
      const bad = writeConfig(dir, 'upstreams:\n  files:\n    comand: x\n', { keygen: false });
      const [invalid, missing] = await Promise.all([cli(['check', '--config', bad]), cli(['check', '--config', join(dir, 'nope.yaml')])]);
      assert.equal(invalid.status, 2);
      assert.match(invalid.stdout, /^ERROR .*lookfirst\.yaml line 3/m);
      assert.equal(missing.status, 1);
      assert.match(missing.stderr, /no such file/);
    } finally {
      removeTemp(dir);
    }
  });
});

describe('lookfirst pilot-status', () => {
  const { dir, data } = folder();
  const safe = tmp('lf-check-safe-');
  let config: string;
  before(async () => {
    config = writeConfig(dir, `${fsUpstream(data)}confirm:\n  elicitation: false\n  web: { enabled: true, port: 0 }\n`);
    // The gate runs once, so that there is a log, and its head is copied somewhere else.
    const agent = await startAgent(config);
    await agent.close();
    copyFileSync(join(dir, 'audit.jsonl.head'), join(safe, 'audit.jsonl.head'));
  });
  after(() => {
    removeTemp(dir);
    removeTemp(safe);
  });

  it('scores a gate that ran once, with its head kept elsewhere, 7/7 and exits 0', async () => {
    const r = await cli(['pilot-status', '--config', config, '--trusted-head', join(safe, 'audit.jsonl.head')]);
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^pilot readiness: 7\/7/);
    assert.equal(r.stdout.split('\n').filter((l) => l.startsWith('PASS')).length, 7);
    assert.match(r.stdout, /ready for a pilot/);
  });

  it('fails the trusted head without --trusted-head, and --json gives each item with its fix (exit 2)', async () => {
    const r = await cli(['pilot-status', '--config', config, '--json']);
    assert.equal(r.status, 2, r.stdout + r.stderr);
    const out = JSON.parse(r.stdout) as { config: string; score: { passed: number; total: number }; items: { id: string; pass: boolean; fix?: string }[] };
    assert.deepEqual(out.score, { passed: 6, total: 7 });
    const failed = out.items.filter((i) => !i.pass);
    assert.deepEqual(
      failed.map((i) => i.id),
      ['trusted-head'],
    );
    assert.match(failed[0]?.fix ?? '', /--trusted-head/);
    assert.deepEqual(
      out.items.map((i) => i.id),
      ['key', 'log', 'trusted-head', 'writes-covered', 'channel', 'self-approval', 'store'],
    );
  });

  it('fails a memory store for two replicas', async () => {
    const { dir: d2, data: data2 } = folder();
    try {
      const c2 = writeConfig(d2, `${fsUpstream(data2)}store: { kind: memory }\n`);
      const r = await cli(['pilot-status', '--config', c2, '--replicas', '2']);
      assert.equal(r.status, 2);
      assert.match(r.stdout, /^FAIL the store suits 2 replicas: a memory store is one per process/m);
      assert.ok(!existsSync(join(d2, 'audit.jsonl')));
    } finally {
      removeTemp(d2);
    }
  });
});
