/**
 * A unified diff of what a file write or edit would change, for the person deciding. The target is read
 * as it is now through the upstream's own read tool (`read_text_file` or `read_file` on the same
 * upstream, and only if the policy allows it as a read), so the gate needs no file access of its own.
 * `write_file`-style calls diff the new content against the file; `edit_file`-style calls apply their
 * edits (`oldText` → `newText`, in order) to it first, as server-filesystem does (see applyEdits), with a
 * note wherever that differs from a plain search (CRLF, whitespace-tolerant matching). Control
 * characters in diff lines are shown as `\uXXXX`. A file that does not exist reads as a creation.
 * Bounded: a file over 256 KB, or a diff over 200 lines, is cut with a note. Never throws: any doubt
 * means no diff (the call is still held; the full arguments are shown as always).
 */
import { createTwoFilesPatch } from 'diff';
import { showHidden } from '../confirm/visible.js';
import { decide, type Policy } from '../policy/evaluate.js';
import { type Catalogue, type CatalogueTool, classifyTool } from './catalogue.js';
import { isPlainObject } from './raw.js';

const MAX_FILE_BYTES = 256 * 1024;
const MAX_DIFF_LINES = 200;
const READ_TOOLS = ['read_text_file', 'read_file'];

/** What the preview needs from the gate. */
export interface DiffDeps {
  catalogue: Catalogue;
  policy: Policy;
  timeoutMs: number;
}

function textOf(result: Record<string, unknown>): string | undefined {
  if (result.isError === true || !Array.isArray(result.content)) return undefined;
  const texts = result.content.filter((c): c is { type: 'text'; text: string } => isPlainObject(c) && c.type === 'text' && typeof c.text === 'string');
  return texts.length === 1 ? texts[0]?.text : undefined;
}

/** Line endings as server-filesystem normalises them before it edits (and as it writes the file back). */
const lf = (t: string) => t.replace(/\r\n/g, '\n');
const indentOf = (line: string) => /^\s*/.exec(line)?.[0] ?? '';

/**
 * Applies edits in order, the way server-filesystem's `edit_file` does (its documented behaviour, so that
 * the diff shows what the server will do, not what a plain search would): line endings normalised to LF
 * in the file and in each edit; the first exact occurrence replaced; failing that, the first run of lines
 * equal to the edit's lines with surrounding whitespace ignored, replaced by the new lines re-indented
 * to the first matched line (later lines keep their indentation relative to the old text's).
 * @returns the new text and notes for the person, or why the edit would fail.
 */
export function applyEdits(text: string, edits: unknown): { ok: true; text: string; notes: string[] } | { ok: false; why: string } {
  if (!Array.isArray(edits)) return { ok: false, why: 'no edits' };
  let out = lf(text);
  const notes = text.includes('\r\n') ? ['the file has CRLF line endings: the server writes every line ending back as LF (not shown below)'] : [];
  for (const [i, e] of edits.entries()) {
    if (!isPlainObject(e) || typeof e.oldText !== 'string' || typeof e.newText !== 'string')
      return { ok: false, why: `edit ${i + 1} is not { oldText, newText }` };
    const oldText = lf(e.oldText);
    const newText = lf(e.newText);
    const at = out.indexOf(oldText);
    if (at >= 0) {
      out = out.slice(0, at) + newText + out.slice(at + oldText.length);
      continue;
    }
    const oldLines = oldText.split('\n');
    const lines = out.split('\n');
    let found = -1;
    for (let k = 0; k + oldLines.length <= lines.length && found < 0; k++) if (oldLines.every((l, j) => l.trim() === (lines[k + j] ?? '').trim())) found = k;
    if (found < 0)
      return { ok: false, why: `edit ${i + 1}: its oldText is in the file neither exactly nor line by line with whitespace ignored, so the edit would fail` };
    const indent = indentOf(lines[found] ?? '');
    const newLines = newText.split('\n').map((line, j) => {
      if (j === 0) return indent + line.trimStart();
      const was = indentOf(oldLines[j] ?? '');
      const now = indentOf(line);
      return was && now ? indent + ' '.repeat(Math.max(0, now.length - was.length)) + line.trimStart() : line;
    });
    lines.splice(found, oldLines.length, ...newLines);
    out = lines.join('\n');
    notes.push(
      `edit ${i + 1} is not in the file exactly: the server applies it to line ${found + 1}, where the lines match with whitespace ignored, and re-indents it`,
    );
  }
  return { ok: true, text: out, notes };
}

