/**
 * The upstreams' tools as the gate would see them: exposed names (`<upstream>__<tool>` with several
 * upstreams, as gateway/catalogue.ts names them), the classifier's verdict on each definition (name,
 * description, schemas, then annotations, with the upstream's namespace prefixes: the same calls the
 * catalogue makes), and the rule that applies. Pure.
 */
import type { Config } from '../config/load.js';
import { combine, judgeTool, namespacePrefixes } from '../policy/classify.js';
import { compilePolicy, matchRule, unmatchedRules } from '../policy/evaluate.js';
import type { Classification, ToolAnnotations } from '../types.js';
import type { UpstreamFact } from './facts.js';

/** One listed tool, judged. */
export interface ToolVerdict {
  exposed: string;
  upstream: string;
  /** The classifier's verdict on the definition alone (arguments can only make a call stricter). */
  classification: Classification;
  /** The rule pattern that decides this tool, if any. */
  rule?: string;
  /**
   * The classifier found a write in the definition itself (a verb, a schema, an annotation), rather than
   * calling the tool a change only because nothing said it reads ("what is not known to read counts as a
   * change"). Such a tool is still held, but its card's risk is a guess: a rule should say what it is.
   */
  confident: boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The classifier's fallback reason: the verdict is "write" only because nothing said "read". */
const UNSURE = /counts as a change/;

/**
 * Judges every listed tool and matches the config's rules against them.
 * @returns `tools` (first definition of a name wins, as in the catalogue), `unmatched` (rules matching no
 *   listed tool, with their line), `missing` (upstreams that could not be listed).
 */
export function exposedTools(
  config: Pick<Config, 'rules' | 'upstreams'>,
  upstreams: readonly UpstreamFact[],
): { tools: ToolVerdict[]; unmatched: { pattern: string; line?: number }[]; missing: string[] } {
  const policy = compilePolicy(config.rules);
  const prefixed = config.upstreams.length > 1;
  const tools: ToolVerdict[] = [];
  const seen = new Set<string>();
  for (const u of upstreams) {
    if (!u.ok) continue;
    const defs = u.tools.filter((d): d is Record<string, unknown> & { name: string } => isObject(d) && typeof d.name === 'string');
    const prefixes = namespacePrefixes(defs.map((d) => d.name));
    for (const def of defs) {
      const exposed = prefixed ? `${u.name}__${def.name}` : def.name;
      if (seen.has(exposed)) continue;
      seen.add(exposed);
      const annotations = isObject(def.annotations) ? (def.annotations as ToolAnnotations) : undefined;
      const classification = combine(judgeTool(def, prefixes), undefined, annotations);
      const rule = matchRule(policy, exposed)?.pattern;
      tools.push({
        exposed,
        upstream: u.name,
        classification,
        rule,
        confident: classification.kind === 'mutation' && !classification.reasons.some((r) => UNSURE.test(r)),
      });
    }
  }
  const lines = new Map(config.rules.map((r) => [r.pattern, r.line]));
  const unmatched = unmatchedRules(
    policy,
    tools.map((t) => t.exposed),
  ).map((pattern) => ({ pattern, line: lines.get(pattern) }));
  return { tools, unmatched, missing: upstreams.filter((u) => !u.ok).map((u) => u.name) };
}
