/**
 * Opening the approval page without showing its access key to other processes. A command line (and a
 * child's environment) can be read by every local user, so the keyed address never goes to the browser
 * launcher: the launcher gets the path of a small HTML file that only this user can read (mode 0600, in a
 * directory of mode 0700 made by mkdtemp), which forwards the browser to the keyed address, as notebook
 * servers do. The file is removed with its directory when the gate stops.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { escapeHtml } from './views.js';

/** A launch file on disk. */
export interface LaunchFile {
  /** Absolute path of the HTML file (mode 0600). */
  path: string;
  /** `file://` address of it: safe to pass to a browser launcher. */
  url: string;
  /** Removes the file and its directory (idempotent). */
  remove(): void;
}

/**
 * Writes a file that forwards the browser to `target` (the keyed page address).
 * @param dir where to make the private directory (default: the system's temporary directory).
 * @throws Error from the file system when the directory or file cannot be made (the caller reports it).
 */
export function createLaunchFile(target: string, dir: string = tmpdir()): LaunchFile {
  const u = new URL(target);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('the approval page address must be http(s)');
  const privateDir = mkdtempSync(join(dir, 'lookfirst-'));
  const path = join(privateDir, 'open-approval-page.html');
  const href = escapeHtml(u.href);
  writeFileSync(
    path,
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
<meta http-equiv="refresh" content="0;url=${href}">
<title>lookfirst: opening the approval page</title></head>
<body><p>Opening the lookfirst approval page… If nothing happens, <a href="${href}">open it here</a>.</p>
<p>This file holds the page's access key: do not share it. It is removed when the gate stops.</p></body></html>
`,
    { mode: 0o600, flag: 'wx' },
  );
  let removed = false;
  return {
    path,
    url: pathToFileURL(path).href,
    remove() {
      if (removed) return;
      removed = true;
      rmSync(privateDir, { recursive: true, force: true });
    },
  };
}
