/**
 * The shapes of cards, card sets, nonces and evidence (decision 0018, "Cards and card sets" and "Named
 * checks"), shared by cards.ts, checks.ts and evidence.ts, and read by the device endpoint (src/web).
 * Store shapes are camelCase; the JSON a device receives (`CardSet`, `Card`) is snake_case, as the API.
 */

import type { CheckResult, Risk } from '../../types.js';
import type { Lookalike } from '../lookalike.js';

/** A card's stage: a high-risk call needs a `first` yes, then a separately nonced `second` one. */
export type CardStage = 'first' | 'second';

/** One card as a device receives it in a card set. Times are ISO 8601 (UTC). */
export interface Card {
  /** 1-based place in the set ("the second one" is position 2). */
  position: number;
  call_id: string;
  tool: string;
  /** The one-line summary shown (hidden characters already escaped by the gate). */
  summary: string;
  /**
   * The full arguments, pretty-printed JSON with hidden characters escaped, as the approval page shows
   * them: a summary rounds and shortens (an amount, an IBAN), and the yes binds these exact arguments.
   */
  arguments: string;
  purpose: 'execute' | 'unlock' | 'definition';
  risk: Risk;
  risk_reason: string;
  diff?: string;
  args_sha256: string;
  /** The client's self-declared name: shown, never trusted. */
  client: string;
  lookalikes: Lookalike[];
  stage: CardStage;
  /** 32 hex: the one-time nonce a decision about this card must carry. */
  nonce: string;
  /** Past this, a decision about this card is refused (`not_expired`). */
  expires_at: string;
  /** When the call started waiting. */
  since: string;
}

/** A snapshot of one device's cards (`GET /device/api/cards`). */
export interface CardSet {
  /** `cs_` + 16 hex. */
  set_id: string;
  /** The earliest card expiry (or the set's own when it holds no card). */
  expires_at: string;
  cards: Card[];
}

/** One card of a set as the store keeps it (the nonce only as its SHA-256). */
export interface CardSetEntry {
  callId: string;
  argsSha256: string;
  stage: CardStage;
  nonceSha256: string;
  expiresAtMs: number;
  /** When this set first showed the card (ms since epoch). */
  shownAtMs: number;
  /** The card text shown, recorded in the evidence. */
  summary: string;
}

/** A card set as the store keeps it (kind `cardset`, key set id). */
export interface CardSetRecord {
  user: string;
  deviceId: string;
  cards: CardSetEntry[];
  createdAtMs: number;
  expiresAtMs: number;
  /** False once a decision was taken from it: positions shift, so a second decision must fetch a new set. */
  open: boolean;
}

/** A card's one-time nonce as the store keeps it (kind `card-nonce`, key = the nonce, TTL = the card's life). */
export interface CardNonceRecord {
  setId: string;
  callId: string;
  argsSha256: string;
  stage: CardStage;
  user: string;
}

/** A high-risk call after its first yes (kind `card-stage`, key call id, TTL until the second yes lapses). */
export interface CardStageRecord {
  stage: 'second';
  argsSha256: string;
  user: string;
  /** When the first yes was taken, and until when the second yes is accepted (ms since epoch). */
  firstYesAtMs: number;
  expiresAtMs: number;
  /** How the first yes was given, so the second stage's evidence (and the receipt) keeps both yeses. */
  first?: FirstYes;
}

/**
 * A high-risk call's first yes, carried into the evidence of its second: the method, what was heard and
 * the recording's fingerprint (voice), and when (ms since epoch).
 */
export interface FirstYes {
  method: 'tap' | 'voice';
  transcript?: string;
  audioSha256?: string;
  decidedAtMs: number;
}

/**
 * How a device decision was made. `wordsChoose` (voice only): whether the consent parser's reading of
 * the transcript picks exactly this card (cards.pickByWords).
 */
export interface DecideHow {
  method: 'tap' | 'voice';
  transcript?: string;
  audioSha256?: string;
  wordsChoose?: boolean;
}

/** A device's decision about one card (`POST /device/api/decide`). */
export interface DecideRequest {
  setId: string;
  callId: string;
  nonce: string;
  approve: boolean;
  how: DecideHow;
}

/**
 * The outcome of a device decision: `decided` (the pending call got the decision; `evidenceRef` names the
 * evidence), `second_needed` (a high-risk call's first yes: `cards` is a fresh set with its second-stage
 * card), or the first failed check with its reason and the HTTP status to answer (403 when the device is
 * not entitled, else 409). `checks` always lists every check run, in order.
 */
export type DeviceDecision =
  | { ok: true; status: 'decided'; approve: boolean; evidenceRef: string; checks: CheckResult[] }
  | { ok: true; status: 'second_needed'; checks: CheckResult[]; cards: CardSet }
  | { ok: false; failed: string; reason: string; checks: CheckResult[]; httpStatus: 403 | 409 };

/**
 * Everything a receipt needs of a device decision (kind `evidence`, key `ev_` + 16 hex). `expiresAtMs`
 * is the held call's deadline: past it the evidence runs nothing (`not_expired` before execution).
 */
export interface EvidenceRecord {
  ref: string;
  callId: string;
  argsSha256: string;
  setId: string;
  user: string;
  deviceId: string;
  deviceName: string;
  approve: boolean;
  stage: CardStage;
  method: 'tap' | 'voice';
  transcript?: string;
  audioSha256?: string;
  /** The card's summary, as shown. */
  cardText: string;
  shownAtMs: number;
  decidedAtMs: number;
  expiresAtMs: number;
  /** The decision-side checks, every one passed. */
  checks: CheckResult[];
  /** A second-stage decision's first yes (high risk): without it the first yes would be lost. */
  first?: FirstYes;
}
