/**
 * The lookfirst.yaml schema (zod). Unknown keys are errors everywhere (strict objects), so a typo never
 * silently weakens the gate. Defaults are the safe ones: confirmation on, web page off, reads logged.
 * Over 400 lines: one schema for one file, kept whole so every key of lookfirst.yaml is found in one place.
 */
import { isSupportedCountry } from 'libphonenumber-js';
import { z } from 'zod';

/**
 * An upstream's name. No leading, trailing or doubled separator: with several upstreams, tools become
 * `<upstream>__<tool>`, and this keeps that mapping one-to-one (`a` + `_b` and `a_` + `b` would both be `a___b`).
 */
export const UPSTREAM_NAME = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
const UPSTREAM_NAME_RULE =
  'an upstream name holds lowercase letters and digits, with single - or _ between them (so that <upstream>__<tool> names cannot collide)';

/** The one sentence for `args` and each of its items, so a wrong item reads as a wrong list. */
const LIST_OF_STRINGS = 'must be a list of strings';

/** A timeout in seconds: positive, and short enough for a Node timer (2^31-1 ms, about 24.8 days). */
const timeoutSeconds = z.number().positive().max(2_147_483, 'must be at most 2147483 seconds (about 24 days)');

/**
 * `upstreams.<name>.privacy`: where real values behind placeholders may go. `always` resolves them
 * before the call runs; `ask` resolves them only after a person saw what would be sent, and to whom;
 * `never` sends the placeholder text itself. Default: `ask` for an `external: true` upstream, else `always`.
 */
const upstreamPrivacySchema = z.object({ resolve: z.enum(['always', 'ask', 'never']) }).strict();

/** `external` and `privacy`, the same on both kinds of upstream. */
const EXTERNAL = z
  .boolean()
  .default(false)
  .describe("A server outside your organisation: placeholders are resolved toward it only with a person's yes (privacy.resolve).");
const UPSTREAM_PRIVACY = upstreamPrivacySchema
  .optional()
  .describe('Where real values behind placeholders may go: always, ask (a person decides) or never. Default ask if external, else always.');

const stdioUpstream = z
  .object({
    command: z.string().min(1, 'command must not be empty').describe('The program that starts this MCP server (stdio), e.g. npx.'),
    args: z
      .array(z.string({ error: LIST_OF_STRINGS }), { error: LIST_OF_STRINGS })
      .default([])
      .describe("The program's arguments."),
    env: z.record(z.string(), z.string()).default({}).describe('Variables added to a minimal environment (HOME, PATH, USER, …); values are strings.'),
    cwd: z.string().optional().describe("Working folder, relative to the config file; default the config file's folder."),
    timeout_seconds: timeoutSeconds.default(60).describe('Bound of each request to this upstream (seconds).'),
    external: EXTERNAL,
    privacy: UPSTREAM_PRIVACY,
  })
  .strict();

const httpUpstream = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'url must be an http:// or https:// address' }).describe("The server's Streamable HTTP address."),
    headers: z
      .record(z.string(), z.string().regex(/^[\t\x20-\x7e]*$/, 'a header value must be printable ASCII (no "…" or other symbols)'))
      .default({})
      .describe('HTTP headers sent with every request, e.g. Authorization (printable ASCII).'),
    timeout_seconds: timeoutSeconds.default(60).describe('Bound of each request to this upstream (seconds).'),
    external: EXTERNAL,
    privacy: UPSTREAM_PRIVACY,
  })
  .strict();

const isMapping = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Runs a cross-field check even when another field of the same mapping already failed (`port: x` beside
 * `host: 0.0.0.0`): zod skips checks after such a problem, so the second would surface only once the
 * first is fixed, though every problem is reported at once. The value may then be half-parsed, so each
 * check guarded by this reads its fields' types before it trusts them.
 */
const EVEN_WITH_OTHER_PROBLEMS = { when: (payload: z.core.ParsePayload) => isMapping(payload.value) };

