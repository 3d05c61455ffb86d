/**
 * The checks of `lookfirst check`: pure functions from gathered facts (check/facts.ts) to lines of
 * OK / WARN / ERROR. ERROR means the gate would not start, or would start and not work (a missing key,
 * an upstream that cannot be reached, a store it cannot open); WARN means it works but something is
 * likely wrong or weaker than it looks (a rule that matches nothing, a key others can read). Every line
 * that is not OK says what to do next. Fail closed: a fact that could not be read is never OK.
 */

import type { Config } from '../config/load.js';
import { maskUrl } from '../core/mask-url.js';
import type { CheckFacts, CheckResult, FileFact, Level, SecretFact } from './facts.js';
import { exposedTools } from './tools.js';

const line = (id: string, level: Level, message: string): CheckResult => ({ id, level, message });

const octal = (mode: number) => `0${mode.toString(8).padStart(3, '0')}`;

/** Where a listener will be, for a person: port 0 is not a port anyone can open, but "any free one". */
function listenAt(host: string, port: number): string {
  return port === 0 ? `${host}, on a free port the system picks (printed when the gate starts)` : `${host}:${port}`;
}

/** `readable by others` / `readable by its group`, or undefined when only the owner can read (and write) it. */
export function openTo(mode: number | undefined): string | undefined {
  if (mode === undefined || (mode & 0o077) === 0) return undefined;
  return mode & 0o007 ? 'others' : 'its group';
}

/** The config itself: it parsed (else the caller never got here), what it holds, and what it says that takes no effect. */
export function checkConfig(config: Config): CheckResult[] {
  const n = config.upstreams.length;
  const out = [
    line('config', 'OK', `${config.file} is valid: ${n} upstream${n === 1 ? '' : 's'}, ${config.rules.length} rule${config.rules.length === 1 ? '' : 's'}`),
  ];
  for (const w of config.warnings ?? []) out.push(line('config', 'WARN', w));
  return out;
}

/** The audit key pair: both files there, the private one a usable Ed25519 key that only its owner can read. */
export function checkKey(f: Pick<CheckFacts, 'key' | 'keyValid' | 'keyError' | 'pub' | 'config' | 'cli'>): CheckResult[] {
  const keygen = `${f.cli} keygen --config ${f.config.file}`;
  if (!f.key.exists)
    return [line('audit.key', 'ERROR', `no audit key at ${f.key.path}: the gate cannot sign its log and will not start. Create the pair with: ${keygen}`)];
  if (f.key.error || f.keyValid === false)
    return [
      line(
        'audit.key',
        'ERROR',
        `${f.key.path} cannot be used as the audit key (${f.key.error ?? f.keyError ?? 'not an Ed25519 private key'}): restore it from your backup, or move it aside and run ${keygen} (a new key starts a new log)`,
      ),
    ];
  const out: CheckResult[] = [];
  const who = openTo(f.key.mode);
  out.push(
    who
      ? line(
          'audit.key',
          'WARN',
          `${f.key.path} is readable by ${who} (mode ${octal(f.key.mode ?? 0)}): anyone who reads it can sign a log as this gate. Run chmod 600 ${f.key.path}`,
        )
      : line('audit.key', 'OK', `${f.key.path} is an Ed25519 key readable by its owner only`),
  );
  if (!f.pub.exists)
    out.push(
      line(
        'audit.pub',
        'ERROR',
        `no public key at ${f.pub.path}: the log cannot be verified without it. Restore it from the copy you kept, or from the keygen output`,
      ),
    );
  return out;
}

/** The audit log: absent (fine before the first start), intact, or the reason it is not. */
export function checkLog(f: Pick<CheckFacts, 'log' | 'config' | 'cli'>): CheckResult[] {
  const log = f.log;
  const verify = `${f.cli} verify-log --config ${f.config.file}`;
  if (log.state === 'absent') return [line('audit.log', 'OK', `no audit log at ${log.path} yet: the gate creates it when it first starts`)];
  if (log.state === 'unreadable')
    return [line('audit.log', 'ERROR', `the audit log ${log.path} cannot be verified (${log.error ?? 'unreadable'}): fix that, then run ${verify}`)];
  if (log.verdict === 'intact') return [line('audit.log', 'OK', `${log.path} verifies: ${log.entries ?? 0} entries, signatures, hash chain and signed head`)];
  if (log.verdict === 'tampered')
    return [
      line(
        'audit.log',
        'ERROR',
        `${log.path} does NOT verify (${log.problems.slice(0, 2).join('; ') || 'tampered'}): the gate refuses to append to it. Run ${verify} for every problem, and keep the files as evidence`,
      ),
    ];
  return [
    line('audit.log', 'WARN', `${log.path} gives no verdict (${log.warnings.slice(0, 2).join('; ') || 'incomplete evidence'}): run ${verify} for the details`),
  ];
}

