/**
 * The JSON Schema of lookfirst.yaml against the loader it describes: the committed file is what the
 * generator gives now, and a real validator (ajv, draft-07) agrees with the loader on every config here
 * and in the README, except where the schema is knowingly looser (cross-field rules, listed below).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { parse, stringify } from 'yaml';
import { createConfigJsonSchema, renderConfigJsonSchema } from './json-schema.js';
import { parseConfig } from './load.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ajv = new Ajv({ allErrors: true, strict: true });
const validate = ajv.compile(createConfigJsonSchema());

/** Whether the loader accepts the text (parseConfig throws ConfigError on any problem). */
function loaderAccepts(text: string): boolean {
  try {
    parseConfig(text, join(ROOT, 'lookfirst.yaml'));
    return true;
  } catch {
    return false;
  }
}

const schemaAccepts = (text: string): boolean => validate(parse(text) ?? {});

/** The ```yaml blocks of a Markdown file; a block without `upstreams` is a fragment, given one to stand in. */
function yamlBlocks(file: string): string[] {
  const md = readFileSync(join(ROOT, file), 'utf8');
  return [...md.matchAll(/^( *)```yaml\n([\s\S]*?)^\1```/gm)].map(([, indent = '', body = '']) => {
    const text = body.replace(new RegExp(`^${indent}`, 'gm'), '');
    return /^upstreams:/m.test(text) ? text : `upstreams:\n  files: { command: npx }\n${text}`;
  });
}

const minimal = 'upstreams:\n  files:\n    command: npx\n';

/** Configs the loader accepts: the schema must accept every one. */
const VALID: Record<string, string> = {
  minimal,
  'an HTTP upstream with headers': 'upstreams:\n  crm:\n    url: http://127.0.0.1:9000/mcp\n    headers: { Authorization: "Bearer x" }\n',
  'an upper-case URL scheme (WHATWG URL lower-cases it)': 'upstreams:\n  crm: { url: "HTTPS://crm.example.com/mcp" }\n',
  'a bare privacy: (null turns it on)': `${minimal}privacy:\n`,
  'privacy with patterns': `${minimal}privacy:\n  names: ["Jane Doe"]\n  patterns:\n    - { label: EMPLOYEE_ID, pattern: 'EMP-\\d{6}' }\n  phone_regions: [DE]\n`,
  'rules with read-back and risk': `${minimal}rules:\n  tools:\n    write_file:\n      action: confirm\n      risk: high\n      readback: { tool: read_file, args: { path: "$args.path" }, expect: { "content[0].text": "$args.content" } }\n`,
  'a webhook to a loopback receiver': `${minimal}confirm:\n  webhook: { url: "http://127.0.0.1:9/hook", secret_file: s, allow_insecure_loopback: true }\n`,
  'a device with voice': `${minimal}confirm:\n  device:\n    enabled: true\n    voice: { command: [rec, "{file}"], languages: [en, hi] }\n`,
  'a postgres store': `${minimal}store: { kind: postgres, url: "postgresql://gate@db/lookfirst" }\n`,
  'every section at its default': `${minimal}rules: { tools: {} }\nconfirm: {}\nhttp: {}\nexecution: {}\ntaint: {}\naudit: {}\nstore: {}\n`,
};

