import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from '@decimalturn/toml-patch';
import { LookfirstError } from '../errors.js';
import { maskCodex, wrapCodex } from './codex.js';
import type { WrapInput } from './types.js';

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/clients/${name}`, import.meta.url), 'utf8');
const input = (text: string, neededSeconds = 195): WrapInput => ({
  text,
  file: 'config.toml',
  gateConfig: '/home/sam/.codex/lookfirst.yaml',
  launcher: { command: 'lookfirst', args: [] },
  takenUpstreams: new Set(),
  neededSeconds,
  gateServer: 'lookfirst',
});

describe('wrapCodex', () => {
  const text = fixture('codex.config.toml');
  const r = wrapCodex(input(text));
  const doc = parse(r.text) as { mcp_servers: Record<string, Record<string, unknown>>; profiles: unknown; model: string };

  it('moves the stdio server with its env, keeps the bearer-token and disabled ones', () => {
    assert.deepEqual(r.moved, [
      {
        clientName: 'files',
        upstream: 'files',
        entry: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/sam/projects'],
          env: { LOG_LEVEL: 'debug', API_TOKEN: 'codex-example-secret' },
        },
        comments: ['The reference filesystem server.'],
      },
    ]);
    assert.deepEqual(
      r.kept.map((k) => k.clientName),
      ['figma', 'retired'],
    );
  });

  it('adds [mcp_servers.lookfirst] with tool_timeout_sec raised and the startup timeout carried', () => {
    assert.deepEqual(
      { ...doc.mcp_servers.lookfirst },
      {
        command: 'lookfirst',
        args: ['serve', '--config', '/home/sam/.codex/lookfirst.yaml'],
        startup_timeout_sec: 20,
        tool_timeout_sec: 195,
      },
    );
    assert.equal(r.timeout.value, 195);
  });

  it('keeps the comments and values outside the moved table as written', () => {
    assert.ok(r.text.startsWith('# Codex CLI configuration\nmodel = "gpt-5-codex" # the default model\napproval_policy = "on-request"\n'));
    assert.ok(r.text.includes('# Profiles keep their comments too.\n[profiles.deep]\nmodel = "o3"\n'));
    assert.ok(!r.text.includes('codex-example-secret'));
  });

  it('never lowers a longer tool_timeout_sec a moved server had', () => {
    const t = wrapCodex(input('[mcp_servers.a]\ncommand = "x"\ntool_timeout_sec = 900\n'));
    assert.equal(t.timeout.value, 900);
  });

  it('refuses an already-wrapped file and an invalid one, naming the line', () => {
    assert.throws(
      () => wrapCodex(input(fixture('wrapped/codex.config.toml'))),
      (e: unknown) => e instanceof LookfirstError && e.code === 'WRAP_REFUSED',
    );
    assert.throws(
      () => wrapCodex(input('[mcp_servers.a]\ncommand = \n')),
      (e: unknown) => e instanceof LookfirstError && e.code === 'WRAP_INVALID' && /line 2/.test(e.message),
    );
  });

  it('refuses, writing nothing, a layout it cannot extend (an inline mcp_servers table)', () => {
    assert.throws(
      () => wrapCodex(input('mcp_servers = { a = { command = "x" }, k = { command = "k", enabled = false } }\n')),
      (e: unknown) => e instanceof LookfirstError && e.code === 'WRAP_INVALID',
    );
  });

  it('masks env values for the dry-run diff without changing anything else', () => {
    assert.equal(maskCodex(text, 'f'), text.replace('"debug"', '"***"').replace('"codex-example-secret"', '"***"'));
  });

  it('masks the credentials of an address given as an argument', () => {
    const t = '[mcp_servers.pg]\ncommand = "npx"\nargs = ["server-postgres", "postgresql://app:PGSECRET@db/x"]\n';
    const masked = maskCodex(t, 'f');
    assert.ok(!masked.includes('PGSECRET'), masked);
    assert.ok(masked.includes('"postgresql://app:***@db/x"'), masked);
  });
});

describe('when every server of config.toml moves', () => {
  it('adds no empty [mcp_servers] header above the gate table', () => {
    const r = wrapCodex(input('model = "x"\n\n[mcp_servers.files]\ncommand = "npx"\n\n[profiles.a]\nm = 1\n'));
    assert.doesNotMatch(r.text, /^\[mcp_servers\]$/m);
    assert.ok(r.text.startsWith('model = "x"\n\n[profiles.a]\nm = 1\n\n# lookfirst wrap: files now runs'), r.text);
    assert.deepEqual(Object.keys((parse(r.text) as { mcp_servers: object }).mcp_servers), ['lookfirst']);
  });
});

describe('wrapCodex with odd server names', () => {
  it('writes a name holding a line break into its comment escaped, so it cannot become TOML', () => {
    const r = wrapCodex(input('[mcp_servers."a\\nb = 1"]\ncommand = "x"\n'));
    assert.match(r.text, /^# lookfirst wrap: a\\u000ab = 1 now runs/m);
    assert.deepEqual(Object.keys((parse(r.text) as { mcp_servers: object }).mcp_servers), ['lookfirst']);
  });

  it('moves a server named "__proto__" like any other', () => {
    const r = wrapCodex(input('[mcp_servers.__proto__]\ncommand = "x"\n'));
    assert.deepEqual(
      r.moved.map((m) => m.upstream),
      ['proto'],
    );
  });
});
