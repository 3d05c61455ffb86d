import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../config/load.js';
import {
  checkChannels,
  checkConfig,
  checkKey,
  checkLog,
  checkPrivacy,
  checkRules,
  checkStore,
  checkToken,
  checkUpstreams,
  runChecks,
  summarise,
} from './checks.js';
import type { UpstreamFact } from './facts.js';
import { healthy } from './test-facts.js';

const levels = (r: { level: string }[]) => r.map((x) => x.level);

describe('lookfirst check, its pure checks', () => {
  it('says OK for every check of a healthy gate with elicitation off and the page on', () => {
    const results = runChecks(healthy('confirm:\n  elicitation: false\n  web: { enabled: true }\n'));
    assert.deepEqual(
      results.filter((r) => r.level !== 'OK'),
      [],
    );
    assert.equal(summarise(results).exitCode, 0);
  });

  it('reports the config warnings as WARN lines', () => {
    const f = healthy();
    f.config.warnings = ['confirm.web.port (line 3) takes no effect: web is off'];
    assert.deepEqual(levels(checkConfig(f.config)), ['OK', 'WARN']);
  });

  describe('when the audit key is missing', () => {
    it('is an ERROR that names keygen with the config', () => {
      const [r] = checkKey(healthy('', { key: { path: '/cfg/audit.key', exists: false }, keyValid: undefined }));
      assert.equal(r?.level, 'ERROR');
      assert.match(r?.message ?? '', /lookfirst keygen --config \/cfg\/lookfirst\.yaml/);
    });
  });

  it('warns, with chmod 600, when the key is readable by its group or others', () => {
    const [r] = checkKey(healthy('', { key: { path: '/cfg/audit.key', exists: true, mode: 0o640 } }));
    assert.equal(r?.level, 'WARN');
    assert.match(r?.message ?? '', /its group .*chmod 600 \/cfg\/audit\.key/);
  });

  it('is an ERROR when the key is not a usable Ed25519 key', () => {
    assert.deepEqual(levels(checkKey(healthy('', { keyValid: false, keyError: 'not a PEM private key' }))), ['ERROR']);
  });

  it('says OK for a log that does not exist yet, ERROR for a tampered one, WARN for no verdict', () => {
    const base = healthy();
    assert.equal(checkLog({ ...base, log: { ...base.log, state: 'absent' } })[0]?.level, 'OK');
    const tampered = checkLog({ ...base, log: { ...base.log, verdict: 'tampered', problems: ['line 2: hash chain broken'] } })[0];
    assert.equal(tampered?.level, 'ERROR');
    assert.match(tampered?.message ?? '', /line 2: hash chain broken.*verify-log --config/);
    assert.equal(checkLog({ ...base, log: { ...base.log, verdict: 'unproven', warnings: ['no head sidecar'] } })[0]?.level, 'WARN');
  });

  describe('the token file', () => {
    const token = { path: '/cfg/http.token', exists: true, mode: 0o600, lineLengths: [64, 64], repeated: 0, minChars: 32 };
    it('counts the tokens and never shows them', () => {
      const [r] = checkToken({ token });
      assert.equal(r?.level, 'OK');
      assert.match(r?.message ?? '', /2 tokens/);
    });
    it('names a short token by its number, a repeated one, and an open mode', () => {
      const r = checkToken({ token: { ...token, mode: 0o644, lineLengths: [64, 5], repeated: 1 } });
      assert.deepEqual(levels(r), ['ERROR', 'ERROR', 'WARN']);
      assert.match(r[0]?.message ?? '', /token 2 holds 5 characters/);
    });
    it('is an ERROR when the file named does not exist', () => {
      assert.deepEqual(levels(checkToken({ token: { path: '/cfg/t', exists: false, minChars: 32 } })), ['ERROR']);
    });
  });

  describe('the channels', () => {
    it('warns about self-approval while elicitation is on in wait mode', () => {
      const r = checkChannels(healthy());
      assert.deepEqual(
        r.map((x) => [x.id, x.level]),
        [['confirm.elicitation', 'WARN']],
      );
    });
    it('is an ERROR when no channel is on at all', () => {
      assert.deepEqual(levels(checkChannels(healthy('confirm:\n  elicitation: false\n'))), ['ERROR']);
    });
    it('is an ERROR in pending mode with no channel outside the client', () => {
      const r = checkChannels(healthy('confirm:\n  mode: pending\n'));
      assert.equal(r[0]?.level, 'ERROR');
      assert.match(r[0]?.message ?? '', /pending/);
    });
    it('warns when the terminal channel has no terminal here', () => {
      const r = checkChannels(healthy('confirm:\n  elicitation: false\n  terminal: true\n', { tty: false }));
      assert.deepEqual(
        r.map((x) => [x.id, x.level]),
        [['confirm.terminal', 'WARN']],
      );
    });
    it('checks the webhook secret without showing it', () => {
      const yaml = 'confirm:\n  elicitation: false\n  webhook: { url: "https://hooks.example.com/x", secret_file: hook.secret }\n';
      const r = checkChannels(healthy(yaml, { webhookSecret: { path: '/cfg/hook.secret', exists: true, mode: 0o600, chars: 10, minChars: 32 } }));
      assert.deepEqual(levels(r), ['ERROR']);
      assert.match(r[0]?.message ?? '', /10 characters; at least 32/);
    });
    it("names where previews go without the webhook URL's token, password or query values", () => {
      const url = 'https://user:pw@hooks.example.com/services/T0000000/B0000000/XXXXXXXXXXXXXXXXXXXXXXXX?sig=abc';
      const yaml = `confirm:\n  elicitation: false\n  webhook: { url: "${url}", secret_file: hook.secret }\n`;
      const r = checkChannels(healthy(yaml, { webhookSecret: { path: '/cfg/hook.secret', exists: true, mode: 0o600, chars: 40, minChars: 32 } }));
      const line = r.find((x) => x.id === 'confirm.webhook');
      assert.equal(line?.level, 'OK');
      assert.match(line?.message ?? '', /previews go to https:\/\/user:\*\*\*@hooks\.example\.com\/services\/T0000000\/B0000000\/\*\*\*\?sig=\*\*\*;/);
      assert.doesNotMatch(line?.message ?? '', /XXXX|pw@|abc/);
    });
    it('says a port of 0 is a free one the system picks, not port 0', () => {
      const r = checkChannels(healthy('confirm:\n  elicitation: false\n  web: { enabled: true, port: 0 }\n'));
      assert.match(r.find((x) => x.id === 'confirm.web')?.message ?? '', /listen on 127\.0\.0\.1, on a free port the system picks/);
    });
    it('warns when something already listens on a port the gate would open', () => {
      const r = checkChannels(
        healthy('confirm:\n  elicitation: false\n  web: { enabled: true }\n', {
          ports: [{ key: 'confirm.web.port', host: '127.0.0.1', port: 8471, inUse: true }],
        }),
      );
      assert.deepEqual(
        r.map((x) => [x.id, x.level]),
        [
          ['confirm.web.port', 'WARN'],
          ['confirm.web', 'OK'],
        ],
      );
    });
    it("warns when the transcription API key file is open to others, as the gate's start does", () => {
      const yaml =
        'confirm:\n  elicitation: false\n  device:\n    enabled: true\n    voice: { url: "http://127.0.0.1:8080/v1/audio/transcriptions", api_key_file: stt.key }\n';
      const r = checkChannels(healthy(yaml, { voiceKey: { path: '/cfg/stt.key', exists: true, mode: 0o604 } }));
      assert.deepEqual(
        r.map((x) => [x.id, x.level]),
        [
          ['confirm.device.voice.api_key_file', 'WARN'],
          ['confirm.device', 'OK'],
        ],
      );
    });
    it('is an ERROR for paired devices on a memory store', () => {
      const r = checkChannels(healthy('confirm:\n  elicitation: false\n  device: { enabled: true }\n', { store: { kind: 'memory', reachable: true } }));
      assert.deepEqual(levels(r), ['ERROR']);
    });
  });

  it('judges the store: memory WARN, unreachable postgres ERROR naming where, reachable OK', () => {
    assert.equal(checkStore({ store: { kind: 'memory', reachable: true } })[0]?.level, 'WARN');
    const pg = checkStore({ store: { kind: 'postgres', where: 'db:5432/lf', reachable: false, error: 'ECONNREFUSED' } })[0];
    assert.equal(pg?.level, 'ERROR');
    assert.match(pg?.message ?? '', /db:5432\/lf.*ECONNREFUSED/);
    assert.equal(checkStore({ store: { kind: 'sqlite', where: '/x.db', reachable: true } })[0]?.level, 'OK');
  });

  it('is an ERROR for a redaction hook that does not load, OK for one that does', () => {
    const f = healthy();
    assert.equal(checkPrivacy({ ...f, redact: { module: '/cfg/r.js', exportName: 'redact', ok: false, error: 'ENOENT' } })[1]?.level, 'ERROR');
    assert.equal(checkPrivacy({ ...f, redact: { module: '/cfg/r.js', exportName: 'redact', ok: true } })[1]?.level, 'OK');
  });

  it('warns when an external upstream has the privacy filter off', () => {
    const r = checkPrivacy({ config: parseConfig('upstreams:\n  crm:\n    command: x\n    external: true\n', '/c.yaml') });
    assert.equal(r[0]?.level, 'WARN');
  });

  it('is an ERROR per upstream that could not be listed, with its reason', () => {
    const down: UpstreamFact = { name: 'files', kind: 'stdio', ok: false, tools: [], error: 'spawn nope ENOENT', elapsedMs: 3 };
    const [r] = checkUpstreams({ ...healthy(), upstreams: [down] });
    assert.equal(r?.level, 'ERROR');
    assert.match(r?.message ?? '', /spawn nope ENOENT/);
  });

  describe('rules against the listed tools', () => {
    it('names each rule that matches no tool, with its line', () => {
      const f = healthy('rules:\n  tools:\n    write_file: { action: confirm }\n    "delet*": { action: deny }\n');
      const r = checkRules(f);
      assert.deepEqual(levels(r), ['WARN']);
      assert.match(r[0]?.message ?? '', /rule "delet\*" \(line 7\) matches no tool/);
    });
    it('says a rule may match on an upstream that could not be listed', () => {
      const f = healthy('rules:\n  tools:\n    nothing: { action: deny }\n');
      const r = checkRules({ ...f, upstreams: [{ name: 'files', kind: 'stdio', ok: false, tools: [], elapsedMs: 1 }] });
      assert.match(r[0]?.message ?? '', /could not be listed: it may match a tool there/);
    });
    it('matches prefixed names with several upstreams', () => {
      const config = parseConfig('upstreams:\n  a: { command: x }\n  b: { command: y }\nrules:\n  tools:\n    "a__write_*": { action: confirm }\n', '/c.yaml');
      const tools = [{ name: 'write_file' }];
      const r = checkRules({
        config,
        upstreams: [
          { name: 'a', kind: 'stdio', ok: true, tools, elapsedMs: 1 },
          { name: 'b', kind: 'stdio', ok: true, tools, elapsedMs: 1 },
        ],
      });
      assert.deepEqual(levels(r), ['OK']);
    });
  });

  it('exits 2 with any ERROR, 0 with warnings only', () => {
    assert.equal(summarise([{ id: 'a', level: 'WARN', message: '' }]).exitCode, 0);
    assert.equal(summarise([{ id: 'a', level: 'ERROR', message: '' }]).exitCode, 2);
  });
});
