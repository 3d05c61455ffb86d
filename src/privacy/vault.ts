/**
 * The placeholder vault: which real value each placeholder stands for, in the store, bound to the
 * principal and the MCP session it was issued to, with an expiry (`privacy.ttl_seconds`).
 *
 * Ids are random (128 bits from `randomBytes`), never a hash of the value: a placeholder says nothing
 * about what it hides. An id is a batch part (64 bits, one per masked message) and a value part (64 bits),
 * so that one masked message costs one store write, however many values it hid; the record of a batch
 * holds its values by value part.
 *
 * Equality: the same value seen twice in one session gets the same placeholder. The session remembers
 * its own (at most {@link MAX_REMEMBERED} values, oldest forgotten first); a session that several
 * replicas serve (a 2026-07-28 HTTP session: `shared`) also keeps a reverse index in the store, keyed by
 * an HMAC of the value under a key the store keeps, so another replica issues the same placeholder.
 *
 * Security posture: the store holds the real values (it is trusted like the gate's memory: threat model);
 * resolving checks principal and session, and an id another session was given is as unknown as a made-up
 * one. Anything that cannot be read (store down, a record of the wrong shape) refuses the call.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { type Store, StoreError } from '../store/store.js';
import type { Finding } from './detect.js';
import type { Issuer } from './mask.js';

/** Most values one session remembers for equality before it forgets the oldest (the store still has them). */
export const MAX_REMEMBERED = 10_000;

/** Most values in one batch record: a resolver reads (and checks) the whole record. */
export const MAX_BATCH = 1000;

/**
 * Most values a session masks wherever they appear, detected or not (the recall set), most recent first
 * kept: a scan costs about 60 ms per 5 MB at this size (measured in bench/privacy-read.ts's run).
 */
export const MAX_RECALLED = 1000;
/** Shortest value recalled anywhere (shorter ones, unless sent by a call, would mask ordinary words). */
export const MIN_RECALLED = 6;
/** Shortest value recalled after a call sent it (it may come back glued to anything). */
export const MIN_RECALLED_SENT = 3;

/** Store kinds. */
const BATCH = 'placeholder';
const REVERSE = 'placeholder-of';
const MISSES = 'placeholder-misses';

/** One hidden value in a batch record. */
interface Hidden {
  label: string;
  detail: string;
  v: string;
}

/** A batch record: whose it is, and its values by the id's value part. */
interface Batch {
  p: string;
  s: string;
  values: Record<string, Hidden>;
}

/** A placeholder the vault resolved: its id and kind (never its value). */
export interface ResolvedPlaceholder {
  id: string;
  label: string;
  detail: string;
}

/** What a session's vault needs. */
export interface VaultOptions {
  store: Store;
  /** How long a placeholder stays resolvable (ms). */
  ttlMs: number;
  /** Who authenticated (`stdio`, `loopback`, `token:<digest>`). */
  principal: string;
  /** The MCP session: random per connection, or a 2026-07-28 session key that several replicas share. */
  session: string;
  /** Several replicas may serve this session: keep the reverse index in the store. */
  shared: boolean;
  /** HMAC key of the reverse index (the store's `secret/placeholder-index`). */
  indexKey: Buffer;
  /** When a placeholder was issued: one is reused only while it has at least half its life left. */
  clock: Clock;
}

/** One session's placeholders. Not safe to mask two messages of one session at once: the gateway awaits each. */
export class PlaceholderVault implements Issuer {
  /** value → placeholder text and the half-life period it was issued in, oldest first. */
  private readonly byValue = new Map<string, { placeholder: string; period: number }>();
  /** Values masked wherever they appear (what the detectors found, and what calls sent), oldest first. */
  private readonly recalled = new Map<string, { label: string; detail: string }>();
  /**
   * The recall set as one pattern. Rebuilt only by {@link refreshRecall} (once per masked message, and
   * once more when the message hid new values), never per string: a list of 2,000 new e-mails in
   * separate strings would otherwise rebuild it 2,000 times.
   */
  private recallPattern: RegExp | null = null;
  /** The recall set changed since the pattern was built. */
  private recallChanged = false;

  /** Issued since the last flush, by batch: value part → hidden value (with its placeholder, for the reverse index). */
  private batches: { id: string; values: Map<string, Hidden & { placeholder: string }> }[] = [];

  constructor(private readonly opts: VaultOptions) {}