/**
 * Both kinds of upstream in one mapping, `command` and `url` optional: the check of an entry whose kind
 * is unknown (it has both keys, or neither, as with a misspelt `comand`), so its other fields are still
 * checked, each with its field path, and a key of neither kind is still named.
 */
const eitherUpstream = z
  .object({
    ...stdioUpstream.shape,
    ...httpUpstream.shape,
    command: stdioUpstream.shape.command.optional(),
    url: httpUpstream.shape.url.optional(),
  })
  .strict();

/** Keys only one kind of upstream has: an entry of unknown kind that has some of each is named for it. */
const STDIO_ONLY = Object.keys(stdioUpstream.shape).filter((k) => k !== 'command' && !(k in httpUpstream.shape));
const HTTP_ONLY = Object.keys(httpUpstream.shape).filter((k) => k !== 'url' && !(k in stdioUpstream.shape));

/**
 * One upstream: stdio (`command`) or Streamable HTTP (`url`), never both. The kind is picked by the keys
 * present before anything is validated, so every problem comes from that kind's own schema with its
 * field path (`env.PORT: must be a string`); a plain union could only say that neither kind matched.
 * Both keys, or neither, get one sentence, and the rest of the entry is still checked against both
 * kinds at once (eitherUpstream), so a misspelt `command` hides none of the other problems.
 */
export const upstreamSchema = z
  .unknown()
  .superRefine((v, ctx) => {
    const hasCommand = isMapping(v) && 'command' in v;
    const hasUrl = isMapping(v) && 'url' in v;
    if (isMapping(v) && hasCommand === hasUrl) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: hasCommand
          ? 'an upstream has either `command` (stdio) or `url` (Streamable HTTP), not both: keep the one this server speaks'
          : 'an upstream needs either `command` (a program to start, stdio) or `url` (a Streamable HTTP address)',
      });
      const stdioKeys = STDIO_ONLY.filter((k) => k in v);
      const httpKeys = HTTP_ONLY.filter((k) => k in v);
      if (stdioKeys.length > 0 && httpKeys.length > 0)
        ctx.addIssue({
          code: 'custom',
          path: [],
          message: `${stdioKeys.join(', ')} belong${stdioKeys.length === 1 ? 's' : ''} to a stdio upstream (command) and ${httpKeys.join(', ')} to a Streamable HTTP one (url): keep those of the kind this server speaks`,
        });
    }
    const checked = (hasCommand === hasUrl && isMapping(v) ? eitherUpstream : hasUrl ? httpUpstream : stdioUpstream).safeParse(v);
    for (const issue of checked.error?.issues ?? []) ctx.addIssue({ ...issue } as z.core.$ZodRawIssue);
  })
  // Runs only when the check above found nothing; it gives the typed value with its defaults.
  .pipe(z.union([stdioUpstream, httpUpstream]));

/** One tool rule. */
export const toolRuleSchema = z
  .object({
    action: z.enum(['allow', 'confirm', 'deny']).describe('allow: runs at once; confirm: waits for a person; deny: never runs.'),
    risk: z
      .enum(['low', 'medium', 'high'])
      .optional()
      .describe('The risk a person is shown, whatever the classifier says; high needs a second yes on a paired device.'),
    readback: z
      .object({
        tool: z.string().min(1),
        args: z.record(z.string(), z.unknown()).default({}),
        expect: z.record(z.string().min(1), z.unknown()).refine((e) => Object.keys(e).length > 0, 'expect needs at least one path'),
      })
      .strict()
      .optional()
      .describe('After an executed call: read the target back with an allowed read tool and compare (tool, args, expect).'),
  })
  .strict();

/** Host names that reach only this machine: the web page, the webhook listener and the MCP endpoint default to them. */
export const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

