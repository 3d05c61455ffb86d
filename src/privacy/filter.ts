/**
 * The privacy filter as the gateway uses it: one `PrivacyFilter` per gate (its detectors, compiled once,
 * and the store), one `PrivacySession` per client session (its placeholders).
 *
 * Upstream → client: every message the client can read is masked (`mask`) and its new placeholders are
 * in the store before it leaves. Client → upstream: placeholders in arguments are resolved (`resolve`)
 * only when this session was given them; an unknown one refuses the call, and after
 * {@link MAX_MISSES} unknown placeholders the session can resolve none.
 *
 * Security posture: fail closed. A store that cannot be written means the message is not sent (the
 * caller answers with an error); one that cannot be read means the call is refused.
 */
import { type Clock, systemClock } from '../clock.js';
import type { Store } from '../store/store.js';
import { compileDetector, type Detector, type Finding } from './detect.js';
import { findPlaceholders, type Issuer, maskJson, maskText, placeholderIdsIn, restoreJson } from './mask.js';
import { getIn, relaxToolSchemas, schemaRoots, setIn, unmaskedPaths, withholdBinary } from './mcp.js';
import { indexKeyOf, PlaceholderVault, type ResolvedPlaceholder } from './vault.js';

/**
 * Whether real values go back into a call to an upstream: `always`; `ask` (resolved, and a person decides
 * first); `never` (the placeholder text goes). The config's `upstreams.<name>.privacy.resolve`.
 */
export type ResolveMode = 'always' | 'ask' | 'never';

/** The filter's settings (config/load.ts `PrivacyConfig` has this shape). */
export interface PrivacyOptions {
  /** How long a placeholder stays resolvable (ms). */
  ttlMs: number;
  /** Names to mask (whole words, any case). */
  names: readonly string[];
  /** Custom patterns: a label and a JavaScript regular expression source. */
  patterns: readonly { label: string; pattern: string }[];
  /** ISO 3166-1 alpha-2 regions for national phone forms; undefined = the detector's default. */
  phoneRegions?: readonly string[];
  /** Let images, audio and blobs through unscanned. */
  allowBinary: boolean;
}

/** An issuer that gives each value its label alone: for the log and for messages to every client. */
const LABELS_ONLY: Issuer = { issue: (_v: string, f: Finding) => `[[${f.label}]]` };

/** Unknown placeholders a session may send before its resolution is locked. */
export const MAX_MISSES = 3;
/** Most distinct placeholders one call may carry. */
export const MAX_PLACEHOLDERS_PER_CALL = 1000;

/** What resolving a call's arguments came to. */
export type Resolution =
  /** No placeholder in them. */
  | { kind: 'none' }
  /** `resolve: never` toward this upstream: the placeholder text goes as it is. */
  | { kind: 'kept'; count: number }
  /** Every placeholder was this session's: the arguments with the real values, and which were put back. */
  | { kind: 'resolved'; args: unknown; placeholders: ResolvedPlaceholder[] }
  /** Nothing may run: unknown placeholders, a locked session, or too many. */
  | { kind: 'refused'; reason: string; unknown: number; locked: boolean };

/** The gate's privacy filter: detectors and the store. */
export class PrivacyFilter {
  private constructor(
    readonly config: PrivacyOptions,
    readonly detector: Detector,
    private readonly store: Store,
    private readonly indexKey: Buffer,
    private readonly clock: Clock,
  ) {}

  /**
   * Compiles the detectors and reads (or creates) the reverse index key in the store.
   * @throws Error naming a custom pattern that does not compile; StoreError when the store cannot be used.
   */
  static async open(config: PrivacyOptions, store: Store, clock: Clock = systemClock): Promise<PrivacyFilter> {
    const detector = compileDetector({ names: config.names, patterns: config.patterns, phoneRegions: config.phoneRegions });
    return new PrivacyFilter(config, detector, store, await indexKeyOf(store), clock);
  }