/**
 * A diff line as a person can read it: every hidden character (bidi controls, zero-width, C0 and C1
 * controls, line separators) and a carriage return, which could redraw the line on a terminal, as a code.
 */
const visibleLine = (line: string) => showHidden(line).replace(/\r/g, '\\u000D');

/**
 * The diff for a write or edit call, or undefined when the call is neither or nothing can be read.
 * @returns a unified diff (or a one-line note when a diff cannot be made, e.g. an edit that would fail).
 */
export async function diffPreview(deps: DiffDeps, tool: CatalogueTool, args: Record<string, unknown>): Promise<string | undefined> {
  const path = typeof args.path === 'string' ? args.path : undefined;
  const name = tool.upstreamTool.toLowerCase();
  const edit = /edit/.test(name) && Array.isArray(args.edits);
  const write = /write|create|save/.test(name) && typeof args.content === 'string' && !/director/.test(name);
  if (!path || (!edit && !write)) return undefined;
  const reader = deps.catalogue.all().find(
    (t) =>
      t.upstream === tool.upstream &&
      READ_TOOLS.includes(t.upstreamTool) &&
      // A read tool whose definition changed since it was pinned is not trusted to read for the preview.
      deps.catalogue.pinStatus(t).kind === 'pinned' &&
      decide(deps.policy, t.exposed, classifyTool(t, { path })).action === 'allow',
  );
  if (!reader) return undefined;
  let before: string | undefined;
  let missing = false;
  try {
    const result = await reader.upstream.request(
      'tools/call',
      { name: reader.upstreamTool, arguments: { path } },
      { signal: AbortSignal.timeout(deps.timeoutMs) },
    );
    before = textOf(result);
    if (before === undefined) {
      const error = JSON.stringify(result.content ?? '');
      if (result.isError === true && /ENOENT|no such file|not found|does not exist/i.test(error)) missing = true;
      else return undefined;
    }
  } catch {
    return undefined;
  }
  if (before !== undefined && Buffer.byteLength(before) > MAX_FILE_BYTES) return `(no diff: ${path} is over ${MAX_FILE_BYTES / 1024} KB)`;
  // Bytes that are not UTF-8 read back as U+FFFD: a write or edit re-encodes the whole file, which a text diff cannot show.
  if (before?.includes('\uFFFD'))
    return `(no diff: ${path} is not valid UTF-8 text as read (it shows U+FFFD); the server writes the whole file back as UTF-8, changing every byte that is not, which a diff cannot show)`;
  if (missing && edit) return `(no diff: ${path} does not exist, so the edit would fail)`;
  let after: string;
  let notes: string[] = [];
  if (edit) {
    const applied = applyEdits(before ?? '', args.edits);
    if (!applied.ok) return `(no diff: ${applied.why})`;
    after = applied.text;
    notes = applied.notes;
    // The server edits the LF form of the file: diff that, and say what else changes.
    if (before !== undefined) before = lf(before);
  } else after = args.content as string;
  if (!missing && after === before) return notes.length > 0 ? notes.map((n) => `(note: ${n})`).join('\n') : '(no change: the file already has this content)';
  const patch = createTwoFilesPatch(missing ? '/dev/null' : path, path, before ?? '', after, missing ? '(new file)' : 'now', 'after the call', { context: 3 });
  const lines = [
    ...notes.map((n) => `(note: ${n})`),
    ...patch
      .split('\n')
      .filter((l) => !l.startsWith('====='))
      .map(visibleLine),
  ];
  return lines.length > MAX_DIFF_LINES
    ? `${lines.slice(0, MAX_DIFF_LINES).join('\n')}\n… (${lines.length - MAX_DIFF_LINES} more diff lines)`
    : lines.join('\n').trimEnd();
}