/** `confirm.web`: the approval page. Off loopback only behind an authenticating proxy (identity_header). */
const webSchema = z
  .object({
    enabled: z.boolean().default(false).describe('Serve the approval page.'),
    host: z.string().min(1).default('127.0.0.1').describe('Listen address: loopback, unless identity_header is set.'),
    port: z.number().int().min(0).max(65535).default(8471).describe('Listen port; 0 picks a free port.'),
    identity_header: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,64}$/, 'identity_header is an HTTP header name, e.g. X-Forwarded-User')
      .optional()
      .describe('Header an authenticating reverse proxy sets to the signed-in user, e.g. X-Forwarded-User.'),
    public_url: z
      .url({ protocol: /^https?$/, error: 'public_url must be an http:// or https:// address' })
      .optional()
      .describe('The address people open through the proxy, e.g. https://approve.example.com: its host is accepted in Host and Origin.'),
    key_file: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A file holding the page's access key, at least 32 characters of A-Z a-z 0-9 _ - (openssl rand -hex 32 > web.key; chmod 600 web.key): with a fixed port, the page's address survives a restart and an open tab reconnects by itself. Without it, each start makes a new key.",
      ),
  })
  .strict()
  .refine((w) => typeof w.host !== 'string' || LOOPBACK.has(w.host) || w.identity_header !== undefined, {
    path: ['host'],
    message:
      'web.host must be a loopback address (127.0.0.1, localhost or ::1) unless an authenticating reverse proxy is in front: then set web.identity_header to the header it sets',
    ...EVEN_WITH_OTHER_PROBLEMS,
  });

/** `confirm.webhook`: POST each held call to a receiver that answers at decision_url. */
const webhookSchema = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'webhook.url must be an https:// address' })
      .describe('The receiver: https://, or http:// to loopback with allow_insecure_loopback.'),
    secret_file: z.string().min(1).describe('File holding the shared secret (at least 32 characters); tokens are HMAC-SHA256(secret, call_id).'),
    ca_file: z.string().min(1).optional().describe("PEM file of the CA that signed the receiver's certificate, for a private CA."),
    allow_insecure_loopback: z.boolean().default(false).describe('Allow http:// to a receiver on this host.'),
    listen_host: z.string().min(1).default('127.0.0.1').describe("Where the gate listens for the receiver's decisions (POST /decision/<call_id>)."),
    listen_port: z.number().int().min(0).max(65535).default(8472).describe('Port of the decision listener; 0 picks a free port.'),
    public_url: z
      .url({ protocol: /^https?$/, error: 'public_url must be an http:// or https:// address' })
      .optional()
      .describe('The address the receiver reaches the listener at (base of decision_url), when not http://<listen_host>:<listen_port>.'),
    timeout_seconds: timeoutSeconds.default(10).describe('Bound of delivering one call to the receiver (seconds).'),
  })
  .strict()
  .superRefine((w, ctx) => {
    // A url that is no http(s) address at all has its own problem already.
    const u = typeof w.url === 'string' && URL.canParse(w.url) ? new URL(w.url) : undefined;
    if (u?.protocol !== 'http:') return;
    const loopback = LOOPBACK.has(u.hostname.replace(/^\[|\]$/g, ''));
    if (!loopback || w.allow_insecure_loopback !== true)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: loopback
          ? 'webhook.url is plain http: use https://, or set allow_insecure_loopback: true for a receiver on this host'
          : `webhook.url must be https:// (${u.hostname} is not a loopback address; plain http is allowed only to a receiver on this host, with allow_insecure_loopback: true)`,
      });
  }, EVEN_WITH_OTHER_PROBLEMS);

/** A user name devices are paired to and calls belong to: letters, digits, . _ - (shown on every card). */
const userName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a user name is a letter or digit, then up to 63 letters, digits, ".", "_" or "-" (e.g. alice)');

/**
 * `confirm.device.voice`: answering a card by voice. The gate transcribes the device's recording itself
 * (the words come from the recording, never from the model's account of it): with a local command, or
 * an OpenAI-compatible transcription endpoint (`POST <url>` multipart, as whisper.cpp's server speaks).
 */
