/**
 * Wrapping the five JSON clients (Claude Desktop, Claude Code, Cursor, VS Code, Gemini CLI). Every edit
 * goes through jsonc-parser's `modify` + `applyEdits`, so comments, trailing commas, indentation and the
 * order of everything wrap does not touch survive; only the moved entries and the gate's one entry
 * change. The result is parsed again and checked before it is returned (fail closed). Pure.
 */
import {
  applyEdits,
  type FormattingOptions,
  findNodeAtLocation,
  type Node as JsonNode,
  modify,
  type ParseError,
  parseTree,
  printParseErrorCode,
} from 'jsonc-parser';
import { maskUrl, maskUrlsIn } from '../core/mask-url.js';
import { LookfirstError } from '../errors.js';
import { gateEntry, serversKey } from './clients.js';
import { commentLines } from './comments.js';
import { insertMember, memberComments, removeMember } from './json-edit.js';
import { maskJsonSecrets } from './mask-secrets.js';
import { planServers } from './plan.js';
import type { ClientKind, WrapInput, WrapResult } from './types.js';

/** 1-based line and column of a character offset. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

/** A UTF-8 byte order mark some editors (Windows Notepad) put first; VS Code and Gemini read past it, jsonc-parser does not. */
const BOM = '\uFEFF';

/** The text split into its byte order mark (or '') and the JSON after it, so that edits keep the mark. */
export function splitBom(text: string): { bom: string; body: string } {
  return text.startsWith(BOM) ? { bom: BOM, body: text.slice(1) } : { bom: '', body: text };
}

/**
 * jsonc-parser's error codes, by the names printParseErrorCode gives them (its ParseErrorCode is a const
 * enum, which isolated modules cannot read), in words a person reads: `expected "}"`, not `CloseBraceExpected`.
 */
const PARSE_ERROR_WORDS: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'not a valid number',
  PropertyNameExpected: 'expected a key in double quotes',
  ValueExpected: 'expected a value',
  ColonExpected: 'expected ":" after the key',
  CommaExpected: 'expected ","',
  CloseBraceExpected: 'expected "}" (an object is not closed)',
  CloseBracketExpected: 'expected "]" (a list is not closed)',
  EndOfFileExpected: 'text after the end of the JSON',
  InvalidCommentToken: 'not a valid comment',
  UnexpectedEndOfComment: 'a /* comment is not closed',
  UnexpectedEndOfString: 'a string is not closed (missing ")',
  UnexpectedEndOfNumber: 'a number is cut off',
  InvalidUnicode: 'not a valid \\u escape',
  InvalidEscapeCharacter: 'not a valid \\ escape in a string',
  InvalidCharacter: 'a control character inside a string',
};

/**
 * Parses a client's JSON (comments and trailing commas allowed, as VS Code and Gemini allow them; a
 * leading byte order mark is skipped). Every key becomes an own property, `__proto__` included: a plain
 * parse would turn `"__proto__": {…}` into the object's prototype, and that server would be neither
 * moved nor listed, so the client would go on running it outside the gate without a word.
 * @throws LookfirstError WRAP_INVALID naming the file, line and column of the first few syntax errors,
 *   or of a key written twice in one object (clients keep only the last; wrap will not guess).
 */