/** Problems of a secret file, without ever showing its text: missing, unreadable, too short, repeated, open to others. */
function secretProblems(s: SecretFact, setting: string, perLine: boolean): { level: Level; message: string }[] {
  const make = `openssl rand -hex 32 > ${s.path}`;
  if (!s.exists) return [{ level: 'ERROR', message: `${setting} ${s.path} does not exist: create it (e.g. ${make}; chmod 600 ${s.path})` }];
  if (s.error) return [{ level: 'ERROR', message: `${setting} ${s.path} cannot be read (${s.error}): the gate will not start until it can` }];
  const out: { level: Level; message: string }[] = [];
  if (perLine) {
    const lengths = s.lineLengths ?? [];
    if (lengths.length === 0)
      out.push({ level: 'ERROR', message: `${setting} ${s.path} holds no token: add one a line (e.g. openssl rand -hex 32 >> ${s.path})` });
    lengths.forEach((n, i) => {
      if (n < s.minChars)
        out.push({
          level: 'ERROR',
          message: `${setting} ${s.path}: token ${i + 1} holds ${n} characters; each needs at least ${s.minChars} (e.g. openssl rand -hex 32)`,
        });
    });
    if (s.repeated)
      out.push({
        level: 'ERROR',
        message: `${setting} ${s.path} repeats a token (${s.repeated} time${s.repeated === 1 ? '' : 's'}): give each client its own`,
      });
  } else if ((s.chars ?? 0) < s.minChars)
    out.push({ level: 'ERROR', message: `${setting} ${s.path} holds ${s.chars ?? 0} characters; at least ${s.minChars} are needed (e.g. ${make})` });
  const who = openTo(s.mode);
  if (who) out.push({ level: 'WARN', message: `${setting} ${s.path} is readable by ${who} (mode ${octal(s.mode ?? 0)}): run chmod 600 ${s.path}` });
  return out;
}

/** The HTTP token file (`http.token_file`), when the config names one. Its tokens are never printed, only counted. */
export function checkToken(f: Pick<CheckFacts, 'token'>): CheckResult[] {
  if (!f.token) return [line('http.token_file', 'OK', 'no http.token_file: serve --transport http takes requests from this machine only (loopback)')];
  const problems = secretProblems(f.token, 'http.token_file', true);
  if (problems.length > 0) return problems.map((p) => line('http.token_file', p.level, p.message));
  const n = f.token.lineLengths?.length ?? 0;
  return [line('http.token_file', 'OK', `${f.token.path} holds ${n} token${n === 1 ? '' : 's'}, readable by its owner only (not shown)`)];
}

const fileProblem = (f: FileFact, setting: string): CheckResult | undefined =>
  !f.exists
    ? line(setting, 'ERROR', `${setting} ${f.path} does not exist: give the path of the file, relative to the config's folder`)
    : f.error
      ? line(setting, 'ERROR', `${setting} ${f.path} cannot be read (${f.error})`)
      : undefined;