const voiceSchema = z
  .object({
    /**
     * A command run per recording; `{file}` in an argument is replaced by a 16 kHz mono 16-bit WAV file,
     * and what it prints on stdout is the transcript. Prefer `pocketsphinx: true` for pocketsphinx (its default model loses a spoken "not").
     */
    command: z.array(z.string().min(1)).min(1, 'command needs at least the program').optional(),
    /**
     * Debian's pocketsphinx (`pocketsphinx_continuous`, model `pocketsphinx-en-us`) with lookfirst's own
     * grammar of answer words (confirm/voice/pocketsphinx.ts): offline, and far safer than its default
     * language model, which hears a lost "not" ("not two" as "two").
     */
    pocketsphinx: z.literal(true, { error: 'pocketsphinx: true is the only value (leave it out for command or url)' }).optional(),
    /** An OpenAI-compatible transcription endpoint, e.g. `http://127.0.0.1:8080/v1/audio/transcriptions`. */
    url: z.url({ protocol: /^https?$/, error: 'voice.url must be an http:// or https:// address' }).optional(),
    /** The `model` field sent to the endpoint. */
    model: z.string().min(1).default('whisper-1'),
    /** File holding the endpoint's API key (sent as a bearer token); none when absent. */
    api_key_file: z.string().min(1).optional(),
    /** Languages whose consent words are understood (confirm/devices/consent-words/). */
    languages: z
      .array(z.enum(['en', 'hi']))
      .min(1)
      .default(['en']),
    /** Longest recording accepted (seconds). */
    max_seconds: z.number().positive().max(60).default(15),
    /** Bound of one transcription (seconds); past it, the answer is refused. */
    timeout_seconds: timeoutSeconds.default(20),
  })
  .strict()
  .superRefine(
    (v, ctx) => {
      if ([v.command, v.url, v.pocketsphinx].filter((x) => x !== undefined).length !== 1)
        ctx.addIssue({
          code: 'custom',
          path: [],
          message:
            'voice needs exactly one recogniser: pocketsphinx: true (offline, Debian pocketsphinx with its en-us model), command (a program of yours), or url (an OpenAI-compatible transcription endpoint)',
        });
      // The recording reaches a command only through {file}: a command without it would transcribe nothing
      // (or whatever it reads instead). Checked here, with the key's line, not first when a phone answers.
      const command: unknown = v.command;
      if (Array.isArray(command) && command.length > 0 && !command.some((a) => typeof a === 'string' && a.includes('{file}')))
        ctx.addIssue({
          code: 'custom',
          path: ['command'],
          message: `command must pass the recording to the program as {file} in an argument, e.g. [${JSON.stringify(String(command[0])).slice(0, 40)}, "{file}"] (it is replaced by a 16 kHz mono WAV file's path)`,
        });
    },
    // Run even when another voice field failed (languages: [de]): every problem is reported at once, as
    // the rest of the config's are, instead of the recogniser's only after the first is fixed. The checks
    // above read only whether keys are present, so a half-parsed value is safe here.
    { when: (payload) => typeof payload.value === 'object' && payload.value !== null },
  );

/**
 * `confirm.device`: paired phones. The gate serves the device page and its API (docs/device-api.md) on
 * its own listener; every request but pairing is signed with a device key. Browsers give a page the
 * crypto it needs to sign only in a secure context: off loopback, serve it over TLS (`tls`) or behind a
 * TLS proxy (`public_url: https://…`).
 */
