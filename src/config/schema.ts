/**
 * The lookfirst.yaml schema (zod). Unknown keys are errors everywhere (strict objects), so a typo never
 * silently weakens the gate. Defaults are the safe ones: confirmation on, web page off, reads logged.
 */
import { z } from 'zod';

// No leading, trailing or doubled separator: with several upstreams, tools become `<upstream>__<tool>`,
// and this keeps that mapping one-to-one (`a` + `_b` and `a_` + `b` would both be `a___b`).
const upstreamName = z
  .string()
  .regex(
    /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/,
    'an upstream name holds lowercase letters and digits, with single - or _ between them (so that <upstream>__<tool> names cannot collide)',
  );

/** A timeout in seconds: positive, and short enough for a Node timer (2^31-1 ms, about 24.8 days). */
const timeoutSeconds = z.number().positive().max(2_147_483, 'must be at most 2147483 seconds (about 24 days)');

const stdioUpstream = z
  .object({
    command: z.string().min(1, 'command must not be empty'),
    args: z.array(z.string()).default([]),
    env: z.record(z.string(), z.string()).default({}),
    cwd: z.string().optional(),
    timeout_seconds: timeoutSeconds.default(60),
  })
  .strict();

const httpUpstream = z
  .object({
    url: z.url({ protocol: /^https?$/, error: 'url must be an http:// or https:// address' }),
    headers: z.record(z.string(), z.string()).default({}),
    timeout_seconds: timeoutSeconds.default(60),
  })
  .strict();

/** One upstream: stdio (`command`) or Streamable HTTP (`url`), never both. */
export const upstreamSchema = z.union([stdioUpstream, httpUpstream], {
  error: 'an upstream needs either `command` (stdio) or `url` (Streamable HTTP), not both, and no other keys',
});

/** One tool rule. */
export const toolRuleSchema = z
  .object({
    action: z.enum(['allow', 'confirm', 'deny']),
    /** After an executed call: read the target back with an allowed read tool and compare. */
    readback: z
      .object({
        tool: z.string().min(1),
        args: z.record(z.string(), z.unknown()).default({}),
        expect: z.record(z.string().min(1), z.unknown()).refine((e) => Object.keys(e).length > 0, 'expect needs at least one path'),
      })
      .strict()
      .optional(),
  })
  .strict();

/** Whole config file. */
export const configSchema = z
  .object({
    upstreams: z.record(upstreamName, upstreamSchema).refine((u) => Object.keys(u).length > 0, 'at least one upstream is needed'),
    rules: z
      .object({ tools: z.record(z.string().min(1), toolRuleSchema).default({}) })
      .strict()
      .default({ tools: {} }),
    confirm: z
      .object({
        timeout_seconds: timeoutSeconds.default(120),
        elicitation: z.boolean().default(true),
        web: z
          .object({
            enabled: z.boolean().default(false),
            host: z
              .enum(['127.0.0.1', 'localhost', '::1'], {
                error: 'web.host must be a loopback address (127.0.0.1, localhost or ::1)',
              })
              .default('127.0.0.1'),
            port: z.number().int().min(0).max(65535).default(8471),
          })
          .strict()
          .default({ enabled: false, host: '127.0.0.1', port: 8471 }),
      })
      .strict()
      .default({ timeout_seconds: 120, elicitation: true, web: { enabled: false, host: '127.0.0.1', port: 8471 } }),
    execution: z
      .object({ timeout_seconds: timeoutSeconds.default(60) })
      .strict()
      .default({ timeout_seconds: 60 }),
    audit: z
      .object({
        log: z.string().min(1).default('audit.jsonl'),
        key: z.string().min(1).default('audit.key'),
        reads: z.boolean().default(true),
      })
      .strict()
      .default({ log: 'audit.jsonl', key: 'audit.key', reads: true }),
  })
  .strict();

/** Parsed config as the schema gives it (paths still relative). */
export type RawConfig = z.infer<typeof configSchema>;
