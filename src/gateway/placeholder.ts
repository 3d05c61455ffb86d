/**
 * A stand-in `structuredContent` for an answer that reports success although nothing ran (a dry run's
 * recorded call, an unlocked tool), for a tool that declares an `outputSchema`: a client
 * validates a successful result's structuredContent against that schema (spec 2025-11-25 §tools, output
 * schema), so a dry-run success must carry a value that passes. The value is the smallest one the schema
 * admits: required properties only, every string holding the dry-run notice, numbers at their minimum
 * or 0, booleans false, arrays empty. It is checked with the SDK's own validator (the one its client
 * uses); a schema it cannot satisfy gets no stand-in, and the answer is then an error result.
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

class TooLarge extends Error {}

function build(schema: unknown, notice: string, depth: number, budget: { nodes: number }): unknown {
  if (--budget.nodes < 0) throw new TooLarge();
  if (!isPlainObject(schema) || depth > MAX_DEPTH) return notice;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
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
 * @returns the value, or undefined when it does not pass the schema, the schema does not compile, or it is
 *   too large (over 64 KB of JSON, or a value of more than 1,000 parts).
 */
export function placeholderFor(schema: unknown, notice: string): Record<string, unknown> | undefined {
  if (!isPlainObject(schema)) return undefined;
  try {
    if (JSON.stringify(schema).length > MAX_SCHEMA_BYTES) return undefined;
    const value = build(schema, notice, 0, { nodes: MAX_NODES });
    return isPlainObject(value) && checkFor(schema)(value) ? value : undefined;
  } catch {
    // Too large to build, or a schema that does not compile: no stand-in.
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
  const stand = placeholderFor(tool.definition.outputSchema, text);
  if (stand) return withVerdict({ content, structuredContent: stand }, verdict, true);
  const why = ' (Marked as an error only because this tool declares an output schema that no stand-in result could match.)';
  return withVerdict({ content: [{ type: 'text', text: text + why }], isError: true }, verdict, true);
}