/** The confirmation channels: each enabled one sane, at least one a person can reach, and the self-approval risk named. */
export function checkChannels(
  f: Pick<CheckFacts, 'config' | 'webhookSecret' | 'webhookCa' | 'deviceTls' | 'voiceKey' | 'tty' | 'ports' | 'store'>,
): CheckResult[] {
  const c = f.config.confirm;
  const out: CheckResult[] = [];
  for (const p of f.ports)
    if (p.inUse)
      out.push(
        line(
          p.key,
          'WARN',
          `something already listens on ${p.host}:${p.port} (${p.key}): another gate on this config? Stop it, or set ${p.key}: 0 (any free port) for a second gate`,
        ),
      );
  if (c.web.enabled)
    out.push(
      line(
        'confirm.web',
        'OK',
        `the approval page will listen on ${listenAt(c.web.host, c.web.port)}${c.web.identityHeader ? `, people signed in by the proxy (${c.web.identityHeader})` : ' (loopback: names typed on the page are self-declared)'}`,
      ),
    );
  if (c.webhook) {
    const problems = [
      ...(f.webhookSecret ? secretProblems(f.webhookSecret, 'confirm.webhook.secret_file', false) : []).map((p) => line('confirm.webhook', p.level, p.message)),
    ];
    const ca = f.webhookCa && fileProblem(f.webhookCa, 'confirm.webhook.ca_file');
    if (ca) problems.push(ca);
    out.push(...problems);
    if (!problems.some((p) => p.level === 'ERROR'))
      out.push(
        line(
          'confirm.webhook',
          'OK',
          `previews go to ${maskUrl(c.webhook.url, { path: true })}; decisions come back to ${listenAt(c.webhook.listenHost, c.webhook.listenPort)}`,
        ),
      );
  }
  if (c.terminal)
    out.push(
      f.tty
        ? line('confirm.terminal', 'OK', 'confirm.terminal: this process has a controlling terminal to ask on')
        : line(
            'confirm.terminal',
            'WARN',
            'confirm.terminal is on but this process has no controlling terminal (/dev/tty): a gate started the same way cannot ask there. A gate an MCP client starts usually has none: enable confirm.web or confirm.webhook too',
          ),
    );
  if (c.device) {
    for (const t of f.deviceTls ?? []) {
      const p = fileProblem(t, 'confirm.device.tls');
      if (p) out.push(p);
    }
    if (f.voiceKey) {
      const p = fileProblem(f.voiceKey, 'confirm.device.voice.api_key_file');
      const who = openTo(f.voiceKey.mode);
      if (p) out.push(p);
      else if (who)
        out.push(
          line(
            'confirm.device.voice.api_key_file',
            'WARN',
            `confirm.device.voice.api_key_file ${f.voiceKey.path} is readable by ${who} (mode ${octal(f.voiceKey.mode ?? 0)}): run chmod 600 ${f.voiceKey.path}`,
          ),
        );
    }
    if (f.store.kind === 'memory')
      out.push(
        line(
          'confirm.device',
          'ERROR',
          'confirm.device needs a store that lookfirst pair can share with the gate: set store.kind to sqlite (the default) or postgres',
        ),
      );
    else if (!out.some((r) => r.id.startsWith('confirm.device') && r.level === 'ERROR'))
      out.push(line('confirm.device', 'OK', `paired phones: the device page will listen on ${listenAt(c.device.host, c.device.port)}`));
  }
  const reachable = c.web.enabled || c.webhook !== undefined || c.terminal || c.device !== undefined;
  if (c.mode === 'pending') {
    if (!reachable)
      out.push(
        line(
          'confirm.channels',
          'ERROR',
          'confirm.mode is pending but no channel outside the client is enabled: every held call would wait forever. Enable confirm.web, confirm.webhook, confirm.terminal or confirm.device',
        ),
      );
  } else if (c.elicitation)
    out.push(
      line(
        'confirm.elicitation',
        'WARN',
        'confirm.elicitation is on: an autonomous client can answer the question itself (self-approval). For such clients set confirm.elicitation: false and approve on the page, webhook, terminal or a phone',
      ),
    );
  else if (!reachable)
    out.push(
      line(
        'confirm.channels',
        'ERROR',
        'no confirmation channel is enabled: every call that needs a person will be denied. Enable confirm.web, confirm.webhook, confirm.terminal, confirm.device or confirm.elicitation',
      ),
    );
  return out;
}

/** The store: which kind, and that it can be opened (SQLite's folder writable, PostgreSQL answering). */
export function checkStore(f: Pick<CheckFacts, 'store'>): CheckResult[] {
  const s = f.store;
  if (s.kind === 'memory')
    return [
      line(
        'store',
        'WARN',
        'store.kind is memory: waiting approvals, holds, pins and taint are lost on every restart. Use sqlite (the default) or postgres for real use',
      ),
    ];
  if (!s.reachable)
    return [
      line(
        'store',
        'ERROR',
        s.kind === 'postgres'
          ? `the PostgreSQL store at ${s.where ?? '(store.url)'} cannot be reached (${s.error ?? 'no answer'}): start the database or fix store.url`
          : `the SQLite store ${s.where ?? ''} cannot be written (${s.error ?? 'not writable'}): create its folder or give the gate's user write access, or set store.path`,
      ),
    ];
  return [line('store', 'OK', s.kind === 'postgres' ? `PostgreSQL store at ${s.where ?? ''} answers` : `SQLite store ${s.where ?? ''} can be written`)];
}

