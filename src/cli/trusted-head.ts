/**
 * The one rule for where a `--trusted-head` copy may live, shared by `verify-log` and `pilot-status`. A copy of
 * the log's head is worth something only if whoever can rewrite the log cannot rewrite the copy too: a copy in
 * the log's own folder (or below it), or the log's own head sidecar under another name (a symlink or a hard
 * link), rolls back with the log and proves nothing against a rollback. Paths are compared after resolving
 * symlinks where the files exist; in doubt (nothing can be resolved), the plain absolute paths decide.
 */
import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { sidecarPaths } from '../audit/writer.js';

/** The absolute path with symlinks resolved as far as the file, or else its folder, exists. */
function canonical(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    try {
      return join(realpathSync(dirname(abs)), basename(abs));
    } catch {
      return abs;
    }
  }
}

/** True when both paths name one existing file (a hard link or a symlink to it). */
function sameFile(a: string, b: string): boolean {
  try {
    const sa = statSync(a);
    const sb = statSync(b);
    return sa.dev === sb.dev && sa.ino === sb.ino;
  } catch {
    return false;
  }
}

/**
 * Whether a trusted head copy at `copyPath` falls with the log at `logPath`: it lies in the log's folder or
 * below it, or it is the log's own head sidecar (`<log>.head`) under any name. Relative paths are taken from
 * the current directory, as the command line gives them.
 */
export function isHeadBesideLog(logPath: string, copyPath: string): boolean {
  if (sameFile(copyPath, sidecarPaths(logPath).head)) return true;
  const fromLog = relative(canonical(dirname(resolve(logPath))), canonical(copyPath));
  return !fromLog.startsWith('..') && !isAbsolute(fromLog);
}

/** The sentence both commands print for a copy that {@link isHeadBesideLog}. */
export function headBesideLogWarning(copyPath: string): string {
  return `the trusted head ${copyPath} is in the log's own folder (or is its own head file): whoever can rewrite the log can rewrite it too, so it proves nothing against a rollback. Keep a copy elsewhere (another folder, disk or machine) and pass that`;
}
