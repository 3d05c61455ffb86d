/**
 * The author's tools as an MCP server inside the process: the gate's one upstream, reached through the
 * SDK's in-memory linked pair (a fresh server per connection, since an SDK server serves one transport).
 * Arguments declared by a zod shape are validated here before the handler runs (and by the gate before
 * the risk is judged: gateway/declared.ts); JSON Schemas are passed on unchecked.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, type CallToolResult, CallToolResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { DeclaredTool } from '../gateway/declared.js';
import type { InputSchema, JsonSchemaObject, ToolHandler } from './types.js';

/** Tool names as the MCP spec recommends them (2025-11-25 §tools: 1–128 of A-Z a-z 0-9 _ - .). */
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

interface Registered {
  definition: Record<string, unknown>;
  parse: (args: Record<string, unknown>) => { ok: true; args: Record<string, unknown> } | { ok: false; problem: string };
  handler: ToolHandler;
}

/** A zod shape: an object whose values are all zod schemas (a JSON Schema has `type: 'object'`). */
function isZodShape(s: InputSchema): s is z.ZodRawShape {
  if ((s as JsonSchemaObject).type === 'object') return false;
  return Object.values(s).every((v) => typeof v === 'object' && v !== null && '_zod' in v);
}

/** The first few problems of a zod parse, in words, without the values (they may be private). */
function problemsOf(err: z.ZodError): string {
  return err.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.join('.') : '(arguments)'}: ${i.message}`)
    .join('; ');
}

/** Longest error text from a handler's throw or a non-JSON answer that is passed on (characters). */
const MAX_ERROR_CHARS = 500;

/** An error result in words (cut to MAX_ERROR_CHARS). */
function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: text.length > MAX_ERROR_CHARS ? `${text.slice(0, MAX_ERROR_CHARS - 1)}…` : text }] };
}

/**
 * A handler's return value as an MCP tool result, made of JSON only. The in-memory pair hands objects
 * over by reference, so what the handler returns (a Date, a Map, a function, a getter that throws, a
 * Proxy) would otherwise reach the gate as it is: every answer goes through JSON once here, as it would
 * over a real transport, and is then checked against the tool result schema.
 * @returns the result; an error result saying why when the answer is not JSON (a BigInt, a cycle, a
 *   throwing getter) or not a tool result (content that is not a content list). The handler ran either
 *   way: for a write the gate then holds the tool for a person (an error answer).
 */
export function toToolResult(value: unknown): CallToolResult {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    return errorResult(`the tool's answer is not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  const plain: unknown = json === undefined ? undefined : JSON.parse(json);
  let result: unknown;
  if (typeof plain === 'object' && plain !== null && Array.isArray((plain as { content?: unknown }).content)) result = plain;
  else if (typeof plain === 'object' && plain !== null && !Array.isArray(plain)) result = { content: [{ type: 'text', text: json }], structuredContent: plain };
  else result = { content: [{ type: 'text', text: plain === undefined ? 'done' : typeof plain === 'string' ? plain : (json ?? 'done') }] };
  const checked = CallToolResultSchema.safeParse(result);
  if (!checked.success) {
    const issue = checked.error.issues[0];
    return errorResult(`the tool's answer is not a tool result (${issue ? `${issue.path.join('.') || '(result)'}: ${issue.message}` : 'wrong shape'})`);
  }
  return result as CallToolResult;
}

/** The author's tools and the in-process servers that serve them. */
export class ToolServer {
  private readonly tools = new Map<string, Registered>();
  /** What the gate trusts about each tool (gateway/declared.ts), by the same name. */
  readonly declared = new Map<string, DeclaredTool>();
  private readonly servers = new Set<Server>();

  constructor(private readonly info: { name: string; version: string }) {}

  /** Registered tool names, in order. */
  get names(): string[] {
    return [...this.tools.keys()];
  }