const deviceSchema = z
  .object({
    enabled: z.boolean().default(false).describe('Serve the device page and its API for paired phones.'),
    host: z.string().min(1).default('127.0.0.1').describe('Listen address; off loopback, tls or an https public_url is required.'),
    port: z.number().int().min(0).max(65535).default(8473).describe('Listen port; 0 picks a free port.'),
    public_url: z
      .url({ protocol: /^https?$/, error: 'public_url must be an http:// or https:// address' })
      .optional()
      .describe('The address phones open, when a TLS proxy is in front, e.g. https://phone.example.com.'),
    tls: z
      .object({ cert_file: z.string().min(1), key_file: z.string().min(1) })
      .strict()
      .optional()
      .describe('Serve the device page over HTTPS with this certificate and key (PEM files).'),
    users: z.record(z.string().min(1), userName).default({}).describe('Whose calls are whose: principal (stdio, loopback, token:<digest>) → user.'),
    default_user: userName.default('owner').describe('The user of every call whose principal users does not name.'),
    voice: voiceSchema.optional().describe('Answering a card by voice: exactly one of pocketsphinx, command or url.'),
  })
  .strict()
  .superRefine((d, ctx) => {
    const publicUrl: unknown = d.public_url;
    if (typeof d.host !== 'string' || LOOPBACK.has(d.host) || d.tls !== undefined || (typeof publicUrl === 'string' && publicUrl.startsWith('https:'))) return;
    ctx.addIssue({
      code: 'custom',
      path: ['host'],
      message:
        'device.host off loopback needs HTTPS: set device.tls (cert_file, key_file), or put a TLS proxy in front and set device.public_url to its https:// address (phones sign requests only on a secure page)',
    });
  }, EVEN_WITH_OTHER_PROBLEMS);

/**
 * `store`: where the gate keeps state it must act on next (pending approvals, holds, locks, nonces).
 * `sqlite` (the default) is one file, beside the audit log unless `path` says otherwise; `postgres` needs
 * `url`; `memory` keeps nothing across restarts. The audit log stays the record of every decision.
 */
const STORE_KINDS = ['memory', 'sqlite', 'postgres'] as const;
const storeSchema = z
  .object({
    kind: z.enum(STORE_KINDS).default('sqlite').describe('sqlite (one file), postgres (shared by replicas) or memory (nothing kept).'),
    path: z
      .string()
      .min(1, 'path must not be empty')
      .optional()
      .describe('sqlite only: the file, relative to the config; default lookfirst-state.db beside the audit log.'),
    url: z.string().optional().describe('postgres only, required: a postgres:// or postgresql:// connection string.'),
  })
  .strict()
  .superRefine((s, ctx) => {
    // With a kind that is none of the three, which of url and path belong is unknown: its own problem says so.
    if (!(STORE_KINDS as readonly unknown[]).includes(s.kind)) return;
    if (s.kind === 'postgres' && s.url === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: 'store.url is required with kind: postgres (e.g. postgresql://lookfirst@db.internal:5432/lookfirst)',
      });
    if (s.kind === 'postgres' && typeof s.url === 'string' && !/^postgres(ql)?:\/\/./.test(s.url))
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'store.url must start with postgres:// or postgresql://' });
    if (s.kind !== 'postgres' && s.url !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['url'],
        message: `store.url is only for kind: postgres (this store is ${s.kind}): remove it or set kind: postgres`,
      });
    if (s.kind !== 'sqlite' && s.path !== undefined)
      ctx.addIssue({ code: 'custom', path: ['path'], message: `store.path is only for kind: sqlite (this store is ${s.kind}): remove it or set kind: sqlite` });
  }, EVEN_WITH_OTHER_PROBLEMS);

/** A placeholder label: what the agent sees before the id, e.g. `EMPLOYEE_ID` in `[[EMPLOYEE_ID_…]]`. */
const placeholderLabel = z
  .string()
  .regex(/^[A-Z][A-Z0-9_]{0,31}$/, 'a label is an upper-case letter, then up to 31 upper-case letters, digits or _ (e.g. EMPLOYEE_ID)');

