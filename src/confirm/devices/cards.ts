/**
 * Cards on paired devices (decision 0018, "Cards and card sets" and "Named checks"): a held call shown on
 * channel `device` is a card on every active device of its user; a device fetches a card set (`issue`)
 * and decides one card of it (`decide`), by tap or by voice (`pickByWords`, `decideByWords`).
 *
 * Store kinds: `cardset` (set id → CardSetRecord), `card-nonce` (nonce → CardNonceRecord, TTL = the card's
 * life), `card-stage` (call id → a high-risk call's second stage), and two of this module's own:
 * `cardset-of` (device id → its latest set id, for the reuse rule) and `cardset-nonces` (set id → the set's
 * nonces in card order, so that a voice decision, which names only the set, can carry the picked card's
 * nonce). The store holds plain nonces already as `card-nonce` keys, so these add no exposure.
 *
 * Security posture: every decision-side check is run and recorded, even after one fails, and a decision
 * with a failed check changes nothing: the checks first only read, then the set is closed by
 * compare-and-set (of two decisions from one set exactly one goes on) and the nonce consumed once
 * (atomic in every store). Only then is evidence written and the pending call decided. A store that
 * cannot be read fails the check that needed it.
 *
 * Over 300 lines on purpose: issue and decide share the set, nonce and stage bookkeeping, and the order of
 * a decision (read-only checks, close the set, spend the nonce, then evidence) reads best as one sequence.
 *
 * Over 400 lines: issuing a set and deciding from it share the set's records, nonces and stages, and the
 * order of their reads and writes is the security argument; its answers' shapes are in card-answers.ts.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type Clock, systemClock } from '../../clock.js';
import type { Store } from '../../store/store.js';
import type { CheckResult, Decider } from '../../types.js';
import type { PendingApprovals, PendingView } from '../pending.js';
import { refused, render } from './card-answers.js';
import type {
  CardNonceRecord,
  CardSet,
  CardSetEntry,
  CardSetRecord,
  CardStage,
  CardStageRecord,
  DecideHow,
  DecideRequest,
  DeviceDecision,
  FirstYes,
} from './card-types.js';
import {
  actionUnchangedCheck,
  cardSetOpenCheck,
  devicePairedCheck,
  firstFailed,
  nonceConsumedOnceCheck,
  notExpiredCheck,
  wordsChooseCardCheck,
} from './checks.js';
import type { Consent } from './consent.js';
import { EvidenceStore } from './evidence.js';
import type { DeviceRecord, DeviceRegistry } from './registry.js';

/** How long a card is valid (ms), never past its call's deadline. */
export const CARD_MS = 120_000;
/** How long a high-risk call's second yes is accepted after its first (ms), never past the deadline. */
export const SECOND_MS = 60_000;
/** A poll gets the same open set back while more than this is left of it (ms). */
export const REUSE_MIN_LEFT_MS = 30_000;
/** How long a set's record outlives its last card (ms), so a late decision is told "expired", not "unknown". */
const SET_GRACE_MS = 60_000;

/** Store kind of card sets (set id → CardSetRecord). */
export const CARDSET_KIND = 'cardset';
/** Store kind of card nonces (nonce → CardNonceRecord), consumed once by a decision. */
export const CARD_NONCE_KIND = 'card-nonce';
/** Store kind of a high-risk call's second stage (call id → CardStageRecord). */
export const CARD_STAGE_KIND = 'card-stage';
/** Store kind of each device's latest set (device id → `{ setId }`), for the reuse rule. */
export const CARDSET_OF_KIND = 'cardset-of';
/** Store kind of each set's nonces in card order (set id → `{ nonces }`), for voice decisions and reuse. */
export const CARDSET_NONCES_KIND = 'cardset-nonces';

/** The consent parser's reading of spoken words (consent.ts): re-exported for the device endpoint. */
export type { Consent } from './consent.js';

/** Which card spoken words choose in a set, and which way; or why they choose none. */
export type WordsPick = { ok: true; position: number; callId: string; approve: boolean; nonce: string } | { ok: false; reason: string };

/** What `Cards` needs. */
export interface CardsOptions {
  store: Store;
  pending: PendingApprovals;
  registry: DeviceRegistry;
  /** The user of a held call that names none (`confirm.device.default_user`). */
  defaultUser: string;
  clock?: Clock;
  /** Where evidence goes (default: an EvidenceStore on `store`). */
  evidence?: EvidenceStore;
}

