/**
 * Wrapping the five JSON clients (Claude Desktop, Claude Code, Cursor, VS Code, Gemini CLI). Every edit
 * goes through jsonc-parser's `modify` + `applyEdits`, so comments, trailing commas, indentation and the
 * order of everything wrap does not touch survive; only the moved entries and the gate's one entry
 * change. The result is parsed again and checked before it is returned (fail closed). Pure.
 */
import { applyEdits, type FormattingOptions, findNodeAtLocation, modify, type ParseError, parse, parseTree, printParseErrorCode } from 'jsonc-parser';
import { LookfirstError } from '../errors.js';
import { gateEntry, serversKey } from './clients.js';
import { planServers } from './plan.js';
import type { ClientKind, WrapInput, WrapResult } from './types.js';

/** 1-based line and column of a character offset. */
export function positionOf(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

/**
 * Parses a client's JSON (comments and trailing commas allowed, as VS Code and Gemini allow them).
 * @throws LookfirstError WRAP_INVALID naming the file, line and column of the first few syntax errors.
 */
export function parseClientJson(text: string, file: string): unknown {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: false });
  if (errors.length > 0) {
    const where = errors
      .slice(0, 3)
      .map((e) => {
        const { line, column } = positionOf(text, e.offset);
        return `line ${line}, column ${column}: ${printParseErrorCode(e.error)}`;
      })
      .join('; ');
    throw new LookfirstError('WRAP_INVALID', `${file}: not valid JSON (${where}). Fix the file (the client would not read it either); nothing was written.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new LookfirstError('WRAP_INVALID', `${file}: the file holds no JSON object; nothing was written.`);
  return value;
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
  const plan = planServers(client, servers, input.file, key, input.takenUpstreams, input.neededSeconds, input.gateServer);
  const formattingOptions = formattingOf(input.text);
  const names = Object.keys(servers as object);
  const movedNames = new Set(plan.moved.map((m) => m.clientName));
  const firstMoved = names.findIndex((n) => movedNames.has(n));
  const keptBefore = names.slice(0, firstMoved).filter((n) => !movedNames.has(n)).length;
  let text = input.text;
  for (const m of plan.moved) text = applyEdits(text, modify(text, [key, m.clientName], undefined, { formattingOptions }));
  const entry = gateEntry(client, input.launcher, input.gateConfig, plan.timeout, plan.startupSec);
  text = applyEdits(text, modify(text, [key, input.gateServer], entry, { formattingOptions, getInsertionIndex: () => keptBefore }));
  checkWrapped(
    text,
    input,
    key,
    plan.kept.map((k) => k.clientName),
    entry,
  );
  return { text, moved: plan.moved, kept: plan.kept, gateServer: input.gateServer, timeout: plan.timeout };
}

/** The rewritten file must parse and hold exactly the kept servers plus the gate's entry. */
function checkWrapped(text: string, input: WrapInput, key: string, kept: string[], entry: unknown): void {
  const after = parseClientJson(text, input.file) as Record<string, Record<string, unknown>>;
  const got = Object.keys(after[key] ?? {}).sort();
  const want = [...kept, input.gateServer].sort();
  if (JSON.stringify(got) !== JSON.stringify(want) || JSON.stringify(after[key]?.[input.gateServer]) !== JSON.stringify(entry))
    throw new LookfirstError('WRAP_INVALID', `${input.file}: the rewritten file did not come out as intended (a bug); nothing was written.`);
}

/** Keys whose values are secrets in a server entry: environment and headers. */
export const SECRET_KEYS = ['env', 'headers', 'http_headers', 'env_http_headers'];

/**
 * The same file with every env and header value of every server replaced by `***`, formatting kept:
 * what `--dry-run` diffs, so that a diff shown on a screen or in a CI log never carries a secret.
 */
export function maskJson(client: ClientKind, text: string, file: string): string {
  const key = serversKey(client);
  const root = parseClientJson(text, file) as Record<string, unknown>;
  const servers = root[key];
  if (typeof servers !== 'object' || servers === null) return text;
  const formattingOptions = formattingOf(text);
  let out = text;
  for (const [name, entry] of Object.entries(servers)) {
    if (typeof entry !== 'object' || entry === null) continue;
    for (const sk of SECRET_KEYS) {
      const block = (entry as Record<string, unknown>)[sk];
      if (typeof block !== 'object' || block === null) continue;
      for (const k of Object.keys(block)) out = applyEdits(out, modify(out, [key, name, sk, k], '***', { formattingOptions }));
    }
  }
  return out;
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
  const from = rangeOf(original);
  const to = rangeOf(current);
  const text = current.slice(0, to.start) + original.slice(from.start, from.end) + current.slice(to.end);
  parseClientJson(text, file);
  return text;
}
