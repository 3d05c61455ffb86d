/**
 * Minimal edits of one JSON object's members, for wrap: remove a member, insert one. jsonc-parser's
 * `modify` with formatting options re-formats every line the edit touches (it forces `keepLines:
 * false`), so a kept one-line sibling such as `"fs": { "command": "x" }` came back spread over lines,
 * and its removal starts at the previous member's end, so that member's trailing `// comment` left
 * while the removed one's stayed behind. Here, when members sit on lines of their own, a removal takes
 * exactly the removed member's lines: the comment lines above it, the member, its comma and a comment
 * on its last line; an insertion adds whole lines indented like the neighbours. Anything else (members
 * sharing a line, as in a one-line file) falls back to `modify` without formatting, which never touches
 * a sibling either. Pure.
 */
import { applyEdits, createScanner, findNodeAtLocation, type Node as JsonNode, modify, parseTree } from 'jsonc-parser';

// jsonc-parser's SyntaxKind is a const enum, which verbatimModuleSyntax cannot import: its values, as the library's main.d.ts defines them.
const COMMA = 5;
const LINE_COMMENT = 12;
const BLOCK_COMMENT = 13;
const LINE_BREAK = 14;
const EOF = 17;

/** The parse tree of `text` (comments and trailing commas allowed); the caller parsed it once already. */
function treeOf(text: string): JsonNode {
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (root === undefined) throw new Error('json-edit: no JSON');
  return root;
}

/** In text[from, to), which holds only commas, white space and comments: the offset just past the first line break outside a comment, or undefined. */
function afterFirstBreak(text: string, from: number, to: number): number | undefined {
  const s = createScanner(text.slice(from, to), false);
  for (let k = s.scan(); k !== EOF; k = s.scan()) {
    if (k === LINE_BREAK) return from + s.getTokenOffset() + s.getTokenLength();
  }
  return undefined;
}

/** Offsets of the commas in text[from, to) that sit outside comments. */
function commasIn(text: string, from: number, to: number): number[] {
  const s = createScanner(text.slice(from, to), false);
  const out: number[] = [];
  for (let k = s.scan(); k !== EOF; k = s.scan()) if (k === COMMA) out.push(from + s.getTokenOffset());
  return out;
}

/** Where a member's own lines begin and end, or undefined when it shares a line with something else. */
function linesOf(text: string, obj: JsonNode, i: number): { start: number; end: number } | undefined {
  const members = obj.children ?? [];
  const m = members[i];
  if (m === undefined) return undefined;
  const prev = members[i - 1];
  const next = members[i + 1];
  const before = prev === undefined ? obj.offset + 1 : prev.offset + prev.length;
  const after = next === undefined ? obj.offset + obj.length - 1 : next.offset;
  const start = afterFirstBreak(text, before, m.offset);
  const end = afterFirstBreak(text, m.offset + m.length, after);
  if (start === undefined || end === undefined) return undefined;
  // The comment lines between the previous line break and the member go with it; a blank line stays.
  return { start: start + (/^(?:[ \t]*\r?\n)*/.exec(text.slice(start, m.offset))?.[0].length ?? 0), end };
}

/**
 * `text` without the member `key` of the object at `path`.
 * @throws Error when the object or member is not there (the caller checked both).
 */
export function removeMember(text: string, path: string[], key: string): string {
  const obj = findNodeAtLocation(treeOf(text), path);
  const i = (obj?.children ?? []).findIndex((p) => p.children?.[0]?.value === key);
  if (obj === undefined || i < 0) throw new Error(`json-edit: no member ${key}`);
  const lines = linesOf(text, obj, i);
  if (lines === undefined) return applyEdits(text, modify(text, [...path, key], undefined, {}));
  const members = obj.children ?? [];
  const m = members[i] as JsonNode;
  const prev = members[i - 1];
  const ownComma = commasIn(text, m.offset + m.length, lines.end).length > 0;
  let out = text.slice(0, lines.start) + text.slice(lines.end);
  // The last member leaves, and had no comma of its own: the previous one's comma would now trail
  // (strict JSON clients such as Claude Desktop refuse that), so it goes too.
  if (i === members.length - 1 && !ownComma && prev !== undefined) {
    const comma = commasIn(text, prev.offset + prev.length, lines.start)[0];
    if (comma !== undefined) out = out.slice(0, comma) + out.slice(comma + 1);
  }
  return out;
}

/**
 * `text` with `key: value` added to the object at `path` as member number `index`, written on lines of
 * its own with the neighbours' indentation (`unit` per level, `eol` line ends) when the object's
 * members sit on lines of their own; else compactly.
 */
export function insertMember(text: string, path: string[], key: string, value: unknown, index: number, unit: string, eol: string): string {
  const obj = findNodeAtLocation(treeOf(text), path);
  if (obj === undefined) throw new Error('json-edit: no object');
  const members = obj.children ?? [];
  const compact = () => applyEdits(text, modify(text, [...path, key], value, { getInsertionIndex: () => index }));
  const lineStart = (at: number) => text.lastIndexOf('\n', at - 1) + 1;
  const indentAt = (at: number) => /^[ \t]*/.exec(text.slice(lineStart(at)))?.[0] ?? '';
  const render = (indent: string) => `${indent}${JSON.stringify(key)}: ${JSON.stringify(value, null, unit).split('\n').join(`${eol}${indent}`)}`;
  const next = members[index];
  if (next !== undefined) {
    const lines = linesOf(text, obj, index);
    if (lines === undefined) return compact();
    const at = lineStart(lines.start);
    return `${text.slice(0, at)}${render(indentAt(next.offset))},${eol}${text.slice(at)}`;
  }
  const prev = members[index - 1];
  if (prev === undefined) {
    // An empty object: `{` and `}` on lines of their own, or compact.
    const close = obj.offset + obj.length - 1;
    const start = afterFirstBreak(text, obj.offset + 1, close);
    if (start === undefined) return compact();
    const indent = `${indentAt(close)}${unit}`;
    return `${text.slice(0, start)}${render(indent)}${eol}${text.slice(start)}`;
  }
  const lines = linesOf(text, obj, index - 1);
  if (lines === undefined) return compact();
  const hasComma = commasIn(text, prev.offset + prev.length, lines.end).length > 0;
  const prevEnd = prev.offset + prev.length;
  const head = hasComma ? text.slice(0, lines.end) : `${text.slice(0, prevEnd)},${text.slice(prevEnd, lines.end)}`;
  return `${head}${render(indentAt(prev.offset))}${eol}${text.slice(lines.end)}`;
}

/**
 * The comments removeMember takes away with the member `key` of the object at `path`: those on the
 * lines above it, inside it, and after it on its last line (members sharing a line: only those inside).
 * Each as written, markers included (`// …`, `/* … *\/`), in order. [] when there are none or the
 * member is not there.
 */
export function memberComments(text: string, path: string[], key: string): string[] {
  const obj = findNodeAtLocation(treeOf(text), path);
  const i = (obj?.children ?? []).findIndex((p) => p.children?.[0]?.value === key);
  const m = obj?.children?.[i];
  if (obj === undefined || m === undefined) return [];
  const range = linesOf(text, obj, i) ?? { start: m.offset, end: m.offset + m.length };
  const s = createScanner(text.slice(range.start, range.end), false);
  const out: string[] = [];
  for (let k = s.scan(); k !== EOF; k = s.scan()) if (k === LINE_COMMENT || k === BLOCK_COMMENT) out.push(s.getTokenValue());
  return out;
}
