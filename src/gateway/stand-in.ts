/**
 * A stand-in `structuredContent` for an answer that reports success although nothing ran (a dry run's
 * recorded call, an unlocked tool), for a tool that declares an `outputSchema`: a client validates a
 * successful result's structuredContent against that schema (spec 2025-11-25 §tools, output schema), so
 * such an answer must carry a value that passes. The value is the smallest one the schema admits:
 * required properties only, every string holding a fixed notice, numbers at their minimum or 0, booleans
 * false, arrays empty. It never claims anything: a schema that requires a `const` or `enum` value (a
 * status, `executed: true`) gets no stand-in, and a `default` is not used. It is checked with the SDK's
 * own validator (the one its client uses). A schema with a `pattern`, `patternProperties` or `format`
 * gets none either: checking a regular expression from an upstream could take the gate's event loop for
 * hours (ReDoS). Without a stand-in, the answer is an error result.
 */
import type { Result } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { Verdict } from '../types.js';
import type { CatalogueTool } from './catalogue.js';
import { isPlainObject } from './raw.js';
import { withVerdict } from './verdict.js';

const validator = new AjvJsonSchemaValidator();
/** Deepest schema nesting followed (deeper parts are left out, and validation decides). */
const MAX_DEPTH = 16;
/** Most values built for one stand-in: a hostile schema (a property required many times over, nested) gets none. */
const MAX_NODES = 1000;
/** Largest output schema given a stand-in (bytes of JSON); compiling is the upstream's cost to the gate. */
const MAX_SCHEMA_BYTES = 64 * 1024;
/** Compiled checks by schema object: a catalogue keeps a tool's definition until it is re-read. */
const checks = new WeakMap<object, (value: unknown) => boolean>();

/** Schema keywords whose check runs an upstream's regular expression. */
const REGEX_KEYWORDS = new Set(['pattern', 'patternProperties', 'format']);

class NoStandIn extends Error {}

/** Whether a schema (bounded JSON) uses a keyword anywhere. */
function usesKeyword(node: unknown, keywords: ReadonlySet<string>): boolean {
  if (Array.isArray(node)) return node.some((n) => usesKeyword(n, keywords));
  if (!isPlainObject(node)) return false;
  return Object.entries(node).some(([k, v]) => keywords.has(k) || usesKeyword(v, keywords));
}

function build(schema: unknown, notice: string, depth: number, budget: { nodes: number }): unknown {
  if (--budget.nodes < 0) throw new NoStandIn();
  if (!isPlainObject(schema) || depth > MAX_DEPTH) return notice;
  // A required fixed value would be a claim (`status: "sent"`), not a stand-in.
  if ('const' in schema || 'enum' in schema) throw new NoStandIn();
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type ?? (isPlainObject(schema.properties) ? 'object' : 'string')) {
    case 'object': {
      const props = isPlainObject(schema.properties) ? schema.properties : {};
      const out: Record<string, unknown> = {};
      for (const key of new Set(Array.isArray(schema.required) ? schema.required : []))
        if (typeof key === 'string' && !Object.hasOwn(out, key))
          out[key] = build(Object.hasOwn(props, key) ? props[key] : undefined, notice, depth + 1, budget);
      return out;
    }
    case 'number':
    case 'integer':
      return typeof schema.minimum === 'number' ? schema.minimum : 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    case 'null':
      return null;
    default:
      return notice;
  }
}

function checkFor(schema: object): (value: unknown) => boolean {
  let check = checks.get(schema);
  if (!check) {
    const validate = validator.getValidator(schema as never);
    check = (value) => validate(value).valid;
    checks.set(schema, check);
  }
  return check;
}

/**
 * The smallest value an output schema admits, with `notice` in its strings.
 * @param schema the tool's `outputSchema` (JSON Schema, as the upstream declared it).
 * @param notice the text every string holds: fixed words, never the call's arguments (an agent must not
 *   steer what the validator chews on).
 * @returns the value, or undefined when it does not pass the schema, the schema does not compile, needs a
 *   fixed value or a regular expression, or is too large (over 64 KB of JSON, a value of over 1,000 parts).
 */
export function placeholderFor(schema: unknown, notice: string): Record<string, unknown> | undefined {
  if (!isPlainObject(schema)) return undefined;
  try {
    if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES || usesKeyword(schema, REGEX_KEYWORDS)) return undefined;
    const value = build(schema, notice, 0, { nodes: MAX_NODES });
    return isPlainObject(value) && checkFor(schema)(value) ? value : undefined;
  } catch {
    // Too large to build, a claim it would have to make, or a schema that does not compile: no stand-in.
    return undefined;
  }
}

/**
 * A success result for a call that did not run (its text and verdict say so), valid for the tool: with
 * the smallest structuredContent its output schema admits, or, when none passes, an error result with
 * the same text (a client does not check an error result against the schema).
 */
export function notExecutedResult(tool: Pick<CatalogueTool, 'hasOutputSchema' | 'definition'>, text: string, verdict: Verdict): Result {
  const content = [{ type: 'text', text }];
  if (!tool.hasOutputSchema) return withVerdict({ content }, verdict, false);
  const notice = `lookfirst: NOT executed (${verdict.outcome === 'dry_run' ? 'dry run' : verdict.outcome}, call ${verdict.call_id}); see the text content`;
  const stand = placeholderFor(tool.definition.outputSchema, notice);
  if (stand) return withVerdict({ content, structuredContent: stand }, verdict, true);
  const why = ' (Marked as an error only because this tool declares an output schema that no stand-in result could match.)';
  return withVerdict({ content: [{ type: 'text', text: text + why }], isError: true }, verdict, true);
}
