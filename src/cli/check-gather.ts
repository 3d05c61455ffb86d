/**
 * Reads the facts `check` and `pilot-status` judge (check/facts.ts), touching as little as it can: files
 * are stat'ed and read, never written; the log is verified as verify-log does; the SQLite store is checked
 * for write access without being opened (opening would create it); PostgreSQL gets one `SELECT 1`; each
 * upstream is started as the gate starts it, listed, and closed; a listener's port is probed by
 * connecting to it, never bound. No tool is called, no gate is started, nothing is logged. Secret files
 * are reduced to their mode and line lengths here, so no later step can print them.
 */
import { accessSync, closeSync, constants, openSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, resolve } from 'node:path';
import pg from 'pg';
import { sidecarPaths } from '../audit/chain-writer.js';
import { loadSigner } from '../audit/keys.js';
import type { CheckFacts, FileFact, LogFact, PortFact, RedactFact, SecretFact, StoreFact, TrustedHeadFact, UpstreamFact } from '../check/facts.js';
import { type MonoClock, systemMonoClock } from '../clock.js';
import type { Config, UpstreamConfig } from '../config/load.js';
import { MIN_SECRET_CHARS } from '../confirm/channels/webhook.js';
import { loadRedactHook } from '../confirm/redact.js';
import { LookfirstError } from '../errors.js';
import { fetchAllPages } from '../gateway/catalogue.js';
import { Upstream } from '../gateway/upstream.js';
import { verifyLogFile } from './commands/verify-log.js';
import { checkVerifierKey } from './commands/verify-log-key.js';
import { cliName } from './output.js';
import { isHeadBesideLog } from './trusted-head.js';

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code ?? (err as Error).message ?? String(err);

/** Whether a file is there and its permission bits. */
export function fileFact(path: string): FileFact {
  try {
    const st = statSync(path);
    if (!st.isFile()) return { path, exists: true, mode: st.mode & 0o777, error: 'not a regular file' };
    accessSync(path, constants.R_OK);
    return { path, exists: true, mode: st.mode & 0o777 };
  } catch (err) {
    const code = errCode(err);
    return code === 'ENOENT' ? { path, exists: false } : { path, exists: true, error: code };
  }
}

/** A secret file reduced to its mode, its length and its lines' lengths: the text goes no further than this function. */
export function secretFact(path: string): SecretFact {
  const f = fileFact(path);
  if (!f.exists || f.error) return { ...f, minChars: MIN_SECRET_CHARS };
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { ...f, error: errCode(err), minChars: MIN_SECRET_CHARS };
  }
  const lines = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
  const repeated = lines.length - new Set(lines).size;
  return { ...f, chars: text.replace(/\r?\n$/, '').length, lineLengths: lines.map((l) => l.length), repeated, minChars: MIN_SECRET_CHARS };
}

/** The log verified as verify-log verifies it (and its public key checked against the private one). */
export function logFact(config: Config, trustedHead?: string): LogFact {
  const path = config.audit.logPath;
  const headPath = sidecarPaths(path).head;
  const base = { path, headPath, problems: [] as string[], warnings: [] as string[] };
  if (!trustedHead && !fileFact(path).exists && !fileFact(headPath).exists) return { ...base, state: 'absent' };
  try {
    const { report, verifier } = verifyLogFile(path, config.audit.pubPath, trustedHead, config.file);
    const key = checkVerifierKey(verifier, config.audit);
    const problems = [...key.problems, ...report.problems].map((p) => (p.line > 0 ? `line ${p.line}: ${p.message}` : p.message));
    const verdict = key.problems.length > 0 ? 'tampered' : report.verdict;
    return { ...base, state: 'verified', verdict, entries: report.entries, problems, warnings: [...report.warnings, ...key.warnings] };
  } catch (err) {
    if (err instanceof LookfirstError) return { ...base, state: 'unreadable', error: err.message };
    throw err;
  }
}

/** A `--trusted-head` copy: there, not beside the log, and the verdict of the log against it. */
export function trustedHeadFact(config: Config, path: string): TrustedHeadFact {
  const abs = resolve(path);
  const exists = fileFact(abs).exists;
  // Inside the log's folder (or below it), or the log's own head: it falls with the log.
  const besideLog = isHeadBesideLog(config.audit.logPath, abs);
  if (!exists) return { path: abs, exists, besideLog };
  const log = logFact(config, abs);
  return { path: abs, exists, besideLog, verdict: log.verdict, error: log.error };
}

