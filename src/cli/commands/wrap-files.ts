/**
 * The writes of `lookfirst wrap` and `unwrap` as one step that either happens whole or not at all: the
 * backup and note are written first (exclusive create, so an earlier backup is never overwritten), then
 * lookfirst.yaml, then the client's file, each replaced by write-file-atomic (a temp file beside the real
 * one, fsynced, renamed over it, mode and owner kept, symlinks written through). If any write fails, what
 * was already written is undone in reverse, so that a half-wrapped state (upstreams added, backup left,
 * client unchanged) never remains for a person to untangle.
 */
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import writeFileAtomic from 'write-file-atomic';
import { LookfirstError } from '../../errors.js';

/**
 * Replaces a file's content in one rename: a reader (or a crash) sees the old bytes or the new, never a
 * mix. A symlink is written through to its target; the target's mode and owner are kept.
 * @param mode the mode for a file that does not exist yet (an existing file keeps its own).
 * @throws the fs error (EACCES, ENOSPC, …) with the file unchanged.
 */
export function writeAtomic(file: string, data: string | Buffer, mode?: number): void {
  writeFileAtomic.sync(file, data, mode === undefined ? {} : { mode });
}

const codeOf = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? String(err);

/**
 * Refuses, before anything is written, a file the user has made read-only: wrap's rename could replace
 * it anyway (the folder allows it), which would overrule the user's choice.
 * @throws LookfirstError WRAP_REFUSED naming the file and what to do.
 */
export function mustBeWritable(file: string, what: string): void {
  try {
    accessSync(file, constants.W_OK);
  } catch (err) {
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file} (${what}) is not writable (${codeOf(err)}): make it writable (chmod u+w), then run this again; nothing was written.`,
    );
  }
}

/** Everything one wrap writes. */
export interface WrapWrites {
  /** The client's file, and the bytes wrap planned from (the backup holds exactly these). */
  file: string;
  original: Buffer;
  clientText: string;
  backup: string;
  note: string;
  noteText: string;
  gateFile: string;
  /** The gate config's text as wrap read it, or undefined when wrap creates the file. */
  gateBefore: string | undefined;
  gateText: string;
  /** Remove group and other permissions from an existing gate config (it now holds env or header values). */
  tightenGate: boolean;
}

/**
 * Writes a wrap, or nothing: on any failure every earlier write is undone.
 * @throws LookfirstError WRAP_INVALID naming the write that failed and whether everything was undone;
 *   WRAP_REFUSED when a file changed between wrap's read and its write (another program wrote it).
 */
export function writeWrap(w: WrapWrites): void {
  mustBeWritable(w.file, "the client's config");
  if (w.gateBefore !== undefined) mustBeWritable(w.gateFile, 'the gate config');
  const undo: [what: string, run: () => void][] = [];
  let step = `the backup ${w.backup}`;
  try {
    writeFileSync(w.backup, w.original, { flag: 'wx', mode: statSync(w.file).mode & 0o777 });
    undo.push([w.backup, () => rmSync(w.backup, { force: true })]);
    step = `the note ${w.note}`;
    writeFileSync(w.note, w.noteText, { flag: 'wx', mode: 0o600 });
    undo.push([w.note, () => rmSync(w.note, { force: true })]);
    step = w.gateFile;
    if (w.gateBefore === undefined) {
      // A folder of its own (lookfirst's config folder, by default, for a project's client): private, as the key will be.
      const made = mkdirSync(dirname(w.gateFile), { recursive: true, mode: 0o700 });
      if (made !== undefined) undo.push([made, () => rmSync(made, { recursive: true, force: true })]);
      writeFileSync(w.gateFile, w.gateText, { flag: 'wx', mode: 0o600 });
      undo.push([w.gateFile, () => rmSync(w.gateFile, { force: true })]);
    } else {
      const before = readFileSync(w.gateFile);
      if (before.toString('utf8') !== w.gateBefore) throw changed(w.gateFile);
      writeAtomic(w.gateFile, w.gateText);
      undo.push([w.gateFile, () => writeAtomic(w.gateFile, before)]);
      const mode = statSync(w.gateFile).mode & 0o777;
      if (w.tightenGate && (mode & 0o077) !== 0) {
        chmodSync(w.gateFile, mode & 0o700);
        undo.push([`the mode of ${w.gateFile}`, () => chmodSync(w.gateFile, mode)]);
      }
    }
    step = w.file;
    if (!readFileSync(w.file).equals(w.original)) throw changed(w.file);
    writeAtomic(w.file, w.clientText);
  } catch (err) {
    const left: string[] = [];
    for (const [what, run] of undo.reverse()) {
      try {
        run();
      } catch (e) {
        left.push(`${what} (${codeOf(e)})`);
      }
    }
    if (err instanceof LookfirstError && left.length === 0) throw err;
    throw new LookfirstError(
      'WRAP_INVALID',
      left.length === 0
        ? `cannot write ${step} (${codeOf(err)}); nothing was changed: the client's file and the gate config are as they were.`
        : `cannot write ${step} (${codeOf(err)}), and could not undo ${left.join(', ')}. The client's original is ${w.backup}: copy it back by hand if the file differs, and check ${w.gateFile}.`,
      { cause: err },
    );
  }
}

const changed = (file: string) =>
  new LookfirstError('WRAP_REFUSED', `${file} changed while wrap was running (another program wrote it); nothing was changed. Run wrap again.`);

/**
 * A name beside `file` that no file has yet: `<file><suffix>`, else `<file><suffix>.2`, `.3`, …, so
 * that a copy kept for the user never overwrites one kept earlier. Creates the file with `data`.
 * @returns the path written.
 */
export function writeNewCopy(file: string, suffix: string, data: Buffer, mode: number): string {
  for (let i = 1; ; i++) {
    const path = `${file}${suffix}${i === 1 ? '' : `.${i}`}`;
    try {
      writeFileSync(path, data, { flag: 'wx', mode });
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/**
 * The git work tree `dir` is in: the nearest folder from `dir` up that holds `.git` (a folder, or the
 * file a worktree or submodule has), or undefined. Files wrap would put there could be committed.
 */
export function gitWorkTreeOf(dir: string): string | undefined {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, '.git'))) return d;
    if (dirname(d) === d) return undefined;
  }
}
