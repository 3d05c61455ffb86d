/**
 * One-line summary of a held call, for the title line of every confirmation channel. The full arguments
 * are always shown beside it; the summary only helps a person see at a glance what the call does.
 * Pure.
 */

import { oneLine, showHidden } from './visible.js';

const MAX_VALUE_CHARS = 60;
const MAX_LINE_CHARS = 240;

/**
 * `write_file path="notes/a.txt" content="hello…" (1200 chars)`: top-level arguments, values shortened.
 * String values are quoted as JSON strings (a `"` inside shows as `\"`), so a value cannot pose as
 * another argument; when the line is full, it ends with how many arguments it left out.
 */
export function summarizeCall(tool: string, args: Record<string, unknown>): string {
  const entries = Object.entries(args);
  let line = oneLine(tool).slice(0, 80);
  let shown = 0;
  for (const [key, value] of entries) {
    // Keys are argument data too: an unusual one is quoted, so it cannot pose as part of the summary.
    const part = `${/^[A-Za-z0-9_.-]{1,40}$/.test(key) ? key : shortValue(key)}=${shortValue(value)}`;
    if (line.length + 1 + part.length > MAX_LINE_CHARS && shown > 0) break;
    line += ` ${part}`;
    shown++;
  }
  if (shown < entries.length) line += ` … (+${entries.length - shown} more argument${entries.length - shown === 1 ? '' : 's'})`;
  return showHidden(line);
}

function shortValue(value: unknown): string {
  if (typeof value === 'string') {
    const cut = value.length > MAX_VALUE_CHARS;
    const quoted = JSON.stringify(cut ? value.slice(0, MAX_VALUE_CHARS) : value);
    return cut ? `${quoted.slice(0, -1)}…" (${value.length} chars)` : quoted;
  }
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? '' : 's'}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).length} keys}`;
  return String(value);
}
