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

function build(schema: unknown, notice: string, depth: number): unknown {
  if (!isPlainObject(schema) || depth > MAX_DEPTH) return notice;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('default' in schema) return schema.default;
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type ?? (isPlainObject(schema.properties) ? 'object' : 'string')) {
    case 'object': {
      const props = isPlainObject(schema.properties) ? schema.properties : {};
      const out: Record<string, unknown> = {};
      for (const key of Array.isArray(schema.required) ? schema.required : []) if (typeof key === 'string') out[key] = build(props[key], notice, depth + 1);
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

/**
 * The smallest value an output schema admits, with `notice` in its strings.
 * @param schema the tool's `outputSchema` (JSON Schema, as the upstream declared it).
 * @returns the value, or undefined when it does not pass the schema (or the schema does not compile).
 */
export function placeholderFor(schema: unknown, notice: string): Record<string, unknown> | undefined {
  const value = build(schema, notice, 0);
  if (!isPlainObject(value)) return undefined;
  try {
    return validator.getValidator(schema as never)(value).valid ? value : undefined;
  } catch {
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