/** The store probed without changing it. */
export async function storeFact(config: Config, timeoutMs: number): Promise<StoreFact> {
  const s = config.store;
  if (s.kind === 'memory') return { kind: 'memory', reachable: true };
  if (s.kind === 'sqlite') {
    try {
      // The file need not exist yet; its folder must take a new file (and the WAL beside it).
      accessSync(dirname(s.path), constants.W_OK | constants.X_OK);
      if (fileFact(s.path).exists) accessSync(s.path, constants.R_OK | constants.W_OK);
      return { kind: 'sqlite', where: s.path, reachable: true };
    } catch (err) {
      return { kind: 'sqlite', where: s.path, reachable: false, error: errCode(err) };
    }
  }
  let where = '(store.url)';
  try {
    const u = new URL(s.url);
    where = `${u.hostname}${u.port ? `:${u.port}` : ''}${u.pathname}`;
  } catch {}
  const client = new pg.Client({ connectionString: s.url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { kind: 'postgres', where, reachable: true };
  } catch (err) {
    // The driver's messages name the host and user, never the password; kept to one line.
    return { kind: 'postgres', where, reachable: false, error: ((err as Error).message || errCode(err)).split('\n')[0] };
  } finally {
    await client.end().catch(() => {});
  }
}

/** Whether something already accepts connections on host:port (a connect, never a bind). */
function portInUse(host: string, port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (v: boolean) => {
      socket.destroy();
      done(v);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

/** The listeners the config would open, each probed. Port 0 (any free port) is never in use. */
export async function portFacts(config: Config): Promise<PortFact[]> {
  const c = config.confirm;
  const wanted: Omit<PortFact, 'inUse'>[] = [];
  if (c.web.enabled) wanted.push({ key: 'confirm.web.port', host: c.web.host, port: c.web.port });
  if (c.webhook) wanted.push({ key: 'confirm.webhook.listen_port', host: c.webhook.listenHost, port: c.webhook.listenPort });
  if (c.device) wanted.push({ key: 'confirm.device.port', host: c.device.host, port: c.device.port });
  return Promise.all(wanted.map(async (w) => ({ ...w, inUse: w.port !== 0 && (await portInUse(w.host === '0.0.0.0' ? '127.0.0.1' : w.host, w.port, 500)) })));
}

/** Whether this process can open its controlling terminal, as the terminal channel would. */
export function hasTty(): boolean {
  try {
    closeSync(openSync('/dev/tty', 'r+'));
    return true;
  } catch {
    return false;
  }
}

/** Loads the redaction hook in its worker (its module runs, as at the gate's start) and stops it again. */
export async function redactFact(config: Config): Promise<RedactFact | undefined> {
  const r = config.redact;
  if (!r) return undefined;
  try {
    const loaded = await loadRedactHook(r);
    await loaded.close();
    return { module: r.module, exportName: r.exportName, ok: true };
  } catch (err) {
    return { module: r.module, exportName: r.exportName, ok: false, error: (err as Error).message };
  }
}

/**
 * One connection to one upstream, started as the gate starts it (gateway/upstream.ts), its tools listed
 * (every page), then closed. Its timeout is `timeoutMs` for the connection and for each page, and the
 * whole is cut off after twice that; stderr lines of a stdio server are kept for the error.
 */
export async function upstreamFact(config: UpstreamConfig, timeoutMs: number, clock: MonoClock = systemMonoClock): Promise<UpstreamFact> {
  const started = clock.monoMs();
  const said: string[] = [];
  const upstream = new Upstream({ ...config, timeoutMs }, { notification: () => {}, log: (m) => said.push(m) });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${Math.round(timeoutMs / 1000)} s (--timeout)`)), timeoutMs * 2);
  });
  try {
    const tools = await Promise.race([
      (async () => {
        await upstream.connect();
        return fetchAllPages(upstream, 'tools/list', 'tools', (m) => said.push(m));
      })(),
      deadline,
    ]);
    const defs = tools.filter((t): t is Record<string, unknown> => typeof t === 'object' && t !== null && !Array.isArray(t));
    return { name: config.name, kind: config.kind, ok: true, tools: defs, elapsedMs: Math.round(clock.monoMs() - started) };
  } catch (err) {
    const last = said.filter((l) => l.startsWith(`[${config.name}]`)).pop();
    const why = `${(err as Error).message}${last ? ` (its last words on stderr: ${last.slice(config.name.length + 3, config.name.length + 203)})` : ''}`;
    return { name: config.name, kind: config.kind, ok: false, tools: [], error: why, elapsedMs: Math.round(clock.monoMs() - started) };
  } finally {
    clearTimeout(timer);
    await upstream.close();
  }
}

/** The audit key: present, readable, a usable Ed25519 key. */
function keyFacts(config: Config): Pick<CheckFacts, 'key' | 'keyValid' | 'keyError' | 'pub'> {
  const key = fileFact(config.audit.keyPath);
  let keyValid: boolean | undefined;
  let keyError: string | undefined;
  if (key.exists && !key.error) {
    try {
      loadSigner(config.audit.keyPath, '');
      keyValid = true;
    } catch (err) {
      keyValid = false;
      keyError = (err as Error).message;
    }
  }
  return { key, keyValid, keyError, pub: fileFact(config.audit.pubPath) };
}

/** Gathers every fact, the upstreams in parallel (each bounded by `timeoutMs`). */
export async function gatherFacts(config: Config, timeoutMs: number): Promise<CheckFacts> {
  const c = config.confirm;
  const [store, ports, redact, upstreams] = await Promise.all([
    storeFact(config, timeoutMs),
    portFacts(config),
    redactFact(config),
    Promise.all(config.upstreams.map((u) => upstreamFact(u, timeoutMs))),
  ]);
  return {
    config,
    cli: cliName(),
    ...keyFacts(config),
    log: logFact(config),
    token: config.http.tokenFile ? secretFact(config.http.tokenFile) : undefined,
    webhookSecret: c.webhook ? secretFact(c.webhook.secretFile) : undefined,
    webhookCa: c.webhook?.caFile ? fileFact(c.webhook.caFile) : undefined,
    deviceTls: c.device?.tls ? [fileFact(c.device.tls.certFile), fileFact(c.device.tls.keyFile)] : undefined,
    voiceKey: c.device?.voice?.recogniser.kind === 'http' && c.device.voice.recogniser.apiKeyFile ? fileFact(c.device.voice.recogniser.apiKeyFile) : undefined,
    tty: c.terminal ? hasTty() : false,
    ports,
    store,
    redact,
    upstreams,
  };
}
