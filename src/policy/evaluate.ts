/**
 * The policy decision for one tool call. Pure: no I/O, no clock, no env.
 *
 * Order (first that applies wins):
 * 1. An explicit rule: a rule naming the tool exactly; else, among glob rules that match, the strictest
 *    (deny over confirm over allow), so no allow pattern can unlock what a deny pattern covers.
 * 2. The classifier (policy/classify.ts): name, arguments, and annotations applied asymmetrically;
 *    read-only → allow, anything else → confirm (fail-safe: not clearly read-only is a write).
 * A rule is how a user overrides the classifier.
 */
import type { Action, Classification, Decision, Risk } from '../types.js';

/** A tool rule from the config. */
export interface ToolRule {
  pattern: string;
  action: Action;
  /** The risk a person is shown, whatever the classifier says (`high` asks a paired device for a second yes). */
  risk?: Risk;
  /** Read-back after execution (carried here, used by the gateway). */
  readback?: { tool: string; args: Record<string, unknown>; expect: Record<string, unknown> };
}

/** Rules prepared for matching. */
export interface Policy {
  exact: Map<string, ToolRule>;
  globs: { rule: ToolRule; test: (name: string) => boolean }[];
}

const STRICTNESS: Record<Action, number> = { allow: 0, confirm: 1, deny: 2 };

/** Compiles rules once; a pattern without `*` or `?` is an exact-name rule. */
export function compilePolicy(rules: readonly ToolRule[]): Policy {
  const exact = new Map<string, ToolRule>();
  const globs: Policy['globs'] = [];
  for (const rule of rules) {
    if (/[*?]/.test(rule.pattern)) {
      const re = globToRegExp(rule.pattern);
      globs.push({ rule, test: (name) => re.test(name) });
    } else exact.set(rule.pattern, rule);
  }
  return { exact, globs };
}

/**
 * Tool-name globs: `*` is any run of characters (including none), `?` exactly one; everything else is
 * literal. Tool names are not paths: `*` crosses `/`, `.` and `__` alike, so `crm__*` covers every tool of
 * the upstream `crm` whatever its name holds (a path-glob library would stop at `/`).
 */
export function globToRegExp(pattern: string): RegExp {
  const body = [...pattern].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/]/g, '\\$&'))).join('');
  return new RegExp(`^${body}$`, 'su');
}

/**
 * Decides what happens to a call of `tool` (its exposed name): an explicit rule first; else the
 * classifier's verdict (read-only → allow, mutation → confirm). The classification travels with the
 * decision either way, for the approver's card.
 */
export function decide(policy: Policy, tool: string, classification: Classification): Decision {
  const rule = matchRule(policy, tool);
  if (rule) {
    const ruled = rule.risk
      ? { ...classification, risk: rule.risk, reasons: [`rule "${rule.pattern}" sets risk ${rule.risk}`, ...classification.reasons] }
      : classification;
    return { action: rule.action, reason: `rule "${rule.pattern}"`, rule: rule.pattern, classification: ruled };
  }
  const why = classification.reasons[0] ?? 'no reason';
  if (classification.kind === 'read-only') return { action: 'allow', reason: `classifier: read-only (${why})`, classification };
  return { action: 'confirm', reason: `classifier: mutation, risk ${classification.risk} (${why})`, classification };
}

/** The rule that applies to a tool name, if any (exact first, then the strictest matching glob). */
export function matchRule(policy: Policy, tool: string): ToolRule | undefined {
  const exact = policy.exact.get(tool);
  if (exact) return exact;
  let best: ToolRule | undefined;
  for (const g of policy.globs) {
    if (g.test(tool) && (!best || STRICTNESS[g.rule.action] > STRICTNESS[best.action])) best = g.rule;
  }
  return best;
}

/** Patterns that match none of the given tool names (each is a warning at start: likely a typo). */
export function unmatchedRules(policy: Policy, tools: readonly string[]): string[] {
  const out: string[] = [];
  for (const pattern of policy.exact.keys()) if (!tools.includes(pattern)) out.push(pattern);
  for (const g of policy.globs) if (!tools.some((t) => g.test(t))) out.push(g.rule.pattern);
  return out;
}
