/**
 * Shapes shared across layers. Wire shapes (JSON-RPC) are converted to these at the gateway's edge;
 * nothing deeper sees raw protocol messages.
 */

/** What a rule or the classifier says must happen to a tool call. */
export type Action = 'allow' | 'confirm' | 'deny';

/** MCP tool annotations (spec 2025-11-25, `ToolAnnotations`): untrusted hints from the upstream. */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
  title?: string;
}

/** What the classifier (policy/classify.ts) says about one call: what kind, how risky, and why. */
export interface Classification {
  kind: 'read-only' | 'mutation';
  risk: Risk;
  /** Why, most decisive first, in words a person reads (`name word "delete"`). */
  reasons: string[];
}

/** A policy decision for one tool call, with the reason a person can read and, when a rule decided, which. */
export interface Decision {
  action: Action;
  /** The classifier's verdict (always computed: the risk shown to the approver comes from it). */
  classification?: Classification;
  /** Set when untrusted data flows into this state change (gateway/taint.ts): what and from where. */
  taint?: string;
  /** Short reason, e.g. `rule "files__move_*"` or `annotations: readOnlyHint`. */
  reason: string;
  /** The rule pattern that decided, if any. */
  rule?: string;
}

/** A tool call as the gate sees it: exposed name, where it goes, and its arguments fixed by hash. */
export interface ToolCall {
  /** Gate-minted id (UUID), shown to the approver and written in every audit entry of the call. */
  callId: string;
  /** Name as exposed to the client (`files__write_file` with several upstreams). */
  tool: string;
  upstream: string;
  /** Name as the upstream knows it. */
  upstreamTool: string;
  /** Arguments as approved and executed (parsed back from the canonical JSON that was hashed). */
  args: Record<string, unknown>;
  /** RFC 8785 canonical JSON of `args`. */
  argsCanonical: string;
  /** SHA-256 (hex) of `argsCanonical`. */
  argsSha256: string;
}

/**
 * How far an approval proves that a named person decided, per channel:
 * `authenticated` (web page behind an authenticating proxy: the proxy named the person),
 * `shared-secret` (webhook: the receiver proved it holds the secret; the actor is as it reports),
 * `local-terminal` (someone at the gate's controlling terminal; the actor is the OS user running the gate),
 * `self-declared` (web page without a proxy: the name was typed on the page),
 * `client` (MCP elicitation: the client answered, and an autonomous client can answer itself),
 * `device-key` (a paired device signed the decision with its device key and the card's one-time nonce),
 * `operator` (the operator's blanket yes: `lookfirst promote --yes`), `rule` (a rule allowed it; nobody was asked).
 */
export type Trust = 'authenticated' | 'shared-secret' | 'local-terminal' | 'self-declared' | 'client' | 'device-key' | 'operator' | 'rule';

/**
 * One named check of a confirmation, recorded by name in the receipt (audit/receipts.ts) and the log.
 * The device checks (docs/device-api.md): `evidence_exists`, `evidence_for_card_set`, `device_paired`,
 * `card_set_open`, `not_expired`, `evidence_unused`, `words_choose_card`, `action_unchanged`,
 * `nonce_consumed_once`. Other channels record the checks that apply to them (e.g. `page_access_key`,
 * `csrf_token`, `shared_secret`, `controlling_terminal`, `action_unchanged`, `call_open`).
 */
export interface CheckResult {
  /** snake_case name, stable across versions: receipts are verified against it. */
  name: string;
  ok: boolean;
  /** Why it failed, or what it compared (never a secret, nonce or key). */
  detail?: string;
}

/**
 * How a decision was made and what was checked, carried with the decision (Decider.evidence) from the
 * channel that took it to the receipt of the executed call.
 */
export interface Evidence {
  /** The evidence record's reference (`ev_…`), when the decision left one in the store (device decisions). */
  ref?: string;
  /** How the person answered: a tap or voice on a paired device, the page, the webhook receiver, the terminal, the client's own dialog (elicitation), the operator's --yes, or no person (a rule). */
  method: 'tap' | 'voice' | 'page' | 'webhook' | 'terminal' | 'elicitation' | 'operator' | 'rule';
  /** The user the device or the page named. */
  user?: string;
  /** The paired device's id. */
  device?: string;
  /** The card set the decision was taken from (device decisions). */
  cardSet?: string;
  /** What the recogniser heard (voice): the words the decision came from. */
  transcript?: string;
  /** SHA-256 (hex) of the recording's audio samples: a recording is accepted once. */
  audioSha256?: string;
  /** The card text the person was shown (its summary). */
  cardText?: string;
  /** When the card or question was first shown (ms since epoch). */
  shownAtMs?: number;
  /** When the decision was taken (ms since epoch). */
  decidedAtMs: number;
  /** Every check, by name, in the order run. A decision only counts when all passed. */
  checks: CheckResult[];
  /**
   * A high-risk device call's first yes (the second is this evidence's own method): how it was given,
   * what was heard and the recording's SHA-256 (voice), and when (ms since epoch).
   */
  first?: { method: 'tap' | 'voice'; transcript?: string; audioSha256?: string; decidedAtMs: number };
}

/** Coarse risk of a held call, shown to the approver: `high` when the upstream declares it destructive. */
export type Risk = 'low' | 'medium' | 'high';

/** Who decided, as logged: `actor` is `channel:name`, e.g. `web:alice`, `terminal:ops`, `elicitation:claude-code`. */
export interface Decider {
  channel: string;
  actor: string;
  trust: Trust;
  /** Optional free text the person gave with the decision. */
  comment?: string;
  /** The gate replica whose page or webhook took the decision, when replicas share a store. */
  replica?: string;
  /** How it was decided and what was checked (for the receipt). */
  evidence?: Evidence;
}

/** Outcome of asking a human. `actor` says who, e.g. `elicitation:claude-code` or `web:alice`. */
export type Approval =
  | ({ kind: 'approved' } & Decider)
  | { kind: 'denied'; channel: string; actor?: string; trust?: Trust; comment?: string; reason: string; replica?: string; evidence?: Evidence };

/**
 * The gate's verdict on a gated call, returned in `structuredContent.lookfirst` and `_meta.lookfirst`.
 * `outcome`: `executed` (the call was dispatched once; `readback` says what checking found, and a lost
 * connection or timeout is `readback: unclear`), `denied` (nothing was sent upstream; a retry is safe),
 * `unblocked` (a person unlocked the tool; this call itself was not run), `pending` (not run yet: a person
 * has not decided within `confirm.hold_seconds`; the same call again continues the wait), `dry_run` (a dry-run
 * session recorded the call and did not execute it; `lookfirst promote` can replay it).
 */
export interface Verdict {
  outcome: 'executed' | 'denied' | 'unblocked' | 'pending' | 'dry_run';
  reason: string;
  call_id: string;
  args_sha256: string;
  /** Who approved (executed and unknown outcomes only). */
  approved_by?: string;
  /** Who said no, when a person denied it. */
  denied_by?: string;
  upstream_error?: boolean;
  retry_safe?: boolean;
  /** The tool is blocked (an execution could not be confirmed) until a person unlocks it. */
  blocked?: boolean;
  /** After an executed call: did reading the target back confirm the effect? */
  readback?: 'ok' | 'failed' | 'unclear' | 'none';
  /** For `pending`: until when (ISO 8601) the question stays open, and where it is shown. */
  pending_until?: string;
  pending_on?: string[];
  /** Why a read-back is unclear (text), or which fields did not match (path, expected, found). */
  readback_detail?: string | { path: string; expected: unknown; found: unknown }[];
}