const SET_ID = /^cs_[0-9a-f]{16}$/;
const NONCE = /^[0-9a-f]{32}$/;
const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

function isSetRecord(v: unknown): v is CardSetRecord {
  const s = v as Partial<CardSetRecord> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.deviceId === 'string' &&
    typeof s.open === 'boolean' &&
    Array.isArray(s.cards) &&
    typeof s.expiresAtMs === 'number'
  );
}

/** A card to show, before it has a set: its view, stage and expiry. */
interface Planned {
  view: PendingView;
  stage: CardStage;
  expiresAtMs: number;
}

/** Issues card sets to devices and takes their decisions. */
export class Cards {
  /** The evidence records decisions write (and the pipeline reads before execution). */
  readonly evidence: EvidenceStore;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly pending: PendingApprovals;
  private readonly registry: DeviceRegistry;
  private readonly defaultUser: string;

  /** @param opts the shared store, the pending queue, the device registry, the default user, the clock. */
  constructor(opts: CardsOptions) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
    this.pending = opts.pending;
    this.registry = opts.registry;
    this.defaultUser = opts.defaultUser;
    this.evidence = opts.evidence ?? new EvidenceStore({ store: opts.store, clock: this.clock });
  }

  /**
   * The device's card set: every waiting call shown on channel `device` whose user is the device's, oldest
   * first. The same cards in the same stages give back the same open set while more than 30 s of it are
   * left, or while a new set would not live longer; otherwise a new set with new nonces is minted. The caller has verified the request
   * (verifyDeviceRequest).
   * @throws StoreError when the store cannot be read or written (answer 503; nothing was issued).
   */
  async issue(device: DeviceRecord): Promise<CardSet> {
    const now = this.clock.nowMs();
    const planned = await this.plan(device, now);
    const reused = await this.reusable(device, planned, now);
    if (reused) return reused;
    const setId = `cs_${randomBytes(8).toString('hex')}`;
    const nonces = planned.map(() => randomBytes(16).toString('hex'));
    const cards: CardSetEntry[] = planned.map((p, i) => ({
      callId: p.view.callId,
      argsSha256: p.view.argsSha256,
      stage: p.stage,
      nonceSha256: sha256(nonces[i] as string),
      expiresAtMs: p.expiresAtMs,
      shownAtMs: now,
      summary: p.view.summary,
    }));
    const expiresAtMs = cards.length ? Math.min(...cards.map((c) => c.expiresAtMs)) : now + CARD_MS;
    const keepMs = Math.max(expiresAtMs, ...cards.map((c) => c.expiresAtMs)) - now + SET_GRACE_MS;
    await Promise.all(
      cards.map((c, i) =>
        this.store.put<CardNonceRecord>(
          CARD_NONCE_KIND,
          nonces[i] as string,
          { setId, callId: c.callId, argsSha256: c.argsSha256, stage: c.stage, user: device.user },
          { ttlMs: c.expiresAtMs - now },
        ),
      ),
    );
    const record: CardSetRecord = { user: device.user, deviceId: device.id, cards, createdAtMs: now, expiresAtMs, open: true };
    await this.store.put(CARDSET_KIND, setId, record, { ttlMs: keepMs });
    await this.store.put(CARDSET_NONCES_KIND, setId, { nonces }, { ttlMs: keepMs });
    await this.store.put(CARDSET_OF_KIND, device.id, { setId }, { ttlMs: expiresAtMs - now });
    return render(
      setId,
      record,
      nonces,
      planned.map((p) => p.view),
    );
  }

  /** The cards the device should see now, with their stage and expiry. */
  private async plan(device: DeviceRecord, now: number): Promise<Planned[]> {
    const views = this.pending.list().filter((v) => v.channels.includes('device') && (v.user ?? this.defaultUser) === device.user && v.deadlineMs > now);
    const out: Planned[] = [];
    for (const view of views) {
      const s = (await this.store.get<CardStageRecord>(CARD_STAGE_KIND, view.callId))?.value;
      const second = view.risk === 'high' && s?.stage === 'second' && s.argsSha256 === view.argsSha256 && s.user === device.user;
      const expiresAtMs = second ? Math.min(s.expiresAtMs, view.deadlineMs) : Math.min(now + CARD_MS, view.deadlineMs);
      if (expiresAtMs > now) out.push({ view, stage: second ? 'second' : 'first', expiresAtMs });
    }
    return out;
  }

  /**
   * The device's latest set, when it is open, unexpired, shows exactly these cards in these stages, and
   * either has > 30 s left or a new set would not live longer (its cards end at their call's deadline or
   * at a second stage's end). Without the second case, every poll in a card's last 30 s minted a new set
   * with new nonces and store records: as many as the device polled.
   */
  private async reusable(device: DeviceRecord, planned: Planned[], now: number): Promise<CardSet | undefined> {
    const setId = (await this.store.get<{ setId?: unknown }>(CARDSET_OF_KIND, device.id))?.value.setId;
    if (typeof setId !== 'string' || !SET_ID.test(setId)) return undefined;
    const set = (await this.store.get<unknown>(CARDSET_KIND, setId))?.value;
    const nonces = (await this.store.get<{ nonces?: unknown }>(CARDSET_NONCES_KIND, setId))?.value.nonces;
    if (!isSetRecord(set) || !set.open || set.deviceId !== device.id || set.expiresAtMs <= now) return undefined;
    const freshExpiresAtMs = planned.length ? Math.min(...planned.map((p) => p.expiresAtMs)) : now + CARD_MS;
    if (set.expiresAtMs - now <= REUSE_MIN_LEFT_MS && freshExpiresAtMs > set.expiresAtMs) return undefined;
    if (!Array.isArray(nonces) || nonces.length !== set.cards.length || set.cards.length !== planned.length) return undefined;
    const same = set.cards.every((c, i) => {
      const p = planned[i] as Planned;
      return c.callId === p.view.callId && c.argsSha256 === p.view.argsSha256 && c.stage === p.stage;
    });
    return same
      ? render(
          setId,
          set,
          nonces as string[],
          planned.map((p) => p.view),
        )
      : undefined;
  }

  /**
   * Decides one card: runs every decision-side check (device_paired, card_set_open, not_expired,
   * words_choose_card, action_unchanged, nonce_consumed_once) and, only when all pass, either moves a
   * high-risk card to its second stage (`second_needed`, with a fresh set) or writes the evidence and
   * decides the pending call. A decision closes its card set. Never throws.
   */
  async decide(device: DeviceRecord, req: DecideRequest): Promise<DeviceDecision> {
    const now = this.clock.nowMs();
    const { setId, callId, nonce } = req;
    const approve = req.approve === true;
    // Whatever the endpoint parsed, `how` is one of the two methods from here on.
    const h = req.how;
    const how: DecideHow = {
      method: h?.method === 'voice' ? 'voice' : 'tap',
      ...(typeof h?.transcript === 'string' ? { transcript: h.transcript.slice(0, 2000) } : {}),
      ...(typeof h?.audioSha256 === 'string' && /^[0-9a-f]{64}$/.test(h.audioSha256) ? { audioSha256: h.audioSha256 } : {}),
      wordsChoose: h?.wordsChoose === true,
    };
    const safe = async <T>(f: () => Promise<T>): Promise<T | undefined> => f().catch(() => undefined);
    const current = await safe(() => this.registry.get(device.id));
    const view = typeof callId === 'string' && callId.length > 0 ? this.pending.get(callId) : undefined;
    const setRec = typeof setId === 'string' && SET_ID.test(setId) ? await safe(() => this.store.get<unknown>(CARDSET_KIND, setId)) : undefined;
    const set = setRec && isSetRecord(setRec.value) ? setRec.value : undefined;
    const entry = set?.cards.find((c) => c.callId === callId);
    const goodNonce = typeof nonce === 'string' && NONCE.test(nonce) && entry !== undefined && sha256(nonce) === entry.nonceSha256;
    const nonceRec = goodNonce ? (await safe(() => this.store.get<CardNonceRecord>(CARD_NONCE_KIND, nonce)))?.value : undefined;
    const expected = { setId, callId, argsSha256: entry?.argsSha256 ?? '', stage: entry?.stage ?? ('first' as CardStage), user: device.user };
    // A call no longer waiting has no user to compare; action_unchanged says it is gone.
    const callUser = view ? (view.user ?? this.defaultUser) : (current?.user ?? device.user);
    const checks: CheckResult[] = [
      devicePairedCheck(current?.id === device.id ? current : undefined, callUser),
      cardSetOpenCheck(set, device.id),
      notExpiredCheck(entry?.expiresAtMs, now),
      wordsChooseCardCheck(how.method, entry !== undefined, how.wordsChoose),
      actionUnchangedCheck(entry?.argsSha256, view?.argsSha256),
    ];
    // Only a nonce that a consume would accept goes on to the commit: a wrong one must not close the set.
    const consumable = nonceRec !== undefined && nonceConsumedOnceCheck(nonceRec, expected, true).ok;
    if (firstFailed(checks) || !consumable || !set || !setRec || !entry || !view || !current) {
      checks.push(nonceConsumedOnceCheck(nonceRec, expected, false));
      return refused(checks);
    }
    // Commit: close the set (one decision per set), then spend the nonce (once, in every store).
    const closed = await safe(() =>
      this.store.compareAndSet<CardSetRecord>(
        CARDSET_KIND,
        setId,
        setRec.version,
        { ...set, open: false },
        { ttlMs: Math.max(1, (setRec.expiresAtMs ?? now + SET_GRACE_MS) - now) },
      ),
    );
    if (!closed) {
      checks[1] = { name: 'card_set_open', ok: false, detail: 'another decision closed this card set just now: fetch the cards again' };
      checks.push(nonceConsumedOnceCheck(nonceRec, expected, false));
      return refused(checks);
    }
    const consumed = goodNonce ? (await safe(() => this.store.consumeOnce<CardNonceRecord>(CARD_NONCE_KIND, nonce)))?.value : undefined;
    checks.push(nonceConsumedOnceCheck(consumed, expected, consumed !== undefined));
    if (firstFailed(checks)) return refused(checks);
    if (approve && entry.stage === 'first' && view.risk === 'high') return this.toSecondStage(device, view, how, checks, now);
    const first = entry.stage === 'second' ? await this.firstYes(view.callId, entry.argsSha256, device.user) : undefined;
    return this.record(current, { setId, entry, view, approve, how, checks, now, first });
  }

  /**
   * A high-risk call's first yes: its card moves to stage `second` (new nonce, 60 s) in a fresh set. The
   * yes itself (method, words, recording hash, time) is kept with the stage for the second's evidence.
   */
  private async toSecondStage(device: DeviceRecord, view: PendingView, how: DecideHow, checks: CheckResult[], now: number): Promise<DeviceDecision> {
    const expiresAtMs = Math.min(now + SECOND_MS, view.deadlineMs);
    const first: FirstYes = {
      method: how.method,
      ...(how.transcript !== undefined ? { transcript: how.transcript } : {}),
      ...(how.audioSha256 !== undefined ? { audioSha256: how.audioSha256 } : {}),
      decidedAtMs: now,
    };
    const stage: CardStageRecord = { stage: 'second', argsSha256: view.argsSha256, user: device.user, firstYesAtMs: now, expiresAtMs, first };
    try {
      await this.store.put(CARD_STAGE_KIND, view.callId, stage, { ttlMs: Math.max(1, expiresAtMs - now) });
      return { ok: true, status: 'second_needed', checks, cards: await this.issue(device) };
    } catch {
      return refused([...checks, { name: 'card_set_open', ok: false, detail: 'the second stage could not be recorded in the shared state store: try again' }]);
    }
  }

  /**
   * The first yes kept with a call's second stage, when the stage is this call's (same arguments, same
   * user). A store that cannot be read gives none: the second yes still stands on its own checks.
   */
  private async firstYes(callId: string, argsSha256: string, user: string): Promise<FirstYes | undefined> {
    const s = (await this.store.get<CardStageRecord>(CARD_STAGE_KIND, callId).catch(() => undefined))?.value;
    const f = s?.stage === 'second' && s.argsSha256 === argsSha256 && s.user === user ? s.first : undefined;
    if (!f || (f.method !== 'tap' && f.method !== 'voice') || typeof f.decidedAtMs !== 'number') return undefined;
    return {
      method: f.method,
      ...(typeof f.transcript === 'string' ? { transcript: f.transcript } : {}),
      ...(typeof f.audioSha256 === 'string' ? { audioSha256: f.audioSha256 } : {}),
      decidedAtMs: f.decidedAtMs,
    };
  }

  /** Writes the evidence of a passing decision and gives it to the pending call. */
  private async record(
    device: DeviceRecord,
    d: {
      setId: string;
      entry: CardSetEntry;
      view: PendingView;
      approve: boolean;
      how: DecideHow;
      checks: CheckResult[];
      now: number;
      first?: FirstYes;
    },
  ): Promise<DeviceDecision> {
    const { view, entry, how, checks } = d;
    const first = d.first ? { first: d.first } : {};
    const method = how.method === 'voice' ? 'voice' : 'tap';
    let ref: string;
    try {
      const ev = await this.evidence.write({
        callId: view.callId,
        argsSha256: entry.argsSha256,
        setId: d.setId,
        user: device.user,
        deviceId: device.id,
        deviceName: device.name,
        approve: d.approve,
        stage: entry.stage,
        method,
        ...(how.transcript !== undefined ? { transcript: how.transcript } : {}),
        ...(how.audioSha256 !== undefined ? { audioSha256: how.audioSha256 } : {}),
        cardText: entry.summary,
        shownAtMs: entry.shownAtMs,
        decidedAtMs: d.now,
        expiresAtMs: view.deadlineMs,
        checks,
        ...first,
      });
      ref = ev.ref;
    } catch {
      return refused([
        ...checks.filter((c) => c.name !== 'nonce_consumed_once'),
        { name: 'nonce_consumed_once', ok: false, detail: 'the evidence could not be written: nothing was decided; fetch the cards and decide again' },
      ]);
    }
    const who: Decider = {
      channel: 'device',
      actor: `device:${device.user}/${device.name}`,
      trust: 'device-key',
      evidence: {
        ref,
        method,
        user: device.user,
        device: device.id,
        cardSet: d.setId,
        ...(how.transcript !== undefined ? { transcript: how.transcript } : {}),
        ...(how.audioSha256 !== undefined ? { audioSha256: how.audioSha256 } : {}),
        cardText: entry.summary,
        shownAtMs: entry.shownAtMs,
        decidedAtMs: d.now,
        checks,
        ...first,
      },
    };
    const result = await this.pending
      .decide(view.callId, entry.argsSha256, d.approve, who)
      .catch((): { ok: false; reason: string } => ({ ok: false, reason: 'the decision could not be recorded' }));
    if (!result.ok) return refused(checks.map((c) => (c.name === 'action_unchanged' ? { name: c.name, ok: false, detail: result.reason } : c)));
    await this.store.delete(CARD_STAGE_KIND, view.callId).catch(() => false);
    return { ok: true, status: 'decided', approve: d.approve, evidenceRef: ref, checks };
  }

  /**
   * Which card spoken words choose in a set: `pick` → that position, approve; `confirm` → the final
   * card, approve; `cancel` → the final card, deny; `refuse` (or a position not in the set) → none.
   * Never throws: an unreadable set chooses none.
   */
  async pickByWords(setId: string, consent: Consent): Promise<WordsPick> {
    if (consent.kind === 'refuse') return { ok: false, reason: `the words decide nothing: ${consent.reason}` };
    if (typeof setId !== 'string' || !SET_ID.test(setId)) return { ok: false, reason: 'no such card set' };
    const [set, nonces] = await Promise.all([
      this.store.get<unknown>(CARDSET_KIND, setId).then(
        (r) => r?.value,
        () => undefined,
      ),
      this.store.get<{ nonces?: unknown }>(CARDSET_NONCES_KIND, setId).then(
        (r) => r?.value.nonces,
        () => undefined,
      ),
    ]);
    if (!isSetRecord(set) || !Array.isArray(nonces) || nonces.length !== set.cards.length)
      return { ok: false, reason: 'no such card set (expired or never issued)' };
    const n = set.cards.length;
    if (n === 0) return { ok: false, reason: 'the card set holds no card' };
    const position = consent.kind === 'pick' ? consent.position : n;
    if (!Number.isInteger(position) || position < 1 || position > n) return { ok: false, reason: `there is no card ${position}: the set holds ${n}` };
    const card = set.cards[position - 1] as CardSetEntry;
    return { ok: true, position, callId: card.callId, approve: consent.kind !== 'cancel', nonce: String(nonces[position - 1]) };
  }

  /**
   * A voice decision: the card the words choose (pickByWords), decided with `method: 'voice'`. Words that
   * choose no card still run every check and fail `words_choose_card`. Never throws.
   */
  async decideByWords(device: DeviceRecord, setId: string, consent: Consent, heard: { transcript?: string; audioSha256?: string }): Promise<DeviceDecision> {
    const pick = await this.pickByWords(setId, consent);
    const how: DecideHow = { method: 'voice', ...heard, wordsChoose: pick.ok };
    if (pick.ok) return this.decide(device, { setId, callId: pick.callId, nonce: pick.nonce, approve: pick.approve, how });
    const d = await this.decide(device, { setId, callId: '', nonce: '', approve: false, how });
    const checks = d.checks.map((c) => (c.name === 'words_choose_card' ? { name: c.name, ok: false, detail: pick.reason } : c));
    return { ok: false, failed: 'words_choose_card', reason: pick.reason, checks, httpStatus: 409 };
  }
}
