/**
 * A unified diff of what a file write or edit would change, for the person deciding. The target is read
 * as it is now through the upstream's own read tool (`read_text_file` or `read_file` on the same
 * upstream, and only if the policy allows it as a read), so the gate needs no file access of its own.
 * `write_file`-style calls diff the new content against the file; `edit_file`-style calls apply their
 * edits (`oldText` → `newText`, in order) to it first. A file that does not exist reads as a creation.
 * Bounded: a file over 256 KB, or a diff over 200 lines, is cut with a note. Never throws: any doubt
 * means no diff (the call is still held; the full arguments are shown as always).
 */
import { createTwoFilesPatch } from 'diff';
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

/** Applies edits in order; returns the new text, or why it cannot. */
function applyEdits(text: string, edits: unknown): { ok: true; text: string } | { ok: false; why: string } {
  if (!Array.isArray(edits)) return { ok: false, why: 'no edits' };
  let out = text;
  for (const [i, e] of edits.entries()) {
    if (!isPlainObject(e) || typeof e.oldText !== 'string' || typeof e.newText !== 'string')
      return { ok: false, why: `edit ${i + 1} is not { oldText, newText }` };
    const at = out.indexOf(e.oldText);
    if (at < 0) return { ok: false, why: `edit ${i + 1}: its oldText is not in the file, so the edit would fail` };
    out = out.slice(0, at) + e.newText + out.slice(at + e.oldText.length);
  }
  return { ok: true, text: out };
}

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
  if (missing && edit) return `(no diff: ${path} does not exist, so the edit would fail)`;
  let after: string;
  if (edit) {
    const applied = applyEdits(before ?? '', args.edits);
    if (!applied.ok) return `(no diff: ${applied.why})`;
    after = applied.text;
  } else after = args.content as string;
  if (!missing && after === before) return '(no change: the file already has this content)';
  const patch = createTwoFilesPatch(missing ? '/dev/null' : path, path, before ?? '', after, missing ? '(new file)' : 'now', 'after the call', { context: 3 });
  const lines = patch.split('\n').filter((l) => !l.startsWith('====='));
  return lines.length > MAX_DIFF_LINES
    ? `${lines.slice(0, MAX_DIFF_LINES).join('\n')}\n… (${lines.length - MAX_DIFF_LINES} more diff lines)`
    : lines.join('\n').trimEnd();
}
