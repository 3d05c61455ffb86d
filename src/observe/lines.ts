/**
 * Complete lines out of a growing file's bytes. A writer appends a line in one or more writes, so a read
 * may end mid-line (or mid-character): the tail of a chunk waits for its newline before it is a line.
 * Works on bytes, not text, so a UTF-8 character split across two reads is joined before decoding.
 *
 * Bounded: the log is read as written, not verified, so a line may be any size (a file of zeros, a
 * sparse file, a line that never ends). A line longer than `maxLineBytes` is not kept: its bytes are
 * dropped as they come and it is reported once, as {@link TOO_LONG}, when its newline arrives. Held-back
 * bytes are kept as a list of chunks and only the new chunk is searched, so a long line costs linear
 * time, not a copy of everything held at every read.
 */

/** Splits appended bytes into complete lines (without the newline), keeping the unfinished rest. */
export interface LineSplitter {
  /**
   * Takes the next bytes read; returns the lines they complete, decoded as UTF-8. A line over the limit
   * comes out as {@link TOO_LONG} (a string no entry can be: it is not JSON).
   */
  push(chunk: Uint8Array): string[];
  /** Bytes held back: a line still being written (0 when the last read ended on a newline). */
  pendingBytes(): number;
  /** Forgets the held-back bytes (the file was truncated or replaced). */
  reset(): void;
}

/** What a line longer than the limit comes out as: not JSON, so every reader counts it as not an entry. */
export const TOO_LONG = '\u0000line too long';

/**
 * Longest line kept (bytes). An entry holds at most a dry run's recorded arguments (1 MiB) and a few
 * fields beside them; 16 MiB leaves room for that and bounds what one line can hold in memory.
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

const NEWLINE = 0x0a;

/** Creates a splitter with nothing held back. @param maxLineBytes longest line kept (bytes). */
export function createLineSplitter(maxLineBytes = MAX_LINE_BYTES): LineSplitter {
  let parts: Buffer[] = [];
  let held = 0;
  // The line being held is over the limit: its bytes are dropped until its newline.
  let dropping = false;

  const take = (bytes: Buffer) => {
    if (dropping) return;
    if (held + bytes.length > maxLineBytes) {
      dropping = true;
      parts = [];
      held = 0;
      return;
    }
    // A copy: the caller reuses its read buffer.
    parts.push(Buffer.from(bytes));
    held += bytes.length;
  };
  const endLine = (): string => {
    const line = dropping ? TOO_LONG : Buffer.concat(parts, held).toString('utf8');
    parts = [];
    held = 0;
    dropping = false;
    return line;
  };

  return {
    push(chunk) {
      const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      const lines: string[] = [];
      let start = 0;
      for (let i = buf.indexOf(NEWLINE); i !== -1; i = buf.indexOf(NEWLINE, start)) {
        take(buf.subarray(start, i));
        lines.push(endLine());
        start = i + 1;
      }
      if (start < buf.length) take(buf.subarray(start));
      return lines;
    },
    pendingBytes: () => held,
    reset() {
      parts = [];
      held = 0;
      dropping = false;
    },
  };
}