/** Configs the loader rejects for their shape: the schema must reject every one too. */
const INVALID: Record<string, string> = {
  'an empty file': '',
  'no upstream': 'upstreams: {}\n',
  'an unknown top-level key': `${minimal}confirmm: {}\n`,
  'a misspelt upstream key (comand)': 'upstreams:\n  files: { comand: npx }\n',
  'command and url together': 'upstreams:\n  files: { command: npx, url: "http://127.0.0.1:1/mcp" }\n',
  'a header on a stdio upstream': 'upstreams:\n  files: { command: npx, headers: { a: b } }\n',
  'a number in env': 'upstreams:\n  files: { command: npx, env: { PORT: 8080 } }\n',
  'args that is not a list': 'upstreams:\n  files: { command: npx, args: "-y" }\n',
  'an upper-case upstream name': 'upstreams:\n  Files: { command: npx }\n',
  'a doubled separator in a name': 'upstreams:\n  a__b: { command: npx }\n',
  'an unknown action': `${minimal}rules: { tools: { x: { action: maybe } } }\n`,
  'an ftp upstream': 'upstreams:\n  crm: { url: "ftp://example.com/" }\n',
  'a port out of range': `${minimal}http: { port: 70000 }\n`,
  'a zero timeout': `${minimal}confirm: { timeout_seconds: 0 }\n`,
  'an unknown key in audit': `${minimal}audit: { logs: a.jsonl }\n`,
  'a list for privacy': `${minimal}privacy: []\n`,
};

/**
 * Rejected by the loader, accepted by the schema on purpose: rules across fields or beyond JSON Schema.
 * Listed so that a change in either direction is seen.
 */
const LOOSER: Record<string, string> = {
  'web.host off loopback without identity_header': `${minimal}confirm: { web: { host: 0.0.0.0 } }\n`,
  'a postgres store without url': `${minimal}store: { kind: postgres }\n`,
  'a pattern that is not a regular expression': `${minimal}privacy: { patterns: [{ label: X, pattern: '(' }] }\n`,
  'voice with two recognisers': `${minimal}confirm: { device: { voice: { pocketsphinx: true, url: "http://127.0.0.1:1/t" } } }\n`,
};

describe('schema/lookfirst.schema.json', () => {
  it('is what the generator gives for the zod schema now (run npm run build and commit it)', () => {
    assert.equal(readFileSync(join(ROOT, 'schema/lookfirst.schema.json'), 'utf8'), renderConfigJsonSchema());
  });

  it('compiles under ajv strict mode as draft-07', () => {
    assert.equal(createConfigJsonSchema().$schema, 'http://json-schema.org/draft-07/schema#');
  });

  it('describes the top-level keys', () => {
    const props = createConfigJsonSchema().properties as Record<string, { description?: string }>;
    assert.ok(props.upstreams?.description, 'upstreams has a description');
  });
});

describe('when the loader accepts a config', () => {
  for (const [name, text] of Object.entries(VALID))
    it(`the schema accepts it too: ${name}`, () => {
      assert.equal(loaderAccepts(text), true, 'the loader accepts it (else the case is wrong)');
      assert.equal(schemaAccepts(text), true, JSON.stringify(validate.errors));
    });

  for (const file of ['README.md', 'docs/library.md'])
    it(`the schema accepts every yaml example in ${file}`, () => {
      const blocks = yamlBlocks(file);
      assert.ok(blocks.length > 0);
      for (const text of blocks) {
        assert.equal(loaderAccepts(text), true, `the loader accepts:\n${text}`);
        assert.equal(schemaAccepts(text), true, `${JSON.stringify(validate.errors)}\n${text}`);
      }
    });
});

describe('when the loader rejects a config for its shape', () => {
  for (const [name, text] of Object.entries(INVALID))
    it(`the schema rejects it too: ${name}`, () => {
      assert.equal(loaderAccepts(text), false, 'the loader rejects it (else the case is wrong)');
      assert.equal(schemaAccepts(text), false);
    });
});

describe('when only a rule across fields is broken', () => {
  for (const [name, text] of Object.entries(LOOSER))
    it(`the loader rejects it and the schema lets it through: ${name}`, () => {
      assert.equal(loaderAccepts(text), false);
      assert.equal(schemaAccepts(text), true, JSON.stringify(validate.errors));
    });

  it('a README example with one key misspelt is rejected by both', () => {
    const data = parse(yamlBlocks('README.md')[0] ?? '') as Record<string, unknown>;
    const text = stringify({ ...data, upstream: data.upstreams });
    assert.equal(loaderAccepts(text), false);
    assert.equal(schemaAccepts(text), false);
  });
});
