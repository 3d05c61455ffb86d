/**
 * The composition root: `createGate` builds, once and in order, what a running gate is made of: the
 * audit log, the state store, this replica's heartbeat, the queue of pending approvals, the confirmation
 * channels, the gateway and the 2026 front, and `close` takes them down in reverse. `serve` and `promote`
 * (and the commands still to come) build their gate here, so none of them wires the parts differently.
 * It lives at the top (cli/) because the channels it starts include the web page (web/); the library's
 * `createGatedServer` (src/library/, ranked above cli/ for this reason) builds its gate here too, with
 * its in-process upstream, so a gated server and `lookfirst serve` are the same parts wired the same way.
 */
import { loadSigner } from '../audit/keys.js';
import { createRefusalLog } from '../audit/throttle.js';
import { AuditLog } from '../audit/writer.js';
import { type Clock, systemClock } from '../clock.js';
import type { Config } from '../config/load.js';
import { PendingApprovals } from '../confirm/pending.js';
import { loadRedactHook } from '../confirm/redact.js';
import { Gateway, type GatewayOptions } from '../gateway/gateway.js';
import { ModernFront } from '../gateway/modern.js';
import { Replicas } from '../gateway/replicas.js';
import { PrivacyFilter } from '../privacy/filter.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import { type Channels, startChannels } from './channels.js';
import { openSecretFiles } from './file-modes.js';
import { type Observability, startObservability, unobserved } from './observe.js';
import { cliName, logLine } from './output.js';
import { VERSION } from './version.js';

/** What a command asks of its gate. */
export interface GateOptions {
  config: Config;
  /** Extra fields of the `gate_started` entry (a promote names its log and session). */
  started?: { promote?: string; session?: number };
  /** An audit log the command opened already (promote verifies it first). */
  audit?: AuditLog;
  /** Opens the page in the browser (serve); undefined when `LOOKFIRST_NO_OPEN=1`. */
  openBrowser?: (url: string) => void;
  /** What to say when no confirmation channel is enabled, instead of the usual warning. */
  noChannel?: string;
  clock?: Clock;
  log?: (line: string) => void;
  /** Upstreams inside this process (the library): see `GatewayOptions.inProcess`. `serve` has none. */
  inProcess?: GatewayOptions['inProcess'];
  /** The `serverInfo` clients see (the library: the author's server); default lookfirst's own. */
  serverInfo?: GatewayOptions['serverInfo'];
  /**
   * Start what `metrics:` and `tracing:` enable (`serve`). Off for `promote` and the library: a promote
   * beside a running gate must not fight it for the metrics port.
   */
  observe?: boolean;
}

/** A running gate's parts. */
export interface Gate {
  config: Config;
  audit: AuditLog;
  store: Store;
  replicas: Replicas;
  pending: PendingApprovals;
  channels: Channels;
  gateway: Gateway;
  modern: ModernFront;
  /** Records a refused web request (a security event, throttled). */
  refused: (what: string) => void;
  /** Its metrics endpoint and tracer (the no-ops unless `observe` and the config enable them). */
  observed: Observability;
  /**
   * Stops everything in reverse order and writes `gate_stopped`.
   * @param why the reason written in the log.
   */
  close(why: string): Promise<void>;
}

/**
 * Builds and starts a gate.
 * @throws ConfigError / LookfirstError when the key, the log, the store, a channel or an upstream
 *   cannot start; whatever was started is stopped again first.
 */
