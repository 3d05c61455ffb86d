/**
 * The answers cards.ts gives: a card set as the JSON a device receives, and a refused decision with the
 * first failed check, every check, and the HTTP status.
 */

import type { CheckResult } from '../../types.js';
import type { PendingView } from '../pending.js';
import { showHiddenInJson } from '../visible.js';
import type { CardSet, CardSetRecord, DeviceDecision } from './card-types.js';
import { firstFailed } from './checks.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** The arguments as a person reads them: indented JSON, every hidden or look-alike character as `\uXXXX`. */
function prettyArguments(canonical: string): string {
  try {
    return showHiddenInJson(JSON.stringify(JSON.parse(canonical), null, 2));
  } catch {
    return showHiddenInJson(canonical);
  }
}

/** The answer to a decision with a failed check: its name, reason, every check, and the HTTP status. */
export function refused(checks: CheckResult[]): DeviceDecision {
  const f = firstFailed(checks) ?? { name: 'card_set_open', ok: false, detail: 'refused' };
  return { ok: false, failed: f.name, reason: f.detail ?? f.name, checks, httpStatus: f.name === 'device_paired' ? 403 : 409 };
}

/** The JSON a device gets for a set. */
export function render(setId: string, set: CardSetRecord, nonces: string[], views: readonly PendingView[]): CardSet {
  const byId = new Map(views.map((v) => [v.callId, v]));
  const cards = set.cards.flatMap((c, i) => {
    const v = byId.get(c.callId);
    if (!v) return [];
    return [
      {
        position: i + 1,
        call_id: c.callId,
        tool: v.tool,
        summary: c.summary,
        arguments: prettyArguments(v.argsCanonical),
        purpose: v.purpose,
        risk: v.risk,
        risk_reason: v.riskReason,
        ...(v.diff !== undefined ? { diff: v.diff } : {}),
        args_sha256: c.argsSha256,
        client: v.client,
        lookalikes: v.lookalikes,
        stage: c.stage,
        nonce: nonces[i] as string,
        expires_at: iso(c.expiresAtMs),
        since: iso(v.sinceMs),
      },
    ];
  });
  return { set_id: setId, expires_at: iso(set.expiresAtMs), cards };
}
