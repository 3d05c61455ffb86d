/**
 * The gate's secret files (the audit key, the HTTP token file, the page's key file, the webhook secret, a
 * transcription API key) should be readable by their owner only. One readable by group or others is a warning at start,
 * as ssh warns about a private key ("permissions 0644 are too open"), with the command that fixes it.
 * A warning, not a refusal: a gate that refused to start over a mode would fail closed on a config that
 * worked yesterday, and the key is not leaked by starting.
 */
import { statSync } from 'node:fs';
import type { Config } from '../config/load.js';

/**
 * Warnings for the config's secret files that group or others can read (or write).
 * @returns one sentence per file, e.g. `/etc/lf/audit.key is readable by others (mode 0644): run chmod 600 /etc/lf/audit.key`.
 *   Files that do not exist are not this check's business (loading them says what is wrong).
 */
export function openSecretFiles(config: Config): string[] {
  const files: [path: string | undefined, what: string][] = [
    [config.audit.keyPath, 'the audit key'],
    [config.http.tokenFile, 'the HTTP token file'],
    [config.confirm.web.keyFile, "the approval page's key file"],
    [config.confirm.webhook?.secretFile, 'the webhook secret'],
    [config.confirm.device?.voice?.recogniser.kind === 'http' ? config.confirm.device.voice.recogniser.apiKeyFile : undefined, 'the transcription API key'],
  ];
  const out: string[] = [];
  for (const [path, what] of files) {
    if (!path) continue;
    let mode: number;
    try {
      mode = statSync(path).mode & 0o777;
    } catch {
      continue;
    }
    if ((mode & 0o077) === 0) continue;
    const who = mode & 0o007 ? 'others' : 'its group';
    out.push(`${what} ${path} is readable by ${who} (mode 0${mode.toString(8)}): run chmod 600 ${path}`);
  }
  return out;
}
