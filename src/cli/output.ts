/**
 * Terminal output helpers: color only on a TTY and never with NO_COLOR (https://no-color.org).
 * The CLI writes results to stdout and diagnostics to stderr; `serve` writes nothing to stdout (it is the
 * MCP channel).
 */

import { basename, resolve, sep } from 'node:path';
import { showHiddenInJson } from '../confirm/visible.js';

const useColor = (stream: NodeJS.WriteStream) => stream.isTTY === true && !process.env.NO_COLOR;

/** Wraps text in an ANSI color when the stream supports it. */
export function paint(stream: NodeJS.WriteStream, color: 'red' | 'green' | 'yellow' | 'bold' | 'dim', text: string): string {
  if (!useColor(stream)) return text;
  const codes = { red: 31, green: 32, yellow: 33, bold: 1, dim: 2 } as const;
  return `\u001b[${codes[color]}m${text}\u001b[0m`;
}

/**
 * How to run this CLI in a command we suggest, in one form wherever it is printed: `lookfirst` when it was
 * started under that name (npm link, a global install, `npx lookfirst`, npm's bin folder), else
 * `node /absolute/path/to/main.js`. Always absolute: a path relative to the current folder reads differently
 * from one command to the next and breaks once the user changes folder. A path with characters a shell
 * would split or expand is single-quoted. `script` is the started script (default `process.argv[1]`).
 */
export function cliName(script: string = process.argv[1] ?? ''): string {
  if (basename(script) === 'lookfirst') return 'lookfirst';
  const abs = resolve(script);
  const plain = sep === '\\' ? /^[\w@%+=:,./\\-]+$/ : /^[\w@%+=:,./-]+$/;
  return `node ${plain.test(abs) ? abs : `'${abs.replaceAll("'", "'\\''")}'`}`;
}

/** Writes one diagnostic line to stderr, prefixed with `lookfirst:`. */
export function logLine(message: string): void {
  process.stderr.write(`lookfirst: ${message}\n`);
}

/**
 * One value as a line of JSON for `--json` output, with every hidden character (C1 controls, bidi
 * overrides, line separators: confirm/visible.ts) written as its `\uXXXX` escape. JSON.stringify escapes
 * only C0 controls, and this output reaches terminals too: a tool name or an upstream's words must not
 * move the cursor or reorder the line there. The JSON means the same.
 */
export function jsonLine(value: unknown): string {
  return `${showHiddenInJson(JSON.stringify(value))}\n`;
}