/** The privacy filter and the preview redaction hook. */
export function checkPrivacy(f: Pick<CheckFacts, 'config' | 'redact'>): CheckResult[] {
  const p = f.config.privacy;
  const out: CheckResult[] = [];
  if (p) {
    out.push(
      line(
        'privacy',
        'OK',
        `privacy filter on: IBANs, cards, e-mail, phones and secrets${p.names.length ? `, ${p.names.length} name${p.names.length === 1 ? '' : 's'}` : ''}${p.patterns.length ? `, ${p.patterns.length} pattern${p.patterns.length === 1 ? '' : 's'}` : ''} reach the client as placeholders`,
      ),
    );
  } else {
    const external = f.config.upstreams.filter((u) => u.external).map((u) => u.name);
    out.push(
      external.length > 0
        ? line(
            'privacy',
            'WARN',
            `upstream${external.length === 1 ? '' : 's'} ${external.join(', ')} ${external.length === 1 ? 'is' : 'are'} marked external but the privacy filter is off: private values in results reach the client as they are. Add privacy: {} to turn it on`,
          )
        : line('privacy', 'OK', 'privacy filter off: results reach the client as the upstream sent them (add privacy: {} to mask private values)'),
    );
  }
  if (f.redact)
    out.push(
      f.redact.ok
        ? line('redact', 'OK', `the redaction hook ${f.redact.exportName} in ${f.redact.module} loads and is a function`)
        : line('redact', 'ERROR', `the redaction hook cannot be loaded, so the gate will not start: ${f.redact.error ?? 'unknown error'}`),
    );
  return out;
}

/** One line per upstream: reached and listed (with its tool count), or why not. */
export function checkUpstreams(f: Pick<CheckFacts, 'upstreams' | 'config'>): CheckResult[] {
  return f.upstreams.map((u) =>
    u.ok
      ? line(
          `upstream.${u.name}`,
          'OK',
          `upstream ${u.name} (${u.kind}) answered in ${u.elapsedMs} ms with ${u.tools.length} tool${u.tools.length === 1 ? '' : 's'}`,
        )
      : line(
          `upstream.${u.name}`,
          'ERROR',
          `upstream ${u.name} (${u.kind}) could not be listed: ${u.error ?? 'no answer'}. Its tools are unreachable through the gate until it answers (${u.kind === 'stdio' ? `run upstreams.${u.name}.command with its args by hand to see it start` : `check that upstreams.${u.name}.url is up and speaks Streamable HTTP`})`,
        ),
  );
}

/**
 * Rules against the tools the upstreams listed: each rule that matches no tool is named (a typo, or a
 * tool that was renamed, silently leaves its tool to the classifier). When an upstream could not be
 * listed, a rule may match one of its tools, so the warning says so.
 */
export function checkRules(f: Pick<CheckFacts, 'upstreams' | 'config'>): CheckResult[] {
  const { unmatched, missing } = exposedTools(f.config, f.upstreams);
  const caveat = missing.length > 0 ? ` (upstream ${missing.join(', ')} could not be listed: it may match a tool there)` : '';
  const out = unmatched.map((r) =>
    line(
      'rules',
      'WARN',
      `rule "${r.pattern}"${r.line ? ` (line ${r.line})` : ''} matches no tool of any upstream${caveat}: check its spelling${f.config.upstreams.length > 1 ? ' (with several upstreams, names are <upstream>__<tool>)' : ''}, or remove it`,
    ),
  );
  if (out.length === 0 && f.config.rules.length > 0)
    out.push(
      line('rules', 'OK', `every rule matches at least one tool${missing.length > 0 ? ` of the upstreams listed (${missing.join(', ')} could not be)` : ''}`),
    );
  return out;
}

/** Every check of `lookfirst check`, in the order printed. */
export function runChecks(f: CheckFacts): CheckResult[] {
  return [
    ...checkConfig(f.config),
    ...checkKey(f),
    ...checkLog(f),
    ...checkToken(f),
    ...checkChannels(f),
    ...checkStore(f),
    ...checkPrivacy(f),
    ...checkUpstreams(f),
    ...checkRules(f),
  ];
}

/** Counts by level, and the exit code: 2 with any ERROR, else 0 (warnings do not fail a check). */
export function summarise(results: readonly CheckResult[]): { ok: number; warn: number; error: number; exitCode: 0 | 2 } {
  const count = (l: Level) => results.filter((r) => r.level === l).length;
  const error = count('ERROR');
  return { ok: count('OK'), warn: count('WARN'), error, exitCode: error > 0 ? 2 : 0 };
}