export async function createGate(opts: GateOptions): Promise<Gate> {
  const { config } = opts;
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? logLine;
  // What the config holds but will not use (settings under a section that is off), said once at start.
  for (const w of config.warnings ?? []) log(`warning: ${w}`);
  for (const w of openSecretFiles(config)) log(`warning: ${w}`);
  const audit =
    opts.audit ??
    (await AuditLog.open({
      logPath: config.audit.logPath,
      signer: loadSigner(config.audit.keyPath, `${cliName()} keygen --config ${config.file}`),
      clock,
      warn: log,
      verifyCommand: `${cliName()} verify-log --config ${config.file}`,
    }));
  const undo: (() => Promise<unknown> | unknown)[] = [];
  const unwind = async () => {
    for (const u of undo.splice(0)) await Promise.resolve(u()).catch(() => {});
  };
  try {
    // Before the store and the upstreams: a metrics port in use stops the start before anything runs.
    const observed = opts.observe ? await startObservability(config, VERSION, log) : unobserved;
    undo.unshift(() => observed.close());
    if (observed.metrics.enabled) {
      const metrics = observed.metrics;
      audit.setAppendObserver((ms, ok) => metrics.auditAppended(ms, ok));
    }
    const store = await openStore(config.store, { clock });
    undo.unshift(() => store.close());
    const replicas = await Replicas.start(store, clock);
    undo.unshift(() => replicas.stop());
    await audit.appendDurable({
      event: 'gate_started',
      version: VERSION,
      pid: process.pid,
      upstreams: config.upstreams.map((u) => u.name).join(','),
      dry_run: config.dryRun || undefined,
      replica: store.kind === 'memory' ? undefined : replicas.id,
      ...opts.started,
    });
    const pending = new PendingApprovals(clock, { store, replica: store.kind === 'memory' ? undefined : replicas.id });
    await pending.ready;
    undo.unshift(() => pending.close());
    // Refused requests are security events, but a hostile page can send thousands a second: log the
    // first of each second in full, and how many more there were, so the log cannot be flooded.
    const refusals = createRefusalLog((reason, suppressed) => {
      log(`refused ${reason}${suppressed ? ` (and ${suppressed} more in the last second)` : ''}`);
      audit.appendLater({ event: 'web_refused', reason, suppressed });
    });
    undo.unshift(() => refusals.flush());
    const refused = (what: string) => refusals.record(what);
    const channels = await startChannels({ config, pending, store, clock, log, refused, openBrowser: opts.openBrowser, noChannel: opts.noChannel });
    undo.unshift(() => channels.close());
    // The privacy filter and the redaction hook: a pattern that does not compile or a hook that cannot be
    // loaded stops the start (a gate that was asked to mask must not run unmasked).
    const privacy = config.privacy ? await PrivacyFilter.open(config.privacy, store, clock) : undefined;
    if (privacy) audit.setTextFilter((text) => privacy.forLog(text));
    const redact = config.redact ? await loadRedactHook(config.redact) : undefined;
    if (redact) undo.unshift(() => redact.close());
    const gateway = new Gateway({
      config,
      audit,
      clock,
      pending,
      outOfBand: channels.outOfBand,
      log,
      version: VERSION,
      store,
      replicas,
      privacy,
      redact: redact?.hook,
      inProcess: opts.inProcess,
      serverInfo: opts.serverInfo,
      metrics: observed.metrics,
      tracer: observed.tracer,
    });
    undo.unshift(() => gateway.close());
    await gateway.start();
    const modern = new ModernFront({
      gateway,
      audit,
      elicitation: config.confirm.elicitation,
      confirmTimeoutMs: config.confirm.timeoutMs,
      log,
      version: VERSION,
      store,
      clock,
    });
    await modern.ready();
    let closed: Promise<void> | undefined;
    const close = (why: string) => {
      gateway.stopping();
      closed ??= (async () => {
        await unwind();
        await audit
          .appendDurable({ event: 'gate_stopped', reason: why })
          .catch((err: Error) => log(`could not record the stop in the audit log: ${err.message}`));
        if (!opts.audit) await audit.close().catch(() => {});
      })();
      return closed;
    };
    return { config, audit, store, replicas, pending, channels, gateway, modern, refused, observed, close };
  } catch (err) {
    await unwind();
    await audit.appendDurable({ event: 'gate_stopped', reason: `failed to start: ${(err as Error).message}` }).catch(() => {});
    if (!opts.audit) await audit.close().catch(() => {});
    throw err;
  }
}
