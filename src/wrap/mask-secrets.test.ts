import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createTwoFilesPatch } from 'diff';
import { maskCodex } from './codex.js';
import { maskGateConfig } from './gate-config.js';
import { maskJson } from './json.js';
import { isSecretName, maskJsonSecrets } from './mask-secrets.js';

describe('when a secret sits beside the servers, where a dry-run diff shows it as context', () => {
  it("masks Claude Code's own keys in ~/.claude.json, whatever their value's shape, and keeps the rest", () => {
    const text =
      '{\n  "numStartups": 3,\n  "primaryApiKey": "sk-ant-SECRET",\n  "mcpServers": {\n    "db": { "command": "pg" }\n  },\n  "customApiKeyResponses": { "approved": ["sk-ant-TAIL"] },\n  "feed": "https://u:FEEDPW@h.example/x"\n}\n';
    const masked = maskJson('claude-code', text, 'f');
    assert.ok(!/SECRET|TAIL|FEEDPW/.test(masked), masked);
    assert.match(masked, /"primaryApiKey": "\*\*\*"/);
    assert.match(masked, /"approved": \["\*\*\*"\]/);
    assert.match(masked, /"numStartups": 3,\n/);
    assert.match(masked, /"db": \{ "command": "pg" \}/);
    const diff = createTwoFilesPatch('f', 'f', masked, masked.replace('"pg"', '"gate"'));
    assert.ok(!/SECRET|TAIL|FEEDPW/.test(diff));
  });

  it('masks them in config.toml and in lookfirst.yaml too, comments kept', () => {
    const toml =
      'model = "o3"\n# mine\n[model_providers.x]\nexperimental_bearer_token = "TOMLSECRET"\nbase_url = "https://u:TOMLPW@h.example/v1"\n\n[mcp_servers.db]\ncommand = "pg"\n';
    const t = maskCodex(toml, 'f');
    assert.ok(!/TOMLSECRET|TOMLPW/.test(t), t);
    assert.match(t, /# mine\n/);
    const yaml =
      'upstreams:\n  db:\n    command: pg # the db\nconfirm:\n  webhook:\n    url: https://hooks.example/services/T0/B0/XXXXXXXXXXXXXXXXXXXXXXXX\n    secret: YAMLSECRET\n';
    const y = maskGateConfig(yaml, 'f');
    assert.ok(!/YAMLSECRET|XXXXXXXX/.test(y), y);
    assert.match(y, /command: pg # the db\n/);
    assert.match(y, /url: https:\/\/hooks\.example\/services\/T0\/B0\/\*\*\*\n/);
  });

  it('takes a key for a credential by its name, and leaves text with nothing to mask as it was', () => {
    for (const n of ['primaryApiKey', 'api_key', 'client_secret', 'Authorization', 'GITHUB_TOKEN', 'password', 'oauthAccount']) assert.ok(isSecretName(n), n);
    for (const n of ['command', 'args', 'numStartups', 'theme', 'type', 'bearer_token_env_var', 'env_key']) assert.ok(!isSecretName(n), n);
    const plain = '// c\n{ "a": [1, "x"], /* k */ "b": { "c": "d" }, }';
    assert.equal(maskJsonSecrets(plain), plain);
  });
});
