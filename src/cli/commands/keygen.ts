/** `lookfirst keygen --config F`: creates the audit key pair once; refuses to overwrite. */
import { generateAuditKey } from '../../audit/keys.js';
import { loadConfig } from '../../config/load.js';

/** Runs keygen; returns the exit code. @throws LookfirstError AUDIT_KEY_EXISTS, ConfigError. */
export function keygenCommand(opts: { config: string; json?: boolean }): number {
  const config = loadConfig(opts.config);
  const { name, vkey } = generateAuditKey(config.audit.keyPath, config.audit.pubPath);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ key: config.audit.keyPath, pub: config.audit.pubPath, name, vkey })}\n`);
  } else {
    process.stdout.write(
      `created ${config.audit.keyPath} (private, mode 0600) and ${config.audit.pubPath}\nkey name ${name}\nkeep a copy of the .pub file elsewhere: it is what proves the log was signed by this gate\n`,
    );
  }
  return 0;
}
