/**
 * What the page shows, as JSON: every string a person reads is already made safe here (hidden and bidi
 * characters as `\uXXXX`, one line where it must be one line), and the page's script only ever puts
 * these strings into text nodes. Pure.
 */
import { lookalikeLines } from '../confirm/lookalike.js';
import type { HistoryItem, PendingView } from '../confirm/pending.js';
import { oneLine, showHidden, showHiddenInJson } from '../confirm/visible.js';

/** One card. `callId` and `argsSha256` go back verbatim in the decision. */
export interface CardState {
  callId: string;
  argsSha256: string;
  purpose: 'execute' | 'unlock' | 'definition';
  tool: string;
  upstream: string;
  client: string;
  risk: string;
  riskReason: string;
  /** Unified diff (hidden characters escaped), or empty. */
  diff: string;
  summary: string;
  /** Pretty JSON of the arguments, hidden characters as JSON escapes. */
  args: string;
  warnings: string[];
  channels: string[];
  sinceMs: number;
  deadlineMs: number;
}

/** The whole page state, sent on connect and after every change. */
export interface PageState {
  /** Server clock (ms since epoch), so countdowns do not depend on the browser's clock. */
  nowMs: number;
  pending: CardState[];
  history: (Omit<HistoryItem, 'tool' | 'summary' | 'actor' | 'comment'> & { tool: string; summary: string; actor: string; comment: string })[];
}

function pretty(canonical: string): string {
  try {
    return showHiddenInJson(JSON.stringify(JSON.parse(canonical), null, 2));
  } catch {
    return showHiddenInJson(canonical);
  }
}

/** Builds the page state from the queue. */
export function pageState(pending: PendingView[], history: HistoryItem[], nowMs: number): PageState {
  return {
    nowMs,
    pending: pending.map((p) => ({
      callId: p.callId,
      argsSha256: p.argsSha256,
      purpose: p.purpose,
      tool: oneLine(p.tool),
      upstream: p.upstream,
      client: oneLine(p.client).slice(0, 100),
      risk: p.risk,
      riskReason: p.riskReason,
      diff: p.diff ? showHidden(p.diff) : '',
      summary: oneLine(p.summary),
      args: pretty(p.argsCanonical),
      warnings: lookalikeLines(p.lookalikes),
      channels: p.channels,
      sinceMs: p.sinceMs,
      deadlineMs: p.deadlineMs,
    })),
    history: history.map((h) => ({
      ...h,
      tool: oneLine(h.tool),
      summary: oneLine(h.summary),
      actor: oneLine(h.actor ?? ''),
      comment: oneLine(h.comment ?? ''),
    })),
  };
}
