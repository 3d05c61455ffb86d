/**
 * lookfirst's local error classes. They never go on the wire as they are: the gateway turns them into
 * MCP error results, the CLI into an exit code and a sentence telling the user what to do next.
 * Messages never carry secrets or raw tool arguments.
 */

/** Every code lookfirst can raise, prefixed by the subsystem that raises it. */
export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'CONFIG_UNREADABLE'
  | 'AUDIT_KEY_MISSING'
  | 'AUDIT_KEY_EXISTS'
  | 'AUDIT_KEY_INVALID'
  | 'AUDIT_KEY_UNWRITABLE'
  | 'AUDIT_LOCKED'
  | 'AUDIT_LOG_UNREADABLE'
  | 'AUDIT_WRITE_FAILED'
  | 'WEB_UNAVAILABLE'
  | 'WEBHOOK_SECRET'
  | 'WEBHOOK_CA'
  | 'WEBHOOK_UNAVAILABLE'
  | 'HTTP_TOKEN'
  | 'PINS'
  | 'STORE_UNAVAILABLE'
  | 'STORE_CORRUPT'
  | 'STORE_INVALID'
  | 'VOICE_AUDIO_INVALID'
  | 'VOICE_RECOGNISER_FAILED'
  | 'DEVICE_TLS'
  | 'WRAP_INVALID'
  | 'WRAP_REFUSED'
  | 'USAGE';

/** Base class: a known failure with a stable code (pinned by tests; change on purpose only). */
export class LookfirstError extends Error {
  /** @param code stable machine-readable code. @param message a sentence for a person, saying what to do next. */
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** One problem found in a config file: where (dotted key path, 1-based line when known) and what. */
export interface ConfigProblem {
  /** Dotted path of the key, e.g. `confirm.web.port`; empty for the whole document. */
  path: string;
  /** 1-based line in the config file, when the YAML node could be located. */
  line?: number;
  message: string;
}

/**
 * The config file could not be used. Carries every problem at once (never just the first), so the user
 * fixes the file in one pass.
 */
export class ConfigError extends LookfirstError {
  constructor(
    readonly file: string,
    readonly problems: ConfigProblem[],
    code: 'CONFIG_INVALID' | 'CONFIG_UNREADABLE' = 'CONFIG_INVALID',
  ) {
    const lines = problems.map((p) => `  ${p.line ? `line ${p.line}: ` : ''}${p.path ? `${p.path}: ` : ''}${p.message}`);
    super(code, `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'} in the config\n${lines.join('\n')}`);
  }
}
