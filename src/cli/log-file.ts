/**
 * Reading the audit log for `tail` and `stats`, which read it as written (unverified): only a regular
 * file is read, and it is read in chunks, never whole. A log replaced by a FIFO would block a read
 * forever, a device such as /dev/zero never ends, a directory cannot be read: each is refused with a
 * sentence instead. The file is opened without blocking (O_NONBLOCK), so even a FIFO with no writer is
 * refused at once. Memory stays bounded by the chunk and the longest line (observe/lines.ts).
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats, statSync } from 'node:fs';
import { LookfirstError } from '../errors.js';
import type { LineSplitter } from '../observe/lines.js';

/** Bytes read at a time. */
const CHUNK = 1 << 16;

/** What a path is, for a sentence: `a FIFO`, `a directory`, `a device`. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * Refuses a log that is not a regular file.
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` naming what it is.
 */
export function assertRegularLog(path: string, st: Stats): void {
  if (!st.isFile())
    throw new LookfirstError('AUDIT_LOG_UNREADABLE', `the audit log ${path} is ${kindOf(st)}, not a file: point audit.log at the file the gate writes`);
}

/**
 * Refuses a file the log's verification would read (the log, its head, the public key, a trusted head)
 * when it is there and not a regular file: a FIFO would block the read forever, /dev/zero never ends.
 * A file that is not there is left to the caller (a missing head or log has its own sentence).
 * @param setting what the file is, for the sentence (`audit.log`, `the trusted head`).
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` naming what it is.
 */
export function refuseIrregular(path: string, setting: string): void {
  let st: Stats;
  try {
    st = statSync(path);
  } catch {
    return;
  }
  if (!st.isFile()) throw new LookfirstError('AUDIT_LOG_UNREADABLE', `${setting} ${path} is ${kindOf(st)}, not a file: give the path of a regular file`);
}

/**
 * Reads a regular log from `offset` to its current end in chunks, handing each complete line to `onLine`.
 * @returns the offset after the last byte read (a line still being written waits in the splitter).
 * @throws LookfirstError `AUDIT_LOG_UNREADABLE` when the path is not a regular file; the open's error
 *   (ENOENT, EACCES) as thrown, for the caller to say.
 */
export function readLogLines(path: string, offset: number, splitter: LineSplitter, onLine: (line: string) => void): number {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    // The file may have been replaced since the caller looked: judge and read the one opened.
    const st = fstatSync(fd);
    assertRegularLog(path, st);
    const end = st.size;
    const buf = Buffer.alloc(CHUNK);
    let at = offset;
    while (at < end) {
      const got = readSync(fd, buf, 0, Math.min(CHUNK, end - at), at);
      if (got === 0) break;
      at += got;
      for (const line of splitter.push(buf.subarray(0, got))) onLine(line);
    }
    return at;
  } finally {
    closeSync(fd);
  }
}
