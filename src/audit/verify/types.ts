/**
 * Shapes of the verifier's report and of the lines it reads. Pure types.
 */

/**
 * Kinds of tampering the verifier reports:
 * - edited: the signature does not match the line, and the next line does not link to it;
 * - encoding: the content is signed, but the bytes are not the canonical ones the gate wrote (JSON not
 *   RFC 8785, a signature or hash in another encoding, invalid UTF-8);
 * - forged: the line links into the chain but is not signed by the log's key;
 * - inserted: dropping the line heals the chain, or it repeats an entry number already seen;
 * - removed: an entry number is missing (reported at the line where it should have been);
 * - reordered: the first line of a run that is out of order;
 * - spliced: a validly signed line whose `prev` is not the hash of the line before (another log's entry
 *   under the same key, or a line put back from an older copy);
 * - truncated: the head records more entries than the log holds;
 * - head: the head's signature, Merkle root or chain hash does not match the log;
 * - key: no entry verifies with the configured public key (the log or head is signed by another key).
 */
export type ProblemKind = 'edited' | 'encoding' | 'forged' | 'inserted' | 'removed' | 'reordered' | 'spliced' | 'truncated' | 'head' | 'key';

/**
 * One finding. `line` is 1-based in the log (0 when it concerns a head file as a whole); `through`, when
 * present, is the last line of a run of lines with the same finding (reported once, as a range).
 */
export interface Problem {
  kind: ProblemKind;
  line: number;
  through?: number;
  message: string;
}

/** A head to check the log against: the note's text and where it came from (for messages). */
export interface HeadInput {
  label: string;
  note: string;
}

/**
 * Verdict: `intact` (exit 0), `tampered` (exit 2), `unproven` (no head to check the end against).
 * `entries` counts the log's whole lines. At most MAX_PROBLEMS problems are listed, first lines first;
 * `omitted` counts the rest.
 */
export interface VerifyReport {
  verdict: 'intact' | 'tampered' | 'unproven';
  entries: number;
  problems: Problem[];
  omitted: number;
  warnings: string[];
}

/** How many problems a report lists (after runs are merged into ranges); the rest are counted. */
export const MAX_PROBLEMS = 1000;

/**
 * One line of the log as read, or a run of consecutive lines that are not entries (not JSON objects, or
 * unsigned objects with no `prev`): those cannot link into the chain, and a run of them is one item, so
 * the verifier's state stays small however many such lines there are.
 */
export interface Item {
  /** 1-based line number (of the run's first line). */
  line: number;
  /** Lines this item stands for: 1, or the length of a run of lines that are not entries. */
  span: number;
  /** SHA-256 (hex) of the (last) line's bytes: what the next line's `prev` must be. */
  hash: string;
  /** The line is a JSON object (for a run: every line is; false: none is; undefined: some are). */
  object: boolean | undefined;
  /** Every line of the run is empty. */
  empty?: boolean;
  /** The entry's content verifies under the key (whatever its encoding). */
  signed: boolean;
  /** Signed, and the bytes are exactly the canonical ones the gate writes. */
  sigOk: boolean;
  /** Why the bytes are not canonical, when they are not. */
  flaw?: string;
  seq: number | undefined;
  prev: string | undefined;
  /** The problem found at this line, once classified. */
  kind?: ProblemKind;
}
