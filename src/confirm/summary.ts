/**
 * One-line summary of a held call, for the title line of every confirmation channel. The full arguments
 * are always shown beside it; the summary only helps a person see at a glance what the call does.
 * Pure.
 */

import { showHidden } from './visible.js';

const MAX_VALUE_CHARS = 60;
const MAX_LINE_CHARS = 240;

/** `write_file path="notes/a.txt" content="hello…" (1200 chars)`: top-level arguments, values shortened. */
export function summarizeCall(tool: string, args: Record<string, unknown>): string {
  const parts: string[] = [];
  // Keys are argument data too: an unusual one is quoted, so it cannot pose as part of the summary.
  for (const [key, value] of Object.entries(args)) parts.push(`${/^[A-Za-z0-9_.-]{1,40}$/.test(key) ? key : shortValue(key)}=${shortValue(value)}`);
  let line = `${tool.replace(/[\t\n\r]/g, ' ')} ${parts.join(' ')}`.trim();
  if (line.length > MAX_LINE_CHARS) line = `${line.slice(0, MAX_LINE_CHARS - 1)}…`;
  return showHidden(line);
}

function shortValue(value: unknown): string {
  if (typeof value === 'string') {
    const oneLine = value.replace(/\r?\n|\r/g, '⏎');
    return oneLine.length > MAX_VALUE_CHARS ? `"${oneLine.slice(0, MAX_VALUE_CHARS)}…" (${value.length} chars)` : `"${oneLine}"`;
  }
  if (Array.isArray(value)) return `[${value.length} item${value.length === 1 ? '' : 's'}]`;
  if (value && typeof value === 'object') return `{${Object.keys(value).length} keys}`;
  return String(value);
}
