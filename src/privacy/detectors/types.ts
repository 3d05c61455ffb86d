/**
 * Shapes shared by the detectors and detect.ts (kept apart so that detect.ts can import the detectors and
 * the detectors the shapes without an import cycle).
 */

/** One private value found in a text: [start, end) UTF-16 offsets into the text as given. */
export interface Finding {
  /** First UTF-16 code unit of the value, inclusive. */
  start: number;
  /** One past the last UTF-16 code unit of the value. */
  end: number;
  /** The placeholder label: 'IBAN', 'IBAN_INVALID', 'CARD', 'EMAIL', 'PHONE', 'SECRET', 'NAME' or a custom label. */
  label: string;
  /** Words for a person: 'IBAN (DE)', 'payment card number', 'GitHub token', … */
  detail: string;
}

/**
 * A finding before overlaps are resolved: `rank` breaks ties between candidates of equal length (lower wins:
 * a known credential shape is more specific than "the value behind a password key").
 */
export interface Candidate extends Finding {
  rank: number;
}

/** Tie-break ranks, most specific first. */
export const RANK = { shape: 0, iban: 1, card: 2, email: 3, phone: 4, keyed: 5, custom: 6, name: 7 } as const;