/** One custom pattern: a JavaScript regular expression; what it matches (its first group, if it has one) is masked. */
/** Labels the built-in detectors use: a custom pattern under one would pass for what it is not. */
const BUILT_IN_LABELS = new Set(['IBAN', 'IBAN_INVALID', 'CARD', 'EMAIL', 'PHONE', 'SECRET', 'NAME']);

const privacyPattern = z
  .object({
    label: placeholderLabel.refine(
      (l) => !BUILT_IN_LABELS.has(l),
      'this label is a built-in kind (IBAN, CARD, EMAIL, PHONE, SECRET, NAME): give your pattern its own, e.g. EMPLOYEE_ID',
    ),
    pattern: z.string().min(1, 'pattern must not be empty'),
  })
  .strict()
  .superRefine((p, ctx) => {
    // An empty or non-string pattern has its own problem already.
    if (typeof p.pattern !== 'string' || p.pattern === '') return;
    let re: RegExp;
    try {
      re = new RegExp(p.pattern, 'u');
    } catch (err) {
      ctx.addIssue({ code: 'custom', path: ['pattern'], message: `not a valid regular expression: ${(err as Error).message}` });
      return;
    }
    if (re.test(''))
      ctx.addIssue({
        code: 'custom',
        path: ['pattern'],
        message: 'the pattern matches the empty string: it would mask nothing useful; make it match at least one character',
      });
  }, EVEN_WITH_OTHER_PROBLEMS);

/**
 * `privacy`: private values in what upstreams answer reach the client only as placeholders
 * (`[[IBAN_<32 hex>]]`), and are put back in arguments inside the gate (src/privacy/). Present = enabled.
 */
const privacySchema = z
  .object({
    enabled: z.boolean().default(true).describe('On when the section is there.'),
    ttl_seconds: timeoutSeconds.default(86_400).describe('How long a placeholder can be resolved after it was issued (seconds).'),
    names: z
      .array(z.string().trim().min(2, 'a name needs at least 2 characters'))
      .default([])
      .describe('Names to mask as NAME wherever they appear (whole words, any case).'),
    patterns: z
      .array(privacyPattern)
      .default([])
      .describe("Your own kinds: a label and a JavaScript regular expression (u flag); in YAML, write it in 'single quotes'."),
    /** Regions (ISO 3166-1 alpha-2) whose national phone forms are recognised, besides +E.164. */
    phone_regions: z
      .array(
        z
          .string()
          .regex(/^[A-Z]{2}$/, 'a region is two upper-case letters (ISO 3166-1 alpha-2), e.g. DE')
          .refine((r) => !/^[A-Z]{2}$/.test(r) || isSupportedCountry(r), 'not a region libphonenumber knows (ISO 3166-1 alpha-2, e.g. DE, US, GB)'),
      )
      .optional(),
    allow_binary: z.boolean().default(false).describe('Let images, audio and blobs through unscanned.'),
  })
  .strict();