  /**
   * The placeholders of one client session.
   * @param principal who authenticated.
   * @param sessionKey a 2026-07-28 session's key, which other replicas share; omit for a connection's own session.
   */
  session(principal: string, sessionKey?: string): PrivacySession {
    const vault = new PlaceholderVault({
      store: this.store,
      ttlMs: this.config.ttlMs,
      principal,
      session: sessionKey ?? randomSessionId(),
      shared: sessionKey !== undefined,
      indexKey: this.indexKey,
      clock: this.clock,
    });
    return new PrivacySession(this, vault);
  }

  /**
   * Masks a message that goes to every client at once (a 2026-07-28 change notification): labels alone,
   * since no one session's placeholders fit all.
   */
  forAll<T>(value: T): T {
    return maskJson(value, this.detector, LABELS_ONLY, unmaskedPaths('notification')) as T;
  }

  /** Masks text for the audit log: each private value becomes its label alone (`[[IBAN]]`), with no id. */
  forLog(text: string): string {
    return maskText(text, this.detector, LABELS_ONLY);
  }
}

/** One client session's side of the filter. */
export class PrivacySession {
  /** Masks of this session run one after the other: a placeholder is in the store before any message carries it. */
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * The gate's detectors plus the values this session already hides, wherever they appear (detected
   * there or not: an upstream echoing a value a call sent, glued to a path or a word, is not detectable
   * by shape). One pass: a recalled value that overlaps a detector's finding gives way to it.
   */
  private readonly detector: Detector;
  /** The same, without the secret-key rule: for JSON Schemas, whose keys name properties. */
  private readonly schemaDetector: Detector;
  /** Only the values this session hides (the second look at a message that hid new ones). */
  private readonly recallOnly: Detector;

  constructor(
    private readonly filter: PrivacyFilter,
    private readonly vault: PlaceholderVault,
  ) {
    const base = filter.detector;
    this.detector = {
      find: (text) => {
        const found = base.find(text);
        const recalled = vault.findRecalled(text, () => (text.includes('[[') ? findPlaceholders(text) : []));
        return recalled.length === 0 ? found : mergeFindings(found, recalled);
      },
      isSecretKey: (key) => base.isSecretKey(key),
    };
    this.schemaDetector = { find: this.detector.find, isSecretKey: () => false };
    this.recallOnly = {
      find: (text) => vault.findRecalled(text, () => (text.includes('[[') ? findPlaceholders(text) : [])),
      isSecretKey: () => false,
    };
  }

  /**
   * Masks one message the client will read (a result, an error, a notification's params, a question).
   * @param method the request it answers or the notification it is (decides which strings stay: mcp.ts).
   * @returns the message with placeholders; the same instance when nothing was found.
   * @throws StoreError when the new placeholders cannot be stored: the message must not be sent.
   */
  mask<T>(method: string, value: T, keep?: (value: string) => boolean): Promise<T> {
    const run = this.tail.then(async () => {
      const shown = method === 'tools/list' ? relaxToolSchemas(value) : value;
      const readable = this.filter.config.allowBinary ? shown : withholdBinary(shown);
      const issuer: Issuer = keep ? { issue: (v, f) => (keep(v) ? v : this.vault.issue(v, f)) } : this.vault;
      this.vault.refreshRecall();
      let masked = this.maskWithSchemas(readable, method, issuer);
      // A value hidden anywhere in this message is hidden everywhere in it: one found only by its context
      // (`password=X`) may stand bare elsewhere in the same message.
      if (this.vault.refreshRecall()) masked = maskJson(masked, this.recallOnly, issuer, unmaskedPaths(method));
      const swaps = await this.vault.flush();
      return (swaps ? restoreJson(masked, swaps) : masked) as T;
    });
    this.tail = run.catch(() => {});
    return run;
  }

  /**
   * Masks a message that holds JSON Schemas (a tool list's input and output schemas, an elicitation's
   * requested schema) by detection alone inside them: a key there (under `properties`) names a property
   * (`password: { type: string }`), it does not hold a secret.
   */
  private maskWithSchemas(value: unknown, method: string, issuer: Issuer): unknown {
    const skip = unmaskedPaths(method);
    const isRoot = schemaRoots(method);
    const roots = new Map<string, readonly (string | number)[]>();
    const outside = maskJson(value, this.detector, issuer, (p) => {
      if (skip(p)) return true;
      if (!isRoot(p)) return false;
      roots.set(JSON.stringify(p), [...p]);
      return true;
    });
    let out = outside;
    for (const path of roots.values()) {
      const schema = getIn(out, path);
      const masked = maskJson(schema, this.schemaDetector, issuer, (p) => skip([...path, ...p]));
      if (masked !== schema) out = setIn(out, path, masked);
    }
    return out;
  }

  /**
   * Masks text for the audit log with labels alone (`[[SECRET]]`), seeing what this session hides too
   * (a value the detectors know only by its context, or one a call sent). Synchronous; stores nothing.
   */
  forLog(text: string): string {
    this.vault.refreshRecall();
    return maskText(text, this.detector, LABELS_ONLY);
  }

  /**
   * Masks one text (an error message, a preview).
   * @param keep values left as they are (a preview keeps what the agent itself wrote in the arguments).
   * @throws StoreError as `mask`.
   */
  async maskText(text: string, keep?: (value: string) => boolean): Promise<string> {
    return this.mask('text', text, keep);
  }

  /**
   * Puts the real values back into a call's arguments, where the upstream may receive them.
   * @param mode the upstream's `privacy.resolve` (`ask` resolves too: the caller asks a person first).
   * @throws StoreError when the store cannot be read or written (the caller refuses the call).
   */
  async resolve(args: unknown, mode: ResolveMode): Promise<Resolution> {
    const { ids, attempts } = placeholderIdsIn(args);
    if (ids.size === 0 && attempts === 0) return { kind: 'none' };
    if (mode === 'never') return { kind: 'kept', count: ids.size + attempts };
    if (ids.size > MAX_PLACEHOLDERS_PER_CALL)
      return {
        kind: 'refused',
        reason: `the arguments carry ${ids.size} placeholders, more than ${MAX_PLACEHOLDERS_PER_CALL} in one call; nothing was run`,
        unknown: 0,
        locked: false,
      };
    if ((await this.vault.misses()) >= MAX_MISSES) return lockedRefusal(0);
    const { values, found, unknown } = await this.vault.resolve(ids);
    const misses = unknown.length + attempts;
    if (misses > 0) {
      const total = await this.vault.addMisses(misses);
      if (total >= MAX_MISSES) return lockedRefusal(misses);
      const what = misses === 1 ? 'a placeholder' : `${misses} placeholders`;
      return {
        kind: 'refused',
        reason: `the arguments carry ${what} this gate did not give this session, or that expired (privacy.ttl_seconds), or that is cut short; nothing was run. Use placeholders exactly as this session received them (after ${MAX_MISSES} unknown ones, this session can resolve none)`,
        unknown: misses,
        locked: false,
      };
    }
    this.vault.recallSent(found.map((p) => ({ value: values.get(p.id) as string, label: p.label, detail: p.detail })));
    return { kind: 'resolved', args: restoreJson(args, values), placeholders: found };
  }
}

/** Detector findings plus recalled ones that overlap none of them, in order (both lists sorted and disjoint). */
function mergeFindings(found: readonly Finding[], recalled: readonly Finding[]): Finding[] {
  const out: Finding[] = [];
  let i = 0;
  for (const r of recalled) {
    while (i < found.length && (found[i] as Finding).end <= r.start) out.push(found[i++] as Finding);
    if (i < found.length && (found[i] as Finding).start < r.end) continue;
    const last = out[out.length - 1];
    if (last && last.end > r.start) continue;
    out.push(r);
  }
  while (i < found.length) out.push(found[i++] as Finding);
  return out;
}

function lockedRefusal(unknown: number): Resolution {
  return {
    kind: 'refused',
    reason: `this session sent ${MAX_MISSES} or more placeholders it was never given, so the gate resolves none for it any more; nothing was run. Start a new session (reconnect the client) to use placeholders again`,
    unknown,
    locked: true,
  };
}

/** A connection's own session id: random, never reused, never shared. */
function randomSessionId(): string {
  return `conn:${globalThis.crypto.randomUUID()}`;
}