  /** The placeholder for a value: the one this session has, or a new one (written by the next flush). */
  issue(value: string, finding: Finding): string {
    const period = this.period();
    const known = this.byValue.get(value);
    // Reused within one half of the placeholder's life, so that what a message shows stays resolvable
    // for at least half of privacy.ttl_seconds; later, the value gets a fresh placeholder.
    if (known !== undefined && known.period === period) return known.placeholder;
    let batch = this.batches.at(-1);
    if (!batch || batch.values.size >= MAX_BATCH) {
      batch = { id: randomBytes(8).toString('hex'), values: new Map() };
      this.batches.push(batch);
    }
    const part = randomBytes(8).toString('hex');
    const placeholder = `[[${finding.label}_${batch.id}${part}]]`;
    batch.values.set(part, { label: finding.label, detail: finding.detail, v: value, placeholder });
    this.remember(value, placeholder, period);
    if (value.length >= MIN_RECALLED) this.recall(value, finding.label, finding.detail);
    return placeholder;
  }

  /**
   * Writes the placeholders issued since the last flush (one record), before the message that carries
   * them leaves the gate.
   * @returns placeholders to replace in that message (a shared session's other replica had issued one for
   *   the same value first), or undefined.
   * @throws StoreError when the store cannot be written: the message must not be sent.
   */
  async flush(): Promise<Map<string, string> | undefined> {
    const batches = this.batches;
    this.batches = [];
    let swaps: Map<string, string> | undefined;
    try {
      for (const batch of batches) swaps = await this.write(batch, swaps);
    } catch (err) {
      // Never stored, so never resolvable: forget them, or the next message would reuse them.
      for (const batch of batches) for (const h of batch.values.values()) if (this.byValue.get(h.v)?.placeholder === h.placeholder) this.byValue.delete(h.v);
      throw err;
    }
    return swaps;
  }

  /** Writes one batch record (after the reverse index, for a shared session); adds to `swaps`. */
  private async write(
    batch: { id: string; values: Map<string, Hidden & { placeholder: string }> },
    swaps: Map<string, string> | undefined,
  ): Promise<Map<string, string> | undefined> {
    const values: Record<string, Hidden> = {};
    for (const [part, h] of batch.values) {
      if (this.opts.shared) {
        // Keyed by the half-life period too: replicas agree within one, and a later one starts afresh.
        const digest = createHmac('sha256', this.opts.indexKey).update(h.v).digest('base64url');
        const key = `${this.opts.session}:${this.period()}:${digest}`;
        const mine = h.placeholder.slice(2, -2);
        const created = await this.opts.store.putIfAbsent(REVERSE, key, mine, { ttlMs: this.opts.ttlMs });
        if (!created) {
          const theirs = (await this.opts.store.get<unknown>(REVERSE, key))?.value;
          if (typeof theirs === 'string' && theirs !== mine) {
            const other = `[[${theirs}]]`;
            swaps ??= new Map();
            swaps.set(h.placeholder.slice(-34, -2), other);
            this.remember(h.v, other, this.period());
            continue;
          }
        }
      }
      values[part] = { label: h.label, detail: h.detail, v: h.v };
    }
    if (Object.keys(values).length > 0)
      await this.opts.store.put<Batch>(BATCH, batch.id, { p: this.opts.principal, s: this.opts.session, values }, { ttlMs: this.opts.ttlMs });
    return swaps;
  }

  /**
   * Looks up placeholder ids for this session.
   * @returns the values of those this session was given and that are still live, and the ids that are
   *   not (made up, expired, or another session's: all alike, so a probe learns nothing).
   * @throws StoreError when the store cannot be read.
   */
  async resolve(ids: Iterable<string>): Promise<{ values: Map<string, string>; found: ResolvedPlaceholder[]; unknown: string[] }> {
    const values = new Map<string, string>();
    const found: ResolvedPlaceholder[] = [];
    const unknown: string[] = [];
    const batches = new Map<string, Batch | undefined>();
    for (const id of ids) {
      const b = id.slice(0, 16);
      if (!batches.has(b)) batches.set(b, this.ownBatch((await this.opts.store.get<unknown>(BATCH, b))?.value));
      const hidden = batches.get(b)?.values[id.slice(16)];
      if (!hidden) {
        unknown.push(id);
        continue;
      }
      values.set(id, hidden.v);
      found.push({ id, label: hidden.label, detail: hidden.detail });
    }
    return { values, found, unknown };
  }

  /**
   * Values a call is about to send in place of this session's placeholders: an upstream may echo them
   * back glued to other text (an error naming a path, a file read back), where no detector sees them.
   */
  recallSent(resolved: readonly { value: string; label: string; detail: string }[]): void {
    for (const r of resolved) if (r.value.length >= MIN_RECALLED_SENT) this.recall(r.value, r.label, r.detail);
  }

