/**
 * The JSON Schema of lookfirst.yaml, derived from the zod schema (schema.ts) so that editors can complete
 * and check the file (yaml-language-server, VS Code's YAML extension). `scripts/gen-schema.mjs` writes it
 * to schema/lookfirst.schema.json at build time; a test keeps the committed file equal to this output.
 *
 * Posture: the schema is a helper for editors, never the gate's check. It may accept more than the loader
 * (cross-field rules such as "http.host off loopback needs token_file", regular expressions compiled by
 * the loader, URL parsing), but it must never reject a file the loader accepts, or an editor would flag a
 * working config. Where zod says something JSON Schema cannot, the JSON side is loosened, not guessed.
 */
import { z } from 'zod';
import { configSchema, UPSTREAM_NAME, upstreamSchema } from './schema.js';

/** A JSON Schema document (draft-07), as plain JSON data. */
export type JsonSchema = Record<string, unknown>;

/** The `$schema` dialect: draft-07 is the one every YAML and JSON editor validates in full. */
const DIALECT = 'http://json-schema.org/draft-07/schema#';

/**
 * What `z.url({ protocol: /^https?$/ })` accepts, as a pattern. zod trims the text and hands it to WHATWG
 * `new URL()`, which lower-cases the scheme and also takes `http:host`; JSON Schema's `format: uri` (RFC
 * 3986) is stricter than that (spaces in a path, say), so it would reject addresses the loader takes.
 */
const HTTP_URL_PATTERN = '^\\s*[Hh][Tt][Tt][Pp][Ss]?:';

/**
 * Builds the JSON Schema of lookfirst.yaml from the zod schema, as the file's author writes it (`io:
 * 'input'`: keys with a default are optional).
 * @returns a draft-07 schema with `title` and `description` where the zod schema has `.describe()`.
 * @throws Error from zod when a part of the schema has no JSON Schema form (a new transform, say): the
 *   generator fails rather than emitting a schema that accepts anything there.
 */
export function createConfigJsonSchema(): JsonSchema {
  const upstreams = configSchema.shape.upstreams;
  const privacy = configSchema.shape.privacy;
  const schema = z.toJSONSchema(configSchema, {
    target: 'draft-07',
    io: 'input',
    override: (ctx) => {
      const js = ctx.jsonSchema as JsonSchema;
      if (ctx.zodSchema === upstreamSchema) {
        // The pipe's input is `unknown` (its check picks stdio or HTTP by the keys present); its output
        // union is what a valid upstream is. Both kinds are strict, so `command` with `url` fits neither.
        replace(js, convert(upstreamSchema._zod.def.out));
      } else if (ctx.zodSchema === upstreams) {
        js.minProperties = 1; // the record's check: at least one upstream
        // The names are checked beside the record (so a wrong name hides nothing inside its entry); the
        // editor gets the same rule as a pattern.
        js.propertyNames = { type: 'string', pattern: UPSTREAM_NAME.source };
      } else if (ctx.zodSchema === privacy) {
        // The preprocess turns a bare `privacy:` (null) into `{}`; zod describes only what follows it.
        const { description, ...inner } = js;
        replace(js, { ...(description === undefined ? {} : { description }), anyOf: [{ type: 'null' }, inner] });
      }
      loosenUrl(ctx.zodSchema, js);
    },
  }) as JsonSchema;
  const { $schema: _dialect, ...rest } = schema;
  return {
    $schema: DIALECT,
    title: 'lookfirst.yaml',
    description:
      'Configuration of lookfirst, a gate between MCP clients and MCP servers. Generated from src/config/schema.ts; the gate itself checks more (cross-field rules), and reports every problem with its line.',
    ...rest,
  };
}

/**
 * The schema as the committed file holds it: two-space JSON and a final newline.
 * @returns the exact text of schema/lookfirst.schema.json.
 */
export function renderConfigJsonSchema(): string {
  return `${JSON.stringify(createConfigJsonSchema(), null, 2)}\n`;
}

/** One part of the schema on its own, through the same override (URLs), without a dialect line. */
function convert(part: z.core.$ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(part, {
    target: 'draft-07',
    io: 'input',
    override: (ctx) => loosenUrl(ctx.zodSchema, ctx.jsonSchema as JsonSchema),
  }) as JsonSchema;
  return rest;
}

/**
 * `format: uri` → a pattern for the scheme: an http(s) URL gets HTTP_URL_PATTERN, any other URL no check
 * at all (the loader's own is WHATWG parsing, which no JSON Schema keyword states).
 */
function loosenUrl(part: z.core.$ZodType, js: JsonSchema): void {
  if (js.format !== 'uri') return;
  delete js.format;
  const protocol = (part._zod.def as { protocol?: unknown }).protocol;
  if (protocol instanceof RegExp && protocol.source === '^https?$') js.pattern = HTTP_URL_PATTERN;
}

/** Replaces an object's keys in place: zod's override hands over the node to edit, not to return. */
function replace(target: JsonSchema, next: JsonSchema): void {
  for (const key of Object.keys(target)) delete target[key];
  Object.assign(target, next);
}