export function parseClientJson(text: string, file: string): unknown {
  const { body } = splitBom(text);
  const errors: ParseError[] = [];
  const root = parseTree(body, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  if (errors.length > 0 || root === undefined) {
    // One mistake can give two codes at one place (`,,`: a name, then a value, expected): each place once.
    const where = errors
      .filter((e, i) => errors.findIndex((f) => f.offset === e.offset) === i)
      .slice(0, 3)
      .map((e) => {
        const { line, column } = positionOf(body, e.offset);
        return `line ${line}, column ${column}: ${PARSE_ERROR_WORDS[printParseErrorCode(e.error)] ?? 'not valid here'}`;
      })
      .filter((w, i, all) => all.indexOf(w) === i)
      .join('; ');
    throw new LookfirstError('WRAP_INVALID', `${file}: not valid JSON (${where}). Fix the file (the client would not read it either); nothing was written.`);
  }
  const value = ownValue(root, body, file);
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LookfirstError('WRAP_INVALID', `${file}: the file holds no JSON object; nothing was written.`);
  return value;
}

/** A parse tree node's value, with own properties only (see parseClientJson). */
function ownValue(node: JsonNode, text: string, file: string): unknown {
  switch (node.type) {
    case 'array':
      return (node.children ?? []).map((c) => ownValue(c, text, file));
    case 'object': {
      const out: Record<string, unknown> = {};
      for (const prop of node.children ?? []) {
        const [k, v] = prop.children ?? [];
        const key = String(k?.value);
        if (Object.hasOwn(out, key)) {
          const { line, column } = positionOf(text, k?.offset ?? prop.offset);
          throw new LookfirstError(
            'WRAP_INVALID',
            `${file}: the key ${JSON.stringify(key)} appears twice in one object (the second at line ${line}, column ${column}); a client reads only one of them. Remove the other, then run wrap again; nothing was written.`,
          );
        }
        Object.defineProperty(out, key, { value: v === undefined ? undefined : ownValue(v, text, file), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    default:
      return node.value;
  }
}

/** The file's own indentation and line ends, so that inserted lines look like their neighbours. */
export function formattingOf(text: string): FormattingOptions {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /\n([ \t]+)["}\]]/.exec(text)?.[1] ?? '  ';
  return indent.startsWith('\t') ? { insertSpaces: false, tabSize: 1, eol } : { insertSpaces: true, tabSize: indent.length, eol };
}

/**
 * Rewrites a JSON client's file: its movable servers leave, one entry runs `lookfirst serve`, placed
 * where the first moved server was.
 * @throws LookfirstError WRAP_INVALID (unparseable file), WRAP_REFUSED (already wrapped, nothing to move,
 *   name taken).
 */
export function wrapJson(client: ClientKind, input: WrapInput): WrapResult {
  const key = serversKey(client);
  const root = parseClientJson(input.text, input.file) as Record<string, unknown>;
  const servers = root[key];
  const plan = planServers(client, servers, input.file, key, input);
  const { bom, body } = splitBom(input.text);
  const formattingOptions = formattingOf(body);
  const names = Object.keys(servers as object);
  const movedNames = new Set(plan.moved.map((m) => m.clientName));
  const firstMoved = names.findIndex((n) => movedNames.has(n));
  const keptBefore = names.slice(0, firstMoved).filter((n) => !movedNames.has(n)).length;
  let text = body;
  for (const m of plan.moved) {
    const comments = memberComments(body, [key], m.clientName).flatMap(commentLines);
    if (comments.length > 0) m.comments = comments;
    text = removeMember(text, [key], m.clientName);
  }
  const entry = gateEntry(client, input.launcher, input.gateConfig, plan.timeout, plan.startupSec);
  const unit = formattingOptions.insertSpaces ? ' '.repeat(formattingOptions.tabSize ?? 2) : '\t';
  text = bom + insertMember(text, [key], input.gateServer, entry, keptBefore, unit, formattingOptions.eol ?? '\n');
  checkWrapped(
    text,
    input,
    key,
    plan.kept.map((k) => k.clientName),
    entry,
  );
  const untouched = client === 'claude-code' ? projectServers(root, input.cli ?? 'lookfirst') : [];
  return { text, moved: plan.moved, kept: plan.kept, gateServer: input.gateServer, timeout: plan.timeout, ...(untouched.length > 0 ? { untouched } : {}) };
}

/**
 * Claude Code's local-scope servers, kept per project in ~/.claude.json (`projects["/path"].mcpServers`):
 * wrap moves only the top-level servers, so these go on running without the gate, and the user is told.
 */
function projectServers(root: Record<string, unknown>, cli: string): string[] {
  const projects = root.projects;
  if (typeof projects !== 'object' || projects === null) return [];
  return Object.entries(projects).flatMap(([path, p]) => {
    const servers = (p as { mcpServers?: unknown } | null)?.mcpServers;
    const names = typeof servers === 'object' && servers !== null ? Object.keys(servers) : [];
    return names.length === 0
      ? []
      : [
          `projects[${JSON.stringify(path)}].mcpServers: ${names.join(', ')} (local scope; wrap them with \`${cli} wrap claude-code\` on that project's .mcp.json after moving them there, or by hand)`,
        ];
  });
}

/**
 * The rewritten file must parse and hold exactly the kept servers plus the gate's entry, and each kept
 * server, and everything outside the servers object, must be the same characters as before: the edit
 * touched only what moved and the gate's entry.
 */
function checkWrapped(text: string, input: WrapInput, key: string, kept: string[], entry: unknown): void {
  const after = parseClientJson(text, input.file) as Record<string, Record<string, unknown>>;
  const got = Object.keys(after[key] ?? {}).sort();
  const want = [...kept, input.gateServer].sort();
  const source = (t: string, path: string[]) => {
    const root = parseTree(splitBom(t).body, [], { allowTrailingComma: true, disallowComments: false });
    const node = root && findNodeAtLocation(root, path)?.parent;
    return node === undefined ? undefined : splitBom(t).body.slice(node.offset, node.offset + node.length);
  };
  const outside = (t: string) => {
    const b = splitBom(t).body;
    const root = parseTree(b, [], { allowTrailingComma: true, disallowComments: false });
    const node = root && findNodeAtLocation(root, [key]);
    return node === undefined ? undefined : [b.slice(0, node.offset), b.slice(node.offset + node.length)];
  };
  const same =
    kept.every((k) => source(text, [key, k]) === source(input.text, [key, k])) && JSON.stringify(outside(text)) === JSON.stringify(outside(input.text));
  if (!same || JSON.stringify(got) !== JSON.stringify(want) || JSON.stringify(after[key]?.[input.gateServer]) !== JSON.stringify(entry))
    throw new LookfirstError('WRAP_INVALID', `${input.file}: the rewritten file did not come out as intended (a bug); nothing was written.`);
}

/** Keys whose values are secrets in a server entry: environment and headers. */
export const SECRET_KEYS = ['env', 'headers', 'http_headers', 'env_http_headers'];

/** Keys whose values are server addresses, which may carry a password (`https://u:pw@h`) or a token in the query. */
export const URL_KEYS = ['url', 'httpUrl'];

/** An address as `--dry-run` shows it: core/mask-url.ts `maskUrl` (the password, query values and fragment masked). */
export { maskUrl };

/**
 * The same file with every env and header value of every server replaced by `***`, and the secret parts
 * of its addresses (maskUrl; in `args` too), formatting kept:
 * what `--dry-run` diffs, so that a diff shown on a screen or in a CI log never carries a secret.
 */
export function maskJson(client: ClientKind, text: string, file: string): string {
  const key = serversKey(client);
  const root = parseClientJson(text, file) as Record<string, unknown>;
  const servers = root[key];
  if (typeof servers !== 'object' || servers === null) return text;
  const { bom, body } = splitBom(text);
  const formattingOptions = formattingOf(body);
  let out = body;
  for (const [name, entry] of Object.entries(servers)) {
    if (typeof entry !== 'object' || entry === null) continue;
    for (const sk of SECRET_KEYS) {
      const block = (entry as Record<string, unknown>)[sk];
      if (typeof block !== 'object' || block === null) continue;
      for (const k of Object.keys(block)) out = applyEdits(out, modify(out, [key, name, sk, k], '***', { formattingOptions }));
    }
    for (const uk of URL_KEYS) {
      const url = (entry as Record<string, unknown>)[uk];
      if (typeof url === 'string' && maskUrl(url) !== url) out = applyEdits(out, modify(out, [key, name, uk], maskUrl(url), { formattingOptions }));
    }
    // Arguments often hold a database or API address with its credentials (`postgresql://u:pw@h/db`).
    const args = (entry as Record<string, unknown>).args;
    if (Array.isArray(args))
      for (const [i, a] of args.entries())
        if (typeof a === 'string' && maskUrlsIn(a) !== a) out = applyEdits(out, modify(out, [key, name, 'args', i], maskUrlsIn(a), { formattingOptions }));
  }
  // Secrets beside the servers (a diff's context lines show them): credential-named keys, addresses.
  return bom + maskJsonSecrets(out);
}

/**
 * The servers value of a JSON client file as JSON text: what unwrap fingerprints to tell whether the
 * client's servers are still as wrap left them (formatting and other keys aside).
 */
export function serversJson(client: ClientKind, text: string, file: string): string {
  const root = parseClientJson(text, file) as Record<string, unknown>;
  return JSON.stringify(root[serversKey(client)] ?? null);
}

/**
 * The current file with its servers block replaced by the original's, character for character: for
 * unwrap when the client rewrote other parts of the file since wrap (Claude Code keeps its own state in
 * ~/.claude.json), so that neither the original servers nor the client's later changes are lost.
 * @throws LookfirstError WRAP_INVALID when either file does not parse or lacks its servers block.
 */
export function restoreServersJson(client: ClientKind, current: string, original: string, file: string): string {
  const key = serversKey(client);
  const rangeOf = (text: string) => {
    const errors: ParseError[] = [];
    const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
    const node = root && errors.length === 0 ? findNodeAtLocation(root, [key]) : undefined;
    if (node === undefined) throw new LookfirstError('WRAP_INVALID', `${file}: cannot find "${key}" to restore; nothing was changed.`);
    return { start: node.offset, end: node.offset + node.length };
  };
  const from = splitBom(original).body;
  const { bom, body: to } = splitBom(current);
  const a = rangeOf(from);
  const b = rangeOf(to);
  const text = bom + to.slice(0, b.start) + from.slice(a.start, a.end) + to.slice(b.end);
  parseClientJson(text, file);
  return text;
}