  /**
   * Adds a tool and tells connected gates that the list changed.
   * @throws Error when the name is invalid or taken.
   */
  add(name: string, spec: { description?: string; title?: string; inputSchema?: InputSchema }, handler: ToolHandler, declared: DeclaredTool): void {
    if (typeof name !== 'string' || !TOOL_NAME.test(name))
      throw new Error(`"${String(name)}" is not a tool name: use 1 to 128 letters, digits, _, - or . (MCP spec, tools)`);
    if (this.tools.has(name)) throw new Error(`a tool named "${name}" is registered already`);
    if (typeof handler !== 'function') throw new Error(`tool "${name}" needs a handler function`);
    const schema = spec.inputSchema ?? {};
    let inputSchema: Record<string, unknown>;
    let parse: Registered['parse'];
    if (isZodShape(schema)) {
      const object = z.object(schema);
      inputSchema = z.toJSONSchema(object, { io: 'input' }) as Record<string, unknown>;
      delete inputSchema.$schema;
      parse = (args) => {
        const r = object.safeParse(args);
        return r.success ? { ok: true, args: r.data as Record<string, unknown> } : { ok: false, problem: problemsOf(r.error) };
      };
    } else {
      inputSchema = schema as Record<string, unknown>;
      parse = (args) => ({ ok: true, args });
    }
    const definition: Record<string, unknown> = { name, inputSchema };
    if (spec.title !== undefined) definition.title = spec.title;
    if (spec.description !== undefined) definition.description = spec.description;
    // The hints agree with the declaration (clients may show them); the gate itself goes by the declaration.
    definition.annotations = declared.kind === 'read' ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: true };
    this.tools.set(name, { definition, parse, handler });
    const validate = (args: Record<string, unknown>) => {
      const r = parse(args);
      return r.ok ? undefined : r.problem;
    };
    // The author's functions get the arguments as the handler does (parsed by the zod shape, defaults in).
    const typed = (args: Record<string, unknown>) => {
      const r = parse(args);
      if (!r.ok) throw new Error(`the arguments do not fit the schema (${r.problem})`);
      return r.args;
    };
    const { risk, preview, readback } = declared;
    this.declared.set(name, {
      kind: declared.kind,
      validate,
      risk: risk && ((a) => risk(typed(a))),
      preview: preview && ((a) => preview(typed(a))),
      readback: readback && ((a, result) => readback(typed(a), result)),
    });
    for (const s of this.servers) void s.sendToolListChanged().catch(() => {});
  }

  /** Opens a connection: a fresh SDK server on one end of a linked pair; the other end is returned. */
  async connect(): Promise<Transport> {
    const [client, server] = InMemoryTransport.createLinkedPair();
    const s = new Server(this.info, { capabilities: { tools: { listChanged: true } } });
    s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...this.tools.values()].map((t) => t.definition) as never }));
    s.setRequestHandler(CallToolRequestSchema, async (req, extra) => this.call(req.params.name, req.params.arguments ?? {}, extra.signal));
    s.onclose = () => this.servers.delete(s);
    this.servers.add(s);
    await s.connect(server);
    return client;
  }

  private async call(name: string, raw: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const tool = this.tools.get(name);
    if (!tool) return { isError: true, content: [{ type: 'text', text: `unknown tool "${name}"` }] };
    const parsed = tool.parse(raw);
    if (!parsed.ok) return { isError: true, content: [{ type: 'text', text: `invalid arguments: ${parsed.problem}` }] };
    try {
      return toToolResult(await tool.handler(parsed.args as never, { signal }));
    } catch (err) {
      // What was thrown may itself be hostile (a getter, a Proxy): its words are read once, guarded.
      let text: string;
      try {
        text = err instanceof Error ? err.message : String(err);
      } catch {
        text = 'the tool failed (its error could not be read)';
      }
      return errorResult(typeof text === 'string' ? text : 'the tool failed');
    }
  }

  /** Closes every in-process server. */
  async close(): Promise<void> {
    await Promise.all([...this.servers].map((s) => s.close().catch(() => {})));
    this.servers.clear();
  }
}
