/**
 * What the privacy filter does to MCP messages besides masking text: content it cannot read (images,
 * audio, blobs) is withheld with a note, and the few protocol strings that must stay as they are
 * (a tool's name, cursors, progress tokens, request ids, MIME types) are left alone. Pure.
 * @see MCP specification 2025-11-25, §tools (content types), §resources (text and blob contents)
 */

/** Keys whose string values are protocol identifiers, never shown as prose: never masked. */
const PROTOCOL_KEYS = new Set(['progressToken', 'requestId', 'nextCursor', 'cursor', 'protocolVersion', 'mimeType', 'jsonrpc']);

/**
 * Which strings of a message stay unmasked: protocol identifiers anywhere, and each tool's `name` in a
 * `tools/list` result (the client calls tools by it; everything else of a definition is masked).
 * @param method the request the message answers (or the notification's method).
 */
export function unmaskedPaths(method: string): (path: readonly (string | number)[]) => boolean {
  const toolNames = method === 'tools/list';
  return (path) => {
    const last = path[path.length - 1];
    if (typeof last === 'string' && PROTOCOL_KEYS.has(last)) return true;
    return toolNames && path.length === 3 && path[0] === 'tools' && path[2] === 'name';
  };
}

/** The note that replaces what was withheld. */
function note(what: string, mimeType: unknown): string {
  const type = typeof mimeType === 'string' && /^[\w.+-]+\/[\w.+-]+$/.test(mimeType) ? ` (${mimeType})` : '';
  return `[lookfirst: ${what}${type} was withheld by the privacy filter: it cannot be checked for private data. Set privacy.allow_binary: true to let such content through.]`;
}

/**
 * Replaces every image and audio content item by a text item saying so, and every blob (resource
 * contents, embedded resources) by a text contents with the same URI saying so.
 * @returns the same instance when there was nothing to withhold (no copy), else a copy; never mutates.
 */
export function withholdBinary(value: unknown): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = withholdBinary(value[i]);
      if (v === value[i]) continue;
      out ??= value.slice();
      out[i] = v;
    }
    return out ?? value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const o = value as Record<string, unknown>;
  if ((o.type === 'image' || o.type === 'audio') && typeof o.data === 'string') return { type: 'text', text: note(`an ${o.type}`, o.mimeType) };
  if (typeof o.blob === 'string') {
    const kept: Record<string, unknown> = { mimeType: 'text/plain', text: note('binary content', o.mimeType) };
    if (typeof o.uri === 'string') kept.uri = o.uri;
    return kept;
  }
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(o)) {
    const v = withholdBinary(o[k]);
    if (v === o[k]) continue;
    out ??= { ...o };
    out[k] = v;
  }
  return out ?? value;
}

/** String constraints a placeholder cannot meet: dropped from the schemas a client reads. */
const STRING_CONSTRAINTS = ['pattern', 'format', 'minLength', 'maxLength'] as const;

/**
 * A `tools/list` result whose input and output schemas no longer constrain strings by shape or length:
 * a client that validates `structuredContent` against the output schema (the SDK client does) would
 * otherwise reject a result whose IBAN field now holds `[[IBAN_…]]`. The upstream still validates the
 * real values it receives. Enum and const values are masked like any string, in the same session's
 * placeholders, so they still match.
 * @returns the same instance when no schema had such a constraint.
 */
export function relaxToolSchemas(result: unknown): unknown {
  if (typeof result !== 'object' || result === null) return result;
  const tools = (result as { tools?: unknown }).tools;
  if (!Array.isArray(tools)) return result;
  let out: unknown[] | undefined;
  for (let i = 0; i < tools.length; i++) {
    const t = tools[i] as Record<string, unknown> | null;
    if (typeof t !== 'object' || t === null) continue;
    const input = relaxSchema(t.inputSchema);
    const output = relaxSchema(t.outputSchema);
    if (input === t.inputSchema && output === t.outputSchema) continue;
    out ??= tools.slice();
    out[i] = { ...t, ...(t.inputSchema !== undefined ? { inputSchema: input } : {}), ...(t.outputSchema !== undefined ? { outputSchema: output } : {}) };
  }
  return out ? { ...(result as object), tools: out } : result;
}

function relaxSchema(schema: unknown, depth = 0): unknown {
  if (depth > 64 || typeof schema !== 'object' || schema === null) return schema;
  if (Array.isArray(schema)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < schema.length; i++) {
      const v = relaxSchema(schema[i], depth + 1);
      if (v === schema[i]) continue;
      out ??= schema.slice();
      out[i] = v;
    }
    return out ?? schema;
  }
  const o = schema as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(o)) {
    // Constraint keywords hold a value; a property NAMED "pattern" (under `properties`) holds a schema.
    if ((STRING_CONSTRAINTS as readonly string[]).includes(k) && typeof o[k] !== 'object') {
      out ??= { ...o };
      delete out[k];
      continue;
    }
    const v = relaxSchema(o[k], depth + 1);
    if (v === o[k]) continue;
    out ??= { ...o };
    out[k] = v;
  }
  return out ?? schema;
}

/**
 * Where a message holds JSON Schemas, whose keys name properties rather than hold values: a tool list's
 * input and output schemas, an elicitation's requested schema.
 * @returns a test of a path: true at a schema's root.
 */
export function schemaRoots(method: string): (path: readonly (string | number)[]) => boolean {
  if (method === 'tools/list') return (p) => p.length === 3 && p[0] === 'tools' && (p[2] === 'inputSchema' || p[2] === 'outputSchema');
  if (method === 'elicitation/create') return (p) => p.length === 1 && p[0] === 'requestedSchema';
  return () => false;
}

/** The value at a path of JSON-like data, or undefined. */
export function getIn(value: unknown, path: readonly (string | number)[]): unknown {
  let v = value;
  for (const k of path) v = typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>)[k] : undefined;
  return v;
}

/** A copy of JSON-like data with the value at `path` replaced, copying only along the path (never mutates). */
export function setIn(value: unknown, path: readonly (string | number)[], next: unknown): unknown {
  if (path.length === 0) return next;
  const [k, ...rest] = path as [string | number, ...(string | number)[]];
  if (Array.isArray(value)) {
    const copy = value.slice();
    copy[k as number] = setIn(value[k as number], rest, next);
    return copy;
  }
  const o = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const copy: Record<string, unknown> = { ...o };
  Object.defineProperty(copy, String(k), { value: setIn(o[String(k)], rest, next), enumerable: true, writable: true, configurable: true });
  return copy;
}