  /**
   * Finds the recalled values in a text as findings (longest first at each place), never inside a
   * placeholder (`placeholders` is asked only once a value is found); an empty list when none is there.
   */
  findRecalled(text: string, placeholders: () => readonly { start: number; end: number }[]): Finding[] {
    const re = this.recallPattern;
    if (!re) return [];
    const out: Finding[] = [];
    let spans: readonly { start: number; end: number }[] | undefined;
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const start = m.index;
      const end = start + m[0].length;
      spans ??= placeholders();
      if (spans.some((p) => start < p.end && end > p.start)) continue;
      const k = this.recalled.get(m[0]);
      if (k) out.push({ start, end, label: k.label, detail: k.detail });
    }
    return out;
  }

  /** Unknown placeholders this session has sent so far (its count in the store, shared by replicas). */
  async misses(): Promise<number> {
    const n = (await this.opts.store.get<unknown>(MISSES, this.missKey()))?.value;
    return typeof n === 'number' && Number.isFinite(n) ? n : 0;
  }

  /**
   * Adds unknown placeholders to the session's count.
   * @returns the new count.
   * @throws StoreError when the store cannot be written (the call is refused either way).
   */
  async addMisses(n: number): Promise<number> {
    for (let tries = 0; tries < 8; tries++) {
      const rec = await this.opts.store.get<unknown>(MISSES, this.missKey());
      const was = typeof rec?.value === 'number' ? rec.value : 0;
      if (await this.opts.store.compareAndSet(MISSES, this.missKey(), rec?.version ?? 0, was + n, { ttlMs: this.opts.ttlMs })) return was + n;
    }
    // Contended past reason: count it as locked rather than lose the misses.
    return Number.MAX_SAFE_INTEGER;
  }

  private missKey(): string {
    return `${this.opts.principal}\u0001${this.opts.session}`.replace(/\u0000/g, '');
  }

  /** A batch record this session owns, or undefined (another's, or not of the expected shape). */
  private ownBatch(value: unknown): Batch | undefined {
    if (typeof value !== 'object' || value === null) return undefined;
    const b = value as Partial<Batch>;
    if (b.p !== this.opts.principal || b.s !== this.opts.session || typeof b.values !== 'object' || b.values === null) return undefined;
    for (const h of Object.values(b.values)) if (typeof h?.v !== 'string' || typeof h.label !== 'string') return undefined;
    return b as Batch;
  }

  /**
   * Rebuilds the recall pattern when the set changed.
   * @returns whether it changed (the caller then scans what it masked once more, for values it just hid).
   */
  refreshRecall(): boolean {
    if (!this.recallChanged) return false;
    this.recallChanged = false;
    const values = [...this.recalled.keys()].sort((a, b) => b.length - a.length);
    this.recallPattern = values.length === 0 ? null : new RegExp(values.map(escapeRegExp).join('|'), 'g');
    return true;
  }

  private recall(value: string, label: string, detail: string): void {
    if (this.recalled.has(value)) this.recalled.delete(value);
    else this.recallChanged = true;
    this.recalled.set(value, { label, detail });
    if (this.recalled.size > MAX_RECALLED) {
      this.recalled.delete(this.recalled.keys().next().value as string);
      this.recallChanged = true;
    }
  }

  /** The half-life period now: placeholders issued in one are reused only within it. */
  private period(): number {
    return Math.floor(this.opts.clock.nowMs() / Math.max(1, this.opts.ttlMs / 2));
  }

  private remember(value: string, placeholder: string, period: number): void {
    this.byValue.delete(value);
    this.byValue.set(value, { placeholder, period });
    if (this.byValue.size > MAX_REMEMBERED) this.byValue.delete(this.byValue.keys().next().value as string);
  }
}

/**
 * The HMAC key of the reverse index, shared by every replica through the store (created by the first).
 * @throws StoreError when the store cannot be read or written, or holds a key of the wrong shape.
 */
export async function indexKeyOf(store: Store): Promise<Buffer> {
  await store.putIfAbsent('secret', 'placeholder-index', randomBytes(32).toString('base64'));
  const v = (await store.get<unknown>('secret', 'placeholder-index'))?.value;
  const key = typeof v === 'string' ? Buffer.from(v, 'base64') : undefined;
  if (!key || key.length < 32)
    throw new StoreError('STORE_CORRUPT', "the store's secret/placeholder-index is not 32 bytes of base64: delete that record and restart the gates");
  return key;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
