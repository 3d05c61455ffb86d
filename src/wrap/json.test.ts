import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parse } from 'jsonc-parser';
import { LookfirstError } from '../errors.js';
import { maskJson, parseClientJson, restoreServersJson, wrapJson } from './json.js';
import type { ClientKind, UpstreamEntry, WrapInput } from './types.js';

const fixture = (name: string) => readFileSync(new URL(`../../test/fixtures/clients/${name}`, import.meta.url), 'utf8');
const input = (text: string, extra: Partial<WrapInput> = {}): WrapInput => ({
  text,
  file: 'client.json',
  gateConfig: '/home/sam/lookfirst.yaml',
  launcher: { command: '/usr/bin/node', args: ['/opt/lookfirst/dist/cli/main.js'] },
  takenUpstreams: new Set(),
  neededSeconds: 195,
  gateServer: 'lookfirst',
  ...extra,
});
const serversOf = (client: ClientKind, text: string) =>
  (parse(text) as Record<string, Record<string, Record<string, unknown>>>)[client === 'vscode' ? 'servers' : 'mcpServers']!;

describe('wrapJson', () => {
  describe('when a Claude Code .mcp.json has stdio, HTTP, SSE and variable-using servers', () => {
    const r = wrapJson('claude-code', input(fixture('claude-code.mcp.json'), { start: { scope: 'project', dir: '/work/p' } }));
    it('moves the stdio and Streamable HTTP servers, with their env and headers, a stdio one with the project root as cwd', () => {
      assert.deepEqual(
        r.moved.map((m) => [m.clientName, m.upstream, m.entry]),
        [
          ['files', 'files', { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', './data'], cwd: '/work/p' }],
          ['linear', 'linear', { url: 'https://mcp.linear.app/mcp', headers: { Authorization: 'Bearer lin_api_exampleSecret' } }],
        ],
      );
    });
    it('keeps the SSE server and the one using an env variable reference, saying why', () => {
      assert.deepEqual(
        r.kept.map((k) => k.clientName),
        ['old-sse', 'api'],
      );
      assert.match(r.kept[0]!.reason, /SSE/);
      assert.match(r.kept[1]!.reason, /variable/);
    });
    it('leaves one gate entry that runs lookfirst serve with the absolute config path, first in place', () => {
      const servers = serversOf('claude-code', r.text);
      assert.deepEqual(Object.keys(servers), ['lookfirst', 'old-sse', 'api']);
      assert.deepEqual(servers.lookfirst, {
        command: '/usr/bin/node',
        args: ['/opt/lookfirst/dist/cli/main.js', 'serve', '--config', '/home/sam/lookfirst.yaml'],
      });
    });
  });

  describe('when VS Code mcp.json has comments, trailing commas, tabs and inputs', () => {
    const text = fixture('vscode.mcp.json');
    const r = wrapJson('vscode', input(text));
    it('keeps the comments outside the moved entries, the inputs and the tabs', () => {
      assert.ok(r.text.startsWith('// VS Code MCP servers for this workspace.\n{\n\t"inputs": ['));
      assert.ok(r.text.includes('"PERPLEXITY_API_KEY": "$' + '{input:perplexity-key}"'));
      assert.match(r.text, /\n\t\t"lookfirst": \{\n\t\t\t"type": "stdio",/);
    });
    it('writes type stdio on the gate entry, as VS Code requires', () => {
      assert.equal(serversOf('vscode', r.text).lookfirst?.type, 'stdio');
    });
    it('hands the comments that leave with a moved entry to lookfirst.yaml, markers off', () => {
      assert.deepEqual(
        r.moved.map((m) => [m.clientName, m.comments]),
        [
          ['memory', ['The reference memory server, for notes across chats.']],
          ['github', ["GitHub's remote server"]],
        ],
      );
      assert.doesNotMatch(r.text, /reference memory server|GitHub's remote server/);
    });
  });

  it('keeps the four-space indentation of a Cursor file and names envFile as the reason to keep a server', () => {
    const r = wrapJson('cursor', input(fixture('cursor.mcp.json')));
    assert.match(r.text, /\n {8}"lookfirst": \{\n {12}"command"/);
    assert.match(r.kept[0]!.reason, /envFile/);
  });

  it('raises Gemini timeout to the gate need, keeps other settings, and keeps SSE (url) servers', () => {
    const text = fixture('gemini.settings.json');
    const r = wrapJson('gemini', input(text, { neededSeconds: 700 }));
    assert.equal(serversOf('gemini', r.text).lookfirst?.timeout, 700_000);
    assert.equal(r.timeout.value, 700_000);
    assert.ok(r.text.includes('"checkpointing": { "enabled": true }'));
    assert.deepEqual(
      r.kept.map((k) => k.clientName),
      ['sseServer', 'filtered'],
    );
    assert.deepEqual(r.moved[0]?.entry, {
      command: 'python',
      args: ['-m', 'my_mcp_server', '--port', '8080'],
      env: { DATABASE_URL: 'postgres://sam:s3cret@localhost/db' },
      cwd: '/home/sam/mcp-servers/python',
    });
  });

  it("leaves Gemini's timeout unset when its default (600 s) already covers the gate", () => {
    const r = wrapJson('gemini', input('{"mcpServers":{"a":{"command":"x"}}}'));
    assert.equal(r.timeout.value, undefined);
    assert.equal(serversOf('gemini', r.text).lookfirst?.timeout, undefined);
  });

  it('gives upstream names the gate accepts, unique against the taken ones', () => {
    const r = wrapJson('claude-desktop', input('{"mcpServers":{"My Files":{"command":"x"},"files":{"command":"y"}}}', { takenUpstreams: new Set(['files']) }));
    assert.deepEqual(
      r.moved.map((m) => m.upstream),
      ['my-files', 'files-2'],
    );
  });

  describe('refusals (nothing is returned to write)', () => {
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        assert.ok(e instanceof LookfirstError);
        return [e.code, e.message] as const;
      }
      assert.fail('no error');
    };
    it('refuses an already-wrapped file, naming the server', () => {
      const [c, m] = code(() => wrapJson('claude-code', input(fixture('wrapped/claude-code.mcp.json'))));
      assert.equal(c, 'WRAP_REFUSED');
      assert.match(m, /"lookfirst" already runs the gate/);
    });
    it('names the line and column of a syntax error', () => {
      const [c, m] = code(() => wrapJson('cursor', input(fixture('invalid.mcp.json'))));
      assert.equal(c, 'WRAP_INVALID');
      assert.match(m, /line 5, column 7/);
    });
    it('refuses a file with no server that can move, listing each reason', () => {
      const [c, m] = code(() => wrapJson('claude-code', input('{"mcpServers":{"a":{"type":"sse","url":"http://x/sse"}}}')));
      assert.equal(c, 'WRAP_REFUSED');
      assert.match(m, /a: it speaks SSE/);
    });
    it('refuses when the gate name is a server that stays', () => {
      const [c] = code(() => wrapJson('claude-code', input('{"mcpServers":{"lookfirst":{"type":"sse","url":"u"},"b":{"command":"x"}}}')));
      assert.equal(c, 'WRAP_REFUSED');
    });
    it('refuses a file without its servers key', () => {
      const [c] = code(() => wrapJson('vscode', input('{"mcpServers":{"b":{"command":"x"}}}')));
      assert.equal(c, 'WRAP_REFUSED');
    });
  });
});

describe('maskJson', () => {
  it('replaces every env and header value, keeping the layout', () => {
    const text = fixture('claude_desktop_config.json');
    const masked = maskJson('claude-desktop', text, 'f');
    assert.ok(!masked.includes('ghp_exampleSecretValue123'));
    assert.equal(masked, text.replace('ghp_exampleSecretValue123', '***'));
  });
});

describe('restoreServersJson', () => {
  it("puts the original servers block back character for character and keeps the client's other changes", () => {
    const original = '{\n  // mine\n  "mcpServers": { "a": { "command": "x" } /* keep */ },\n  "z": 1\n}\n';
    const current = '{\n  "mcpServers": {\n    "lookfirst": { "command": "node" }\n  },\n  "z": 2,\n  "new": true\n}\n';
    assert.equal(
      restoreServersJson('claude-code', current, original, 'f'),
      '{\n  "mcpServers": { "a": { "command": "x" } /* keep */ },\n  "z": 2,\n  "new": true\n}\n',
    );
  });
});

describe('wrapJson on files other tools wrote', () => {
  it('moves a server named "__proto__" instead of losing it to the prototype (it would have run outside the gate, unlisted)', () => {
    const r = wrapJson('cursor', input('{"mcpServers":{"__proto__":{"command":"evil-server"},"ok":{"command":"x"}}}'));
    assert.deepEqual(
      r.moved.map((m) => [m.clientName, m.upstream]),
      [
        ['__proto__', 'proto'],
        ['ok', 'ok'],
      ],
    );
    assert.ok(!r.text.includes('evil-server'), r.text);
  });

  it('keeps, saying why, a server whose env has a "__proto__" key (lookfirst.yaml cannot carry it)', () => {
    const r = wrapJson('cursor', input('{"mcpServers":{"a":{"command":"x","env":{"__proto__":"v"}},"b":{"command":"y"}}}'));
    assert.deepEqual(
      r.kept.map((k) => k.clientName),
      ['a'],
    );
    assert.match(r.kept[0]!.reason, /__proto__/);
  });

  it('reads past a byte order mark and keeps it, with CRLF line ends and tab indentation', () => {
    const text = '\uFEFF{\r\n\t// mine\r\n\t"servers": {\r\n\t\t"a": {"command": "x"},\r\n\t\t"b": {"type": "sse", "url": "https://x"},\r\n\t},\r\n}\r\n';
    const r = wrapJson('vscode', input(text));
    assert.ok(r.text.startsWith('\uFEFF{\r\n\t// mine\r\n'), JSON.stringify(r.text));
    assert.ok(!/[^\r]\n/.test(r.text), 'a bare LF was written into a CRLF file');
    assert.match(r.text, /\r\n\t\t"lookfirst": \{\r\n\t\t\t"type": "stdio"/);
    assert.equal(maskJson('vscode', text, 'f').charAt(0), '\uFEFF');
  });

  it('refuses a key written twice, naming it and the line, since clients keep only one', () => {
    for (const text of [
      '{"mcpServers":{"a":{"command":"x"},\n"a":{"command":"y"}}}',
      '{"mcpServers":{"a":{"command":"x"}},\n"mcpServers":{"b":{"command":"y"}}}',
    ])
      assert.throws(
        () => wrapJson('cursor', input(text)),
        (e: unknown) => e instanceof LookfirstError && e.code === 'WRAP_INVALID' && /appears twice.*line 2/.test(e.message),
      );
  });

  it('restores the servers block of a file with a byte order mark', () => {
    const original = '\uFEFF{"mcpServers":{"a":{"command":"x"}}}';
    const wrapped = wrapJson('cursor', input(original)).text;
    const restored = restoreServersJson('cursor', wrapped.replace('{', '{"n":1,'), original, 'f');
    assert.ok(restored.startsWith('\uFEFF{"n":1,'), JSON.stringify(restored));
    assert.match(restored, /"mcpServers":\{"a":\{"command":"x"\}\}/);
  });
});

describe('maskJson', () => {
  it('is applied to a client file for the dry run', () => {
    const masked = maskJson('cursor', '{"mcpServers":{"a":{"type":"http","url":"https://u:SECRET@x.example/m?k=TOK"}}}', 'f');
    assert.ok(!/SECRET|TOK/.test(masked), masked);
  });
  it('masks the credentials of an address given as an argument (a database URL, --url=…), and leaves other arguments', () => {
    const text =
      '{"mcpServers":{"pg":{"command":"npx","args":["server-postgres","postgresql://app:PGSECRET@db:5432/x","--url=https://h.example/?key=APIKEY","-y"]}}}';
    const masked = maskJson('cursor', text, 'f');
    assert.ok(!/PGSECRET|APIKEY/.test(masked), masked);
    assert.match(masked, /"server-postgres","postgresql:\/\/app:\*\*\*@db:5432\/x","--url=https:\/\/h\.example\/\?key=\*\*\*","-y"/);
  });
});

describe("wrapJson on Claude Code's ~/.claude.json", () => {
  it('names the per-project servers it leaves running without the gate', () => {
    const r = wrapJson(
      'claude-code',
      input('{"projects":{"/home/sam/app":{"mcpServers":{"db":{"command":"pg"}}},"/x":{}},"mcpServers":{"a":{"command":"x"}}}'),
    );
    assert.equal(r.untouched?.length, 1);
    assert.match(r.untouched![0]!, /projects\["\/home\/sam\/app"\]\.mcpServers: db/);
  });
});

describe('when a VS Code file keeps a one-line entry beside a moved one with comments', () => {
  const text = fixture('vscode-oneline.mcp.json');
  const r = wrapJson('vscode', input(text));
  const lines = (t: string) => t.split('\n');
  it('leaves every kept line as it was, one-line entry and its comment included', () => {
    const fs = lines(text)[3]!;
    assert.match(fs, /^\t\t"fs": \{ "type": "stdio".*\}, \/\/ stays: a variable$/);
    assert.ok(lines(r.text).includes(fs));
    assert.ok(lines(r.text).includes('\t\t"other": { "command": "o", "envFile": "$' + '{workspaceFolder}/.env" }'));
    for (const l of [0, 1, 2]) assert.equal(lines(r.text)[l], lines(text)[l]);
    assert.ok(r.text.endsWith('\n\t}\n}\n'));
  });
  it("takes the moved entry's comment lines and trailing comment with it, not onto the gate's line", () => {
    assert.doesNotMatch(r.text, /\/\/ memory|notes across chats/);
    assert.match(r.text, /\n\t\t"lookfirst": \{\n\t\t\t"type": "stdio",\n/);
    assert.match(r.text, /\n\t\t\t\]\n\t\t\},\n\t\t"other"/);
  });
  it('removes the comma a removed last entry leaves trailing, so strict JSON still parses', () => {
    const t = '{\n  "mcpServers": {\n    "a": { "command": "keep", "env": { "X": "$' + '{Y}" } },\n    "b": { "command": "b" }\n  }\n}\n';
    const out = wrapJson('claude-desktop', input(t)).text;
    assert.doesNotThrow(() => JSON.parse(out));
    assert.ok(out.startsWith('{\n  "mcpServers": {\n    "a": { "command": "keep", "env": { "X": "$' + '{Y}" } },\n    "lookfirst": {\n'));
  });
  it('keeps a one-line file on one line', () => {
    const out = wrapJson('cursor', input('{"mcpServers":{"k":{"command":"k","envFile":"e"},"a":{"command":"x"}}}')).text;
    assert.ok(out.startsWith('{"mcpServers":{"k":{"command":"k","envFile":"e"},"lookfirst": {"command":'), out);
    assert.doesNotMatch(out, /\n/);
  });
});

describe('when lookfirst.yaml already holds the same server', () => {
  const one = '{"mcpServers":{"filesystem":{"command":"npx","args":["-y","fs","/data"],"env":{"A":"1","B":"2"}}}}';
  const existing = (entry: UpstreamEntry) => ({ takenUpstreams: new Set(['filesystem']), existingUpstreams: new Map([['filesystem', entry]]) });
  it('reuses it (env in any order, the default cwd being lookfirst.yaml folder) instead of adding filesystem-2', () => {
    const r = wrapJson('cursor', input(one, existing({ command: 'npx', args: ['-y', 'fs', '/data'], env: { B: '2', A: '1' }, cwd: '/home/sam' })));
    assert.deepEqual(
      r.moved.map((m) => [m.upstream, m.reused]),
      [['filesystem', true]],
    );
  });
  it('gives a different server of the same name a suffix', () => {
    const r = wrapJson('cursor', input(one, existing({ command: 'npx', args: ['-y', 'fs', '/other'], cwd: '/home/sam' })));
    assert.deepEqual(
      r.moved.map((m) => [m.upstream, m.reused]),
      [['filesystem-2', undefined]],
    );
  });
  it('treats another working folder, or an http server, as different', () => {
    const r = wrapJson('cursor', input(one, existing({ command: 'npx', args: ['-y', 'fs', '/data'], env: { A: '1', B: '2' }, cwd: '/srv' })));
    assert.equal(r.moved[0]?.upstream, 'filesystem-2');
    const h = wrapJson('cursor', input(one, existing({ url: 'https://x/mcp' })));
    assert.equal(h.moved[0]?.upstream, 'filesystem-2');
  });
  it('reuses an identical entry under another name, and a server listed twice in one file once', () => {
    const two = '{"mcpServers":{"files":{"command":"m"},"notes":{"command":"m"},"other":{"command":"o"}}}';
    const r = wrapJson(
      'cursor',
      input(two, { takenUpstreams: new Set(['memory']), existingUpstreams: new Map([['memory', { command: 'm', args: [], env: {}, cwd: '/home/sam' }]]) }),
    );
    assert.deepEqual(
      r.moved.map((m) => [m.clientName, m.upstream, m.reused === true]),
      [
        ['files', 'memory', true],
        ['notes', 'memory', true],
        ['other', 'other', false],
      ],
    );
    const d = wrapJson('cursor', input(two));
    assert.deepEqual(
      d.moved.map((m) => [m.upstream, m.reused === true]),
      [
        ['files', false],
        ['files', true],
        ['other', false],
      ],
    );
  });
});

describe('when a project file moves a server with no cwd, and lookfirst.yaml holds it from an earlier wrap', () => {
  const one = '{"mcpServers":{"files":{"command":"npx","args":["-y","fs","./data"]}}}';
  const start = { scope: 'project', dir: '/work/p' } as const;
  it('reuses the entry with the project root as cwd (wrap, unwrap, wrap again)', () => {
    const first = wrapJson('claude-code', input(one, { start }));
    const again = wrapJson(
      'claude-code',
      input(one, { start, takenUpstreams: new Set(['files']), existingUpstreams: new Map([['files', first.moved[0]!.entry]]) }),
    );
    assert.deepEqual(
      again.moved.map((m) => [m.upstream, m.reused]),
      [['files', true]],
    );
  });
  it("does not reuse the same server of another project, nor one started in lookfirst.yaml's folder", () => {
    for (const cwd of ['/work/other', '/home/sam']) {
      const r = wrapJson(
        'claude-code',
        input(one, {
          start,
          takenUpstreams: new Set(['files']),
          existingUpstreams: new Map([['files', { command: 'npx', args: ['-y', 'fs', './data'], cwd }]]),
        }),
      );
      assert.deepEqual(
        r.moved.map((m) => [m.upstream, m.reused, (m.entry as { cwd?: string }).cwd]),
        [['files-2', undefined, '/work/p']],
      );
    }
  });
});

describe('parseClientJson on a broken file', () => {
  const messageOf = (text: string) => {
    try {
      parseClientJson(text, 'f.json');
    } catch (err) {
      return (err as Error).message;
    }
    assert.fail('no error');
  };
  it("says what is missing in words, not in jsonc-parser's code names", () => {
    const m = messageOf('{\n  "mcpServers": {\n');
    assert.match(m, /line 3, column 1: expected "}" \(an object is not closed\)/);
    assert.doesNotMatch(m, /Expected|CloseBrace/);
    assert.match(messageOf('{"a" 1}'), /line 1, column 6: expected ":" after the key/);
  });
  it('names one place once when one mistake gives two codes there', () => {
    const m = messageOf('{"a": 1,,}');
    assert.equal(m.match(/line 1, column 9/g)?.length, 1, m);
  });
});
