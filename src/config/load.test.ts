import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../errors.js';
import { KNOWN_KEYS, parseConfig, schemaKeys } from './load.js';
import { configSchema } from './schema.js';

const problems = (text: string) => {
  try {
    parseConfig(text, '/etc/lf/lookfirst.yaml');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    return err.problems;
  }
  assert.fail('expected a ConfigError');
};

describe('config', () => {
  it('resolves paths against the config folder and applies safe defaults', () => {
    const c = parseConfig('upstreams:\n  files:\n    command: npx\n    args: ["-y", "x"]\n', '/etc/lf/lookfirst.yaml');
    assert.equal(c.audit.logPath, '/etc/lf/audit.jsonl');
    assert.equal(c.audit.pubPath, '/etc/lf/audit.pub');
    assert.equal(c.confirm.web.enabled, false);
    assert.equal(c.confirm.elicitation, true);
    assert.equal(c.confirm.timeoutMs, 120_000);
    assert.deepEqual(c.upstreams[0], {
      kind: 'stdio',
      name: 'files',
      command: 'npx',
      args: ['-y', 'x'],
      env: {},
      cwd: '/etc/lf',
      timeoutMs: 60_000,
      external: false,
      resolve: 'always',
    });
    assert.equal(c.privacy, undefined, 'the privacy filter is off unless the config has a privacy section');
  });

  describe('privacy and redact', () => {
    const base = 'upstreams:\n  files:\n    command: npx\n  mail:\n    url: https://mail.example/mcp\n    external: true\n';
    it('turns the filter on with a privacy section, and makes an external upstream ask by default', () => {
      const c = parseConfig(
        `${base}privacy:\n  names: [Jane Doe]\n  patterns:\n    - { label: EMPLOYEE_ID, pattern: 'EMP-\\d{6}' }\n`,
        '/etc/lf/lookfirst.yaml',
      );
      assert.deepEqual(c.privacy, {
        ttlMs: 86_400_000,
        names: ['Jane Doe'],
        patterns: [{ label: 'EMPLOYEE_ID', pattern: 'EMP-\\d{6}' }],
        phoneRegions: undefined,
        allowBinary: false,
      });
      assert.deepEqual(
        c.upstreams.map((u) => [u.name, u.external, u.resolve]),
        [
          ['files', false, 'always'],
          ['mail', true, 'ask'],
        ],
      );
      assert.equal(parseConfig(`${base}privacy: { enabled: false }\n`, '/etc/lf/lookfirst.yaml').privacy, undefined);
    });

    it('takes an upstream’s own resolve over the default', () => {
      const c = parseConfig(`${base.replace('external: true', 'external: true\n    privacy: { resolve: never }')}privacy: {}\n`, '/etc/lf/lookfirst.yaml');
      assert.equal(c.upstreams[1]?.resolve, 'never');
    });

    it('names every bad pattern, label and region by its path, all at once', () => {
      const p = problems(
        `${base}privacy:\n  phone_regions: [de]\n  patterns:\n    - { label: employee, pattern: 'E(' }\n    - { label: EMPTY, pattern: 'x*' }\n`,
      );
      const byPath = Object.fromEntries(p.map((x) => [x.path, x.message]));
      assert.match(byPath['privacy.patterns.0.label'] ?? '', /upper-case letter/);
      assert.match(byPath['privacy.patterns.0.pattern'] ?? '', /not a valid regular expression/);
      assert.match(byPath['privacy.patterns.1.pattern'] ?? '', /matches the empty string/);
      assert.match(byPath['privacy.phone_regions.0'] ?? '', /two upper-case letters/);
    });

    it('takes a bare privacy: as on, and refuses built-in labels, unknown regions and says why a double-quoted pattern fails', () => {
      assert.equal(parseConfig(`${base}privacy:\n`, '/etc/lf/lookfirst.yaml').privacy?.ttlMs, 86_400_000);
      const p = problems(`${base}privacy:\n  phone_regions: [XX]\n  patterns:\n    - { label: IBAN, pattern: 'FOO\\d+' }\n`);
      const byPath = Object.fromEntries(p.map((x) => [x.path, x.message]));
      assert.match(byPath['privacy.patterns.0.label'] ?? '', /built-in kind/);
      assert.match(byPath['privacy.phone_regions.0'] ?? '', /not a region/);
      const quoted = problems(`${base}privacy:\n  patterns:\n    - { label: EMP, pattern: "EMP-\\d{6}" }\n`);
      assert.match(quoted[0]?.message ?? '', /single quotes/);
    });

    it('resolves the redaction hook against the config folder, with redact as the default export', () => {
      const c = parseConfig(`${base}redact:\n  hook: ./hooks/redact.js\n`, '/etc/lf/lookfirst.yaml');
      assert.deepEqual(c.redact, { module: '/etc/lf/hooks/redact.js', exportName: 'redact', timeoutMs: 1000 });
      assert.match(problems(`${base}redact:\n  hook: "./x.js#not-a-name"\n`)[0]?.message ?? '', /module path/);
    });
  });

  describe('confirm.device (paired phones)', () => {
    const base = 'upstreams:\n  files:\n    command: npx\n';
    it('is off unless enabled, and resolves users, TLS paths and the voice recogniser', () => {
      assert.equal(parseConfig(`${base}confirm:\n  device: { enabled: false }\n`, '/etc/lf/lookfirst.yaml').confirm.device, undefined);
      const c = parseConfig(
        `${base}confirm:\n  mode: pending\n  device:\n    enabled: true\n    host: 0.0.0.0\n    tls: { cert_file: c.pem, key_file: k.pem }\n    users: { stdio: alice }\n    voice: { pocketsphinx: true, languages: [en, hi] }\n`,
        '/etc/lf/lookfirst.yaml',
      );
      assert.equal(c.confirm.mode, 'pending');
      assert.deepEqual(c.confirm.device?.tls, { certFile: '/etc/lf/c.pem', keyFile: '/etc/lf/k.pem' });
      assert.deepEqual(c.confirm.device?.users, { stdio: 'alice' });
      assert.equal(c.confirm.device?.defaultUser, 'owner');
      assert.deepEqual(c.confirm.device?.voice?.recogniser, { kind: 'pocketsphinx' });
      assert.deepEqual(c.confirm.device?.voice?.languages, ['en', 'hi']);
    });
    it('reports a voice with two recognisers and a bad language at once, and a command without {file} at its line', () => {
      const both = problems(
        `${base}confirm:\n  device:\n    enabled: true\n    voice:\n      pocketsphinx: true\n      command: [foo, "{file}"]\n      languages: [en, de]\n`,
      );
      assert.ok(
        both.some((p) => /exactly one recogniser/.test(p.message)),
        JSON.stringify(both),
      );
      assert.ok(
        both.some((p) => p.path === 'confirm.device.voice.languages.1'),
        JSON.stringify(both),
      );
      const noFile = problems(`${base}confirm:\n  device:\n    enabled: true\n    voice:\n      command: [foo]\n`);
      assert.equal(noFile.length, 1, JSON.stringify(noFile));
      assert.equal(noFile[0]?.path, 'confirm.device.voice.command');
      assert.equal(noFile[0]?.line, 8);
      assert.match(noFile[0]?.message ?? '', /\{file\}/);
      assert.doesNotMatch(noFile[0]?.message ?? '', /recogniser\.argv/);
    });
    it('warns (and does not refuse) when device settings are given with enabled false', () => {
      const c = parseConfig(`${base}confirm:\n  device:\n    port: 9000\n    voice: { pocketsphinx: true }\n`, '/etc/lf/lookfirst.yaml');
      assert.equal(c.confirm.device, undefined);
      assert.equal(c.warnings?.length, 1);
      assert.match(c.warnings?.[0] ?? '', /confirm\.device \(line 5\) has settings \(port, voice\) but enabled is false.*set enabled: true/);
      assert.deepEqual(parseConfig(`${base}confirm:\n  device: { enabled: false }\n`, '/etc/lf/lookfirst.yaml').warnings, []);
      assert.deepEqual(parseConfig(`${base}confirm:\n  device: { enabled: true }\n`, '/etc/lf/lookfirst.yaml').warnings, []);
    });
    it('refuses a device page off loopback without HTTPS, and a voice with no or two recognisers', () => {
      assert.match(problems(`${base}confirm:\n  device: { enabled: true, host: 0.0.0.0 }\n`)[0]?.message ?? '', /needs HTTPS/);
      assert.match(problems(`${base}confirm:\n  device: { enabled: true, voice: {} }\n`)[0]?.message ?? '', /exactly one recogniser/);
      assert.match(
        problems(`${base}confirm:\n  device: { enabled: true, voice: { pocketsphinx: true, url: "http://127.0.0.1:1/x" } }\n`)[0]?.message ?? '',
        /exactly one recogniser/,
      );
    });
  });
  it('reads the example config from the issue', () => {
    const c = parseConfig(
      `upstreams:
  files:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-filesystem", "./data"]
  crm:
    url: http://127.0.0.1:9000/mcp
rules:
  tools:
    files__write_file: { action: confirm }
    "files__move_*": { action: deny }
confirm:
  timeout_seconds: 120
  elicitation: true
  web: { enabled: true, host: 127.0.0.1, port: 8471 }
audit:
  log: audit.jsonl
  key: audit.key
`,
      '/x/lookfirst.yaml',
    );
    assert.equal(c.upstreams[1]?.kind, 'http');
    assert.deepEqual(
      c.rules.map((r) => [r.pattern, r.action, r.line]),
      [
        ['files__write_file', 'confirm', 9],
        ['files__move_*', 'deny', 10],
      ],
    );
  });

  describe('when the file is wrong', () => {
    it('names an unknown key and its line', () => {
      assert.deepEqual(problems('upstreams:\n  a:\n    command: x\naudit:\n  lgo: a.jsonl\n'), [
        { path: 'audit.lgo', line: 5, message: 'unknown key "lgo" (did you mean "log"?)' },
      ]);
    });
    it('reports every problem at once', () => {
      const p = problems('upstreams:\n  a:\n    command: x\n    argz: []\nconfirm:\n  timeout_seconds: 0\n  webb: {}\n');
      assert.deepEqual(
        p.map((x) => [x.path, x.line]),
        [
          ['upstreams.a.argz', 4],
          ['confirm.timeout_seconds', 6],
          ['confirm.webb', 7],
        ],
      );
    });
    it('gives the line of a YAML syntax error', () => {
      const [p] = problems('upstreams:\n  a:\n    command: [x\nrules: 1\n');
      assert.match(p!.message, /YAML syntax/);
      assert.ok(p!.line !== undefined && p!.line >= 3);
    });
    it('rejects an upstream name with capitals', () => {
      const [p] = problems('upstreams:\n  Files:\n    command: x\n');
      assert.match(p!.message, /lowercase/);
    });
    it('rejects upstream names whose prefixed tool names could collide', () => {
      for (const name of ['a_', '_a', 'a__b', 'a-', 'a--b']) {
        const [p] = problems(`upstreams:\n  ${name}:\n    command: x\n`);
        assert.match(p!.message, /cannot collide/, name);
      }
      assert.equal(parseConfig('upstreams:\n  my-files_2:\n    command: x\n', '/x.yaml').upstreams[0]?.name, 'my-files_2');
    });
    it('rejects an upstream with both command and url', () => {
      const [p] = problems('upstreams:\n  a:\n    command: x\n    url: http://h/\n');
      assert.equal(p!.path, 'upstreams.a');
      assert.match(p!.message, /not both/);
    });
    it('never shows a wrong value under env or headers, or of a key named like a credential, unless it is too short to be one', () => {
      const p = problems(
        'upstreams:\n  files:\n    command: npx\n    env:\n      API_KEY: 123456789012345\n      PORT: 8080\n      FLAGS: [sk-live-0123456789]\n',
      );
      const text = p.map((x) => `${x.path}: ${x.message}`).join('\n');
      assert.doesNotMatch(text, /123456789012345|sk-live/);
      assert.match(text, /upstreams\.files\.env\.API_KEY: must be a string, not a number \(15 characters, not shown here: it may be a secret\)/);
      assert.match(text, /upstreams\.files\.env\.FLAGS: must be a string, not a list \(not shown here/);
      assert.match(text, /upstreams\.files\.env\.PORT: must be a string, not 8080/);
    });
    it('names each field of an upstream entry that is wrong, all at once', () => {
      const p = problems('upstreams:\n  files:\n    command: npx\n    args: "-y x"\n    env:\n      PORT: 8080\n    comand: x\n');
      assert.deepEqual(
        p.map((x) => `${x.path}: ${x.message}`),
        [
          'upstreams.files.args: must be a list of strings, not "-y x"',
          'upstreams.files.env.PORT: must be a string, not 8080',
          'upstreams.files.comand: unknown key "comand" (did you mean "command"?)',
        ],
      );
      assert.deepEqual(
        p.map((x) => x.line),
        [4, 6, 7],
      );
    });
    it('names a wrong item of args on the list', () => {
      assert.deepEqual(problems('upstreams:\n  files:\n    command: npx\n    args: ["-y", 8]\n'), [
        { path: 'upstreams.files.args', line: 4, message: 'must be a list of strings (item 2 is 8)' },
      ]);
    });
    it('checks an entry with url as an HTTP upstream', () => {
      assert.deepEqual(
        problems('upstreams:\n  web:\n    url: http://h/mcp\n    timeout_seconds: "5"\n').map((x) => `${x.path}: ${x.message}`),
        ['upstreams.web.timeout_seconds: must be a number, not "5"'],
      );
    });
    it('says an upstream needs command or url, and names a misspelt command', () => {
      assert.deepEqual(
        problems('upstreams:\n  files:\n    comand: npx\n').map((x) => `${x.path}: ${x.message}`),
        [
          'upstreams.files: an upstream needs either `command` (a program to start, stdio) or `url` (a Streamable HTTP address)',
          'upstreams.files.comand: unknown key "comand" (did you mean "command"?)',
        ],
      );
    });
    it('takes the keys it suggests from the schema itself', () => {
      for (const k of ['pocketsphinx', 'receipts', 'default_user', 'dry_run', 'taint', 'untrusted', 'execution', 'headers', 'command'])
        assert.ok(KNOWN_KEYS.has(k), k);
      assert.deepEqual(KNOWN_KEYS, schemaKeys(configSchema));
      assert.match(problems('upstreams:\n  a:\n    command: x\ntaint:\n  untrustd: []\n')[0]!.message, /did you mean "untrusted"/);
    });
    it('rejects a non-loopback web host', () => {
      const [p] = problems('upstreams:\n  a:\n    command: x\nconfirm:\n  web: { enabled: true, host: 0.0.0.0 }\n');
      assert.match(p!.message, /loopback/);
    });
    it('rejects a rule with an unknown action', () => {
      const [p] = problems('upstreams:\n  a:\n    command: x\nrules:\n  tools:\n    t: { action: maybe }\n');
      assert.equal(p!.path, 'rules.tools.t.action');
      assert.equal(p!.line, 6);
    });
    it('needs at least one upstream', () => {
      assert.ok(problems('upstreams: {}\n').length > 0);
      assert.ok(problems('rules: {}\n').some((p) => p.path === 'upstreams'));
    });
  });
  it('reads the confirmation channels, with defaults, absolute paths and milliseconds', () => {
    const c = parseConfig(
      'upstreams:\n  f:\n    command: x\nconfirm:\n  terminal: true\n  progress_seconds: 5\n  webhook:\n    url: https://hooks.example.com/x\n    secret_file: s.txt\n    ca_file: ca.pem\n',
      '/etc/lf/lookfirst.yaml',
    );
    assert.equal(c.confirm.terminal, true);
    assert.equal(c.confirm.progressMs, 5000);
    assert.deepEqual(c.confirm.webhook, {
      url: 'https://hooks.example.com/x',
      secretFile: '/etc/lf/s.txt',
      caFile: '/etc/lf/ca.pem',
      listenHost: '127.0.0.1',
      listenPort: 8472,
      publicUrl: undefined,
      timeoutMs: 10_000,
    });
    assert.equal(parseConfig('upstreams:\n  f:\n    command: x\n', '/x.yaml').confirm.webhook, undefined);
  });

  it('explains channel mistakes in config terms', () => {
    const messages = (yaml: string) => problems(`upstreams:\n  f:\n    command: x\n${yaml}`).map((p) => `${p.path}: ${p.message}`);
    assert.match(messages('confirm:\n  web: true\n')[0]!, /confirm\.web: must be a mapping, not true \(write web: \{ enabled: true \}\)/);
    assert.match(messages('confirm:\n  web: { enabled: true, host: 0.0.0.0 }\n')[0]!, /confirm\.web\.host: .*unless an authenticating reverse proxy/);
    assert.match(
      messages('confirm:\n  webhook: { url: "http://hooks.example.com/x", secret_file: s, allow_insecure_loopback: true }\n')[0]!,
      /hooks\.example\.com is not a loopback address/,
    );
    assert.match(messages('confirm:\n  webhook: { url: "http://127.0.0.1:9/x", secret_file: s }\n')[0]!, /set allow_insecure_loopback: true/);
    assert.match(messages('confirm:\n  webhook: { url: "https://h.example", secret_fil: s }\n').join(' '), /did you mean "secret_file"/);
    assert.match(
      problems('upstreams:\n  c:\n    url: http://127.0.0.1:1/mcp\n    headers: { Authorization: "Bearer \u2026" }\n')[0]!.message,
      /printable ASCII/,
    );
  });
});