/** `redact`: a function of yours that masks each preview before a person or a receiver sees it. */
const redactSchema = z
  .object({
    hook: z
      .string()
      .regex(/^[^#]+(#[A-Za-z_$][A-Za-z0-9_$]*)?$/, 'hook is a module path, optionally with #exportName, e.g. ./my-redact.js#redact')
      .describe('An ES module relative to the config file, and its export: ./file.js#exportName (default export name redact).'),
    timeout_ms: z.number().int().positive().max(60_000).default(1000).describe('How long the hook may take per preview (ms); past it, the call is denied.'),
  })
  .strict();

/**
 * `metrics`: a Prometheus endpoint (`GET /metrics`) on a listener of its own. Off by default. It shows
 * counts, durations and upstream names, never arguments, principals or tokens; off loopback, anyone who
 * reaches the port reads them (the gate warns at start).
 */
const metricsSchema = z
  .object({
    enabled: z.boolean().default(false).describe('Serve GET /metrics (Prometheus text format) while the gate runs.'),
    host: z.string().min(1).default('127.0.0.1').describe('Where the metrics endpoint listens; off loopback, whoever reaches the port reads the counts.'),
    /** 0 picks a free port (the address is printed at start). */
    port: z.number().int().min(0).max(65535).default(9464).describe('Port of the metrics endpoint; 0 picks a free one (the address is printed at start).'),
    /** Also prom-client's process metrics (CPU, memory, event-loop lag, open handles), prefixed `lookfirst_`. */
    process: z.boolean().default(true).describe('Also the process metrics (CPU, memory, event-loop lag, handles), prefixed lookfirst_.'),
  })
  .strict()
  .describe('A Prometheus endpoint of its own: calls by outcome, decisions by channel, time to decision, upstream and audit latency, held calls.');

/**
 * `tracing`: OpenTelemetry spans of each tools/call, sent to an OTLP/HTTP receiver. Off by default; when a
 * call's `_meta` carries W3C trace context (`traceparent`, `tracestate`), the gate's span is its child.
 */
const tracingSchema = z
  .object({
    enabled: z
      .boolean()
      .default(false)
      .describe('Send a span of each tools/call (and its classify, hold, forward and read-back steps) to an OTLP/HTTP receiver.'),
    /** The receiver's traces URL (OTLP/HTTP, JSON), e.g. `http://127.0.0.1:4318/v1/traces`. */
    otlp_endpoint: z
      .url({ protocol: /^https?$/, error: 'otlp_endpoint must be an http:// or https:// address' })
      .default('http://127.0.0.1:4318/v1/traces')
      .describe("The receiver's traces URL (OTLP/HTTP, JSON encoding)."),
    /** The `service.name` resource attribute of every span. */
    service_name: z.string().min(1).max(128).default('lookfirst').describe('The service.name of every span.'),
  })
  .strict()
  .describe('OpenTelemetry traces; a call whose _meta carries traceparent (W3C Trace Context) gets a span that is the child of the client span.');

/** Whole config file. */
export const configSchema = z
  .object({
    // The names are checked here rather than by the record's key schema: zod skips the entry of a key that
    // fails, so `Files:` would hide every problem inside it. json-schema.ts gives editors the pattern back.
    upstreams: z
      .record(z.string(), upstreamSchema)
      .superRefine((u, ctx) => {
        if (Object.keys(u).length === 0) ctx.addIssue({ code: 'custom', path: [], message: 'at least one upstream is needed' });
        for (const name of Object.keys(u)) if (!UPSTREAM_NAME.test(name)) ctx.addIssue({ code: 'custom', path: [name], message: UPSTREAM_NAME_RULE });
      }, EVEN_WITH_OTHER_PROBLEMS)
      .describe('The MCP servers behind the gate, by name: each has command (stdio) or url (Streamable HTTP).'),
    rules: z
      .object({
        tools: z
          .record(z.string().min(1), toolRuleSchema)
          .default({})
          .describe('Rules by the tool name the client sees (<upstream>__<tool> with several upstreams); glob patterns allowed.'),
      })
      .strict()
      .default({ tools: {} })
      .describe('Tool rules: allow, confirm or deny by tool name.'),
    confirm: z
      .object({
        timeout_seconds: timeoutSeconds.default(120).describe('One timeout for all channels (seconds); a timeout is a denial.'),
        elicitation: z.boolean().default(true).describe('Ask inside the client (MCP elicitation) when it can.'),
        terminal: z.boolean().default(false).describe("Also ask on the gate's controlling terminal (/dev/tty): for lookfirst serve started by hand."),
        hold_seconds: timeoutSeconds
          .default(45)
          .describe('How long one request waits for a decision shown outside the client before answering pending (seconds).'),
        progress_seconds: z
          .number()
          .positive()
          .max(3600)
          .default(10)
          .describe('While a call waits for a person, a progress notification this often (seconds), when the client gave a token.'),
        web: webSchema.prefault({}).describe('The local approval page.'),
        webhook: webhookSchema.optional().describe('POST each held call to a receiver that answers at decision_url.'),
        /**
         * `wait` (default): a held call waits for its decision (answering `pending` after hold_seconds);
         * `pending`: it returns at once `pending_user_confirmation`, and `lookfirst_confirm` runs it once
         * a person confirmed and every named check passes.
         */
        mode: z
          .enum(['wait', 'pending'])
          .default('wait')
          .describe('wait: a held call waits for its decision; pending: it returns pending_user_confirmation at once and lookfirst_confirm runs it.'),
        device: deviceSchema.optional().describe('Paired phones: approve on your phone, optionally by voice.'),
      })
      .strict()
      .prefault({})
      .describe('How a person is asked: in the client, on the web page, by webhook, on the terminal or on a paired phone.'),
    /** `serve --transport http`: where the MCP endpoint listens, and the bearer token it requires. */
    http: z
      .object({
        host: z.string().min(1).default('127.0.0.1').describe('Listen address; off loopback, token_file is required.'),
        port: z.number().int().min(0).max(65535).default(8470).describe('Listen port; 0 picks a free port.'),
        token_file: z.string().min(1).optional().describe('File of bearer tokens, one a line, each at least 32 characters. Required off loopback.'),
        /** Address clients use, when a TLS proxy is in front: its host is accepted in Host and Origin. */
        public_url: z.url({ protocol: /^https?$/, error: 'public_url must be an http:// or https:// address' }).optional(),
      })
      .strict()
      .refine((h) => typeof h.host !== 'string' || LOOPBACK.has(h.host) || h.token_file !== undefined, {
        path: ['host'],
        message: 'http.host off loopback needs http.token_file: every request must then carry the bearer token',
        ...EVEN_WITH_OTHER_PROBLEMS,
      })
      .prefault({})
      .describe('serve --transport http: where the MCP endpoint listens, and the bearer tokens it requires.'),
    execution: z
      .object({ timeout_seconds: timeoutSeconds.default(60).describe('Bounds each upstream execution and each read-back request (seconds).') })
      .strict()
      .default({ timeout_seconds: 60 }),
    dry_run: z.boolean().default(false).describe('Dry run (serve --dry-run): reads run for real; every other call is recorded and answered, never executed.'),
    taint: z
      .object({
        untrusted: z
          .array(z.string().min(1, 'a pattern cannot be empty'))
          .optional()
          .describe('Tool-name globs whose output is untrusted; default: names with fetch, search, web, mail and the like.'),
      })
      .strict()
      .default({}),
    audit: z
      .object({
        log: z.string().min(1).default('audit.jsonl').describe('The signed, hash-chained audit log (JSON Lines), relative to the config file.'),
        key: z.string().min(1).default('audit.key').describe('Ed25519 private key (PEM, mode 0600); the public key sits beside it as audit.pub.'),
        reads: z.boolean().default(true).describe('Log allowed reads too. Writes are always logged.'),
        receipts: z.string().min(1).default('receipts').describe('Folder of the signed receipts of executed writes.'),
      })
      .strict()
      .default({ log: 'audit.jsonl', key: 'audit.key', reads: true, receipts: 'receipts' })
      .describe('Where the audit log, its key and the receipts live.'),
    store: storeSchema.prefault({}).describe('Where the gate keeps its state: sqlite (default), postgres (shared by replicas) or memory.'),
    // A bare `privacy:` (null) turns it on with the defaults, as `privacy: {}` does.
    privacy: z
      .preprocess((v) => (v === null ? {} : v), privacySchema.optional())
      .describe('Private values in answers reach the client only as placeholders. Present (even bare) = on.'),
    redact: redactSchema.optional().describe('A function of yours that masks each preview before a person or a receiver sees it.'),
    metrics: metricsSchema.prefault({}),
    tracing: tracingSchema.prefault({}),
  })
  .strict();

/** Parsed config as the schema gives it (paths still relative). */
export type RawConfig = z.infer<typeof configSchema>;
