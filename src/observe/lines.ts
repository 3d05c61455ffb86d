/**
 * Complete lines out of a growing file's bytes. A writer appends a line in one or more writes, so a read
 * may end mid-line (or mid-character): the tail of a chunk waits for its newline before it is a line.
 * Works on bytes, not text, so a UTF-8 character split across two reads is joined before decoding.
 */

/** Splits appended bytes into complete lines (without the newline), keeping the unfinished rest. */
export interface LineSplitter {
  /** Takes the next bytes read; returns the lines they complete, decoded as UTF-8. */
  push(chunk: Uint8Array): string[];
  /** Bytes held back: a line still being written (0 when the last read ended on a newline). */
  pendingBytes(): number;
  /** Forgets the held-back bytes (the file was truncated or replaced). */
  reset(): void;
}

const NEWLINE = 0x0a;

/** Creates a splitter with nothing held back. */
export function createLineSplitter(): LineSplitter {
  let rest: Buffer = Buffer.alloc(0);
  return {
    push(chunk) {
      const buf = rest.length === 0 ? Buffer.from(chunk) : Buffer.concat([rest, chunk]);
      const lines: string[] = [];
      let start = 0;
      for (let i = buf.indexOf(NEWLINE); i !== -1; i = buf.indexOf(NEWLINE, start)) {
        lines.push(buf.subarray(start, i).toString('utf8'));
        start = i + 1;
      }
      rest = Buffer.from(buf.subarray(start));
      return lines;
    },
    pendingBytes: () => rest.length,
    reset() {
      rest = Buffer.alloc(0);
    },
  };
}
