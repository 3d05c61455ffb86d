/**
 * Every problem of a config is reported at once, each with its field path: a problem in one field of a
 * mapping (a misspelt `command`, a wrong upstream name, a wrong port) must not hide the others in it, or
 * a user fixes them one start at a time (issue 17, "What a new user stumbled on", item 1).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError } from '../errors.js';
import { parseConfig } from './load.js';

/** The problems of a config that must be refused, as `path: message` lines in file order. */
const problems = (text: string): string[] => {
  try {
    parseConfig(text, '/etc/lf/lookfirst.yaml');
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    // Fail closed: a config with any problem is refused as invalid, never half-loaded.
    assert.equal(err.code, 'CONFIG_INVALID');
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
  assert.fail('expected a ConfigError');
};

const NEEDS_KIND = 'an upstream needs either `command` (a program to start, stdio) or `url` (a Streamable HTTP address)';
const NOT_BOTH = 'an upstream has either `command` (stdio) or `url` (Streamable HTTP), not both: keep the one this server speaks';
const UPSTREAM = 'upstreams:\n  a:\n    command: x\n';

describe('an upstream entry whose kind is unknown', () => {
  it('with a misspelt command, still names each wrong field', () => {
    assert.deepEqual(problems('upstreams:\n  files:\n    comand: npx\n    args: 5\n    env:\n      PORT: 8080\n'), [
      `upstreams.files: ${NEEDS_KIND}`,
      'upstreams.files.comand: unknown key "comand" (did you mean "command"?)',
      'upstreams.files.args: must be a list of strings, not 5',
      'upstreams.files.env.PORT: must be a string, not 8080',
    ]);
  });

  it('reports the same fields as when command is spelt right', () => {
    assert.deepEqual(problems('upstreams:\n  files:\n    command: npx\n    args: 5\n    env:\n      PORT: 8080\n'), [
      'upstreams.files.args: must be a list of strings, not 5',
      'upstreams.files.env.PORT: must be a string, not 8080',
    ]);
  });

  it('with a misspelt url, still names each wrong HTTP field', () => {
    assert.deepEqual(problems('upstreams:\n  web:\n    ulr: http://127.0.0.1:1/mcp\n    headers:\n      X-Team: 5\n    timeout_seconds: -1\n'), [
      `upstreams.web: ${NEEDS_KIND}`,
      'upstreams.web.ulr: unknown key "ulr" (did you mean "url"?)',
      'upstreams.web.headers.X-Team: must be a string, not 5',
      'upstreams.web.timeout_seconds: must be more than 0',
    ]);
  });

  it('with no command or url at all, still names each wrong field', () => {
    assert.deepEqual(problems('upstreams:\n  files:\n    args: ["-y", 8]\n    cwd: 3\n'), [
      `upstreams.files: ${NEEDS_KIND}`,
      'upstreams.files.args: must be a list of strings (item 2 is 8)',
      'upstreams.files.cwd: must be a string, not 3',
    ]);
  });

  it('with both command and url, still names each wrong field and unknown key', () => {
    assert.deepEqual(problems('upstreams:\n  w:\n    command: ""\n    url: ftp://h/\n    args: 5\n    comand: x\n'), [
      `upstreams.w: ${NOT_BOTH}`,
      'upstreams.w.command: command must not be empty',
      'upstreams.w.url: url must be an http:// or https:// address',
      'upstreams.w.args: must be a list of strings, not 5',
      'upstreams.w.comand: unknown key "comand" (did you mean "command"?)',
    ]);
  });

  it('names keys of both kinds in one entry', () => {
    assert.deepEqual(problems('upstreams:\n  w:\n    args: []\n    env: {}\n    headers: {}\n'), [
      `upstreams.w: ${NEEDS_KIND}`,
      'upstreams.w: args, env belong to a stdio upstream (command) and headers to a Streamable HTTP one (url): keep those of the kind this server speaks',
    ]);
  });

  it('still says a value that is no mapping must be one', () => {
    assert.deepEqual(problems('upstreams:\n  w: 5\n'), ['upstreams.w: must be a mapping, not 5']);
  });
});

describe('several upstream entries', () => {
  it('reports every problem of every entry together', () => {
    assert.deepEqual(
      problems('upstreams:\n  files:\n    comand: npx\n    env: { PORT: 8080 }\n  web:\n    url: http://h/mcp\n    args: [x]\n  ok:\n    command: x\n'),
      [
        `upstreams.files: ${NEEDS_KIND}`,
        'upstreams.files.comand: unknown key "comand" (did you mean "command"?)',
        'upstreams.files.env.PORT: must be a string, not 8080',
        'upstreams.web.args: unknown key "args"',
      ],
    );
  });

  it('checks the entry of a wrongly named upstream too', () => {
    assert.deepEqual(problems('upstreams:\n  Files:\n    command: npx\n    args: 5\n  a__b:\n    comand: x\n'), [
      'upstreams.Files: an upstream name holds lowercase letters and digits, with single - or _ between them (so that <upstream>__<tool> names cannot collide)',
      'upstreams.Files.args: must be a list of strings, not 5',
      `upstreams.a__b: ${NEEDS_KIND}`,
      'upstreams.a__b.comand: unknown key "comand" (did you mean "command"?)',
      'upstreams.a__b: an upstream name holds lowercase letters and digits, with single - or _ between them (so that <upstream>__<tool> names cannot collide)',
    ]);
  });

  it('still needs at least one, and still reports the rest of the file', () => {
    assert.deepEqual(problems('upstreams: {}\nstore:\n  knd: memory\n'), [
      'upstreams: at least one upstream is needed',
      'store.knd: unknown key "knd" (did you mean "kind"?)',
    ]);
  });
});

describe('a cross-field rule beside a wrong field of the same section', () => {
  it('confirm.web: an off-loopback host with a wrong port', () => {
    assert.deepEqual(problems(`${UPSTREAM}confirm:\n  web:\n    host: 0.0.0.0\n    port: x\n`), [
      'confirm.web.host: web.host must be a loopback address (127.0.0.1, localhost or ::1) unless an authenticating reverse proxy is in front: then set web.identity_header to the header it sets',
      'confirm.web.port: must be a number, not "x"',
    ]);
  });

  it('confirm.web: a host of the wrong type gets one problem, not a loopback sentence too', () => {
    assert.deepEqual(problems(`${UPSTREAM}confirm:\n  web:\n    host: 5\n`), ['confirm.web.host: must be a string, not 5']);
  });

  it('confirm.webhook: plain http off this host with a wrong listen_port', () => {
    assert.deepEqual(problems(`${UPSTREAM}confirm:\n  webhook:\n    url: http://example.com/x\n    secret_file: s\n    listen_port: x\n`), [
      'confirm.webhook.url: webhook.url must be https:// (example.com is not a loopback address; plain http is allowed only to a receiver on this host, with allow_insecure_loopback: true)',
      'confirm.webhook.listen_port: must be a number, not "x"',
    ]);
  });

  it('confirm.webhook: a url that is no address, or an ftp one, gets its own problem only', () => {
    assert.deepEqual(problems(`${UPSTREAM}confirm:\n  webhook:\n    url: 5\n    secret_file: s\n`), ['confirm.webhook.url: must be a string, not 5']);
    assert.deepEqual(problems(`${UPSTREAM}confirm:\n  webhook:\n    url: ftp://h/\n    secret_fil: s\n`), [
      'confirm.webhook.url: webhook.url must be an https:// address',
      'confirm.webhook.secret_file: is required',
      'confirm.webhook.secret_fil: unknown key "secret_fil" (did you mean "secret_file"?)',
    ]);
  });

  it('confirm.device: an off-loopback host without HTTPS with a wrong voice language', () => {
    assert.deepEqual(
      problems(
        `${UPSTREAM}confirm:\n  device:\n    enabled: true\n    host: 0.0.0.0\n    public_url: 5\n    voice:\n      pocketsphinx: true\n      languages: [de]\n`,
      ),
      [
        'confirm.device.host: device.host off loopback needs HTTPS: set device.tls (cert_file, key_file), or put a TLS proxy in front and set device.public_url to its https:// address (phones sign requests only on a secure page)',
        'confirm.device.public_url: must be a string, not 5',
        'confirm.device.voice.languages.0: must be one of "en", "hi"',
      ],
    );
  });

  it('store: a url on a memory store with a path of the wrong type', () => {
    assert.deepEqual(problems(`${UPSTREAM}store:\n  kind: memory\n  url: postgres://h/db\n  path: 5\n`), [
      'store.url: store.url is only for kind: postgres (this store is memory): remove it or set kind: postgres',
      'store.path: must be a string, not 5',
      'store.path: store.path is only for kind: sqlite (this store is memory): remove it or set kind: sqlite',
    ]);
  });

  it('store: an unknown kind is not taken for one whose keys are wrong', () => {
    assert.deepEqual(problems(`${UPSTREAM}store:\n  kind: postgress\n  url: postgres://h/db\n`), ['store.kind: must be one of "memory", "sqlite", "postgres"']);
    assert.deepEqual(problems(`${UPSTREAM}store:\n  kind: postgres\n  url: 5\n`), ['store.url: must be a string, not 5']);
  });

  it('http: an off-loopback host without a token file with a wrong port', () => {
    assert.deepEqual(problems(`${UPSTREAM}http:\n  host: 0.0.0.0\n  port: x\n`), [
      'http.host: http.host off loopback needs http.token_file: every request must then carry the bearer token',
      'http.port: must be a number, not "x"',
    ]);
  });

  it('privacy.patterns: a broken regular expression with a wrong label', () => {
    const p = problems(`${UPSTREAM}privacy:\n  patterns:\n    - { label: 5, pattern: "(" }\n    - { label: EMP, pattern: "" }\n`);
    assert.equal(p[0], 'privacy.patterns.0.label: must be a string, not 5');
    assert.match(p[1] ?? '', /^privacy\.patterns\.0\.pattern: not a valid regular expression/);
    assert.deepEqual(p.slice(2), ['privacy.patterns.1.pattern: pattern must not be empty']);
  });
});
