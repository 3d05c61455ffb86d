/**
 * lookfirst as a library: explicit named exports only. The gate itself runs from the CLI (`lookfirst
 * serve`); these are the parts worth embedding: the decision, config loading, the audit format and its
 * verifier (also at `lookfirst/verify`, without the gateway).
 */

export { canonicalJson, sha256Hex } from './audit/canonical.js';
export { type AuditEntry, type AuditEvent, type AuditFields, ENTRY_VERSION, encodeEntry, GENESIS_PREV, verifyEntrySignature } from './audit/entry.js';
export { type HeadInput, type Problem, type ProblemKind, type VerifyReport, verifyLog } from './audit/verify/verify.js';
export { type Config, loadConfig, parseConfig, type UpstreamConfig } from './config/load.js';
export { ConfigError, type ConfigProblem, type ErrorCode, LookfirstError } from './errors.js';
/**
 * The gate inside your own MCP server (no proxy process): register read and write tools, connect any SDK
 * server transport; writes wait for a person on the configured channels, everything lands in the signed
 * audit log. See docs/library.md.
 */
export { createGatedServer } from './library/create-gated-server.js';
export type {
  ArgsOf,
  GatedConfirmOptions,
  GatedRule,
  GatedServer,
  GatedServerOptions,
  GatedStoreOptions,
  InputSchema,
  JsonSchemaObject,
  ReadbackAnswer,
  ToolContext,
  ToolHandler,
  ToolSpec,
  WriteToolSpec,
} from './library/types.js';
export { compilePolicy, decide, globToRegExp, matchRule, type Policy, type ToolRule } from './policy/evaluate.js';
export type { Action, Approval, Decision, ToolAnnotations, ToolCall, Verdict } from './types.js';
