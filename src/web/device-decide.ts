/**
 * The device endpoint's edge for decisions: turns a decide body into the fields `Cards.decide` takes, and
 * a decision's outcome (tap or voice) into the HTTP answer docs/device-api.md promises. Hostile input:
 * anything malformed is a sentence (400), never a guess.
 */
import type { CardSet, DecideRequest, DeviceDecision } from '../confirm/devices/card-types.js';
import type { DeviceRecord } from '../confirm/devices/registry.js';

/** What the endpoint needs of the cards (confirm/devices/cards.ts `Cards`). */
export interface DeviceCards {
  /** The device's current card set (the same open set while the same cards show). */
  issue(device: DeviceRecord): Promise<CardSet>;
  /** Runs every named check and, when all pass, decides the call (or moves it to its second stage). */
  decide(device: DeviceRecord, req: DecideRequest): Promise<DeviceDecision>;
}

/** A voice answer's outcome: a device decision, plus what the recogniser heard (when it got that far). */
export type VoiceDecision = DeviceDecision & { transcript?: string };

/** What the endpoint needs of voice answers (confirm/voice): a WAV recording about one card set. */
export interface DeviceVoice {
  /**
   * Decodes, fingerprints and transcribes `wav`, parses the words, and decides the card they pick
   * through `Cards.decide` (how: voice). Never throws for bad audio: a refusal names the failed check.
   * @throws when the recogniser fails (the endpoint answers 502; nothing was decided).
   */
  answer(device: DeviceRecord, setId: string, wav: Buffer, signal?: AbortSignal): Promise<VoiceDecision>;
}

/** What a tap decides: the card (set, call, nonce) and yes or no. */
export type TapDecision = Omit<DecideRequest, 'how'>;

/**
 * The first key that a JSON object text names twice at its top level (keys compared after unescaping,
 * so `"decision"` and `"\u0064ecision"` are one key), or undefined. A body naming a field twice means
 * one thing to a parser that keeps the first and another to JSON.parse, which keeps the last: a signed
 * `"decision":"deny","decision":"approve"` would show as a no to one reader and act as a yes. Fail
 * closed: such a body is refused. Nested objects are not looked into (only top-level fields are read).
 * @param text a text JSON.parse has accepted (on anything else the answer means nothing).
 */
export function duplicateTopLevelKey(text: string): string | undefined {
  const seen = new Set<string>();
  const stack: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '{' || ch === '[') stack.push(ch);
    else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      const literal = text.slice(i, j + 1);
      i = j;
      if (stack.length !== 1 || stack[0] !== '{') continue;
      let k = j + 1;
      while (k < text.length && /\s/.test(text[k] as string)) k++;
      if (text[k] !== ':') continue;
      const key = JSON.parse(literal) as string;
      if (seen.has(key)) return key;
      seen.add(key);
    }
  }
  return undefined;
}

/**
 * Reads `{ set_id, call_id, nonce, decision: "approve" | "deny" }`.
 * @returns the decision, or a sentence saying what is wrong.
 */
export function toDecision(body: Record<string, unknown>): TapDecision | string {
  const { set_id: setId, call_id: callId, nonce, decision } = body;
  if (typeof setId !== 'string' || !/^cs_[0-9a-f]{16}$/.test(setId)) return 'set_id must be the card set id (cs_ + 16 hex) the card came in';
  if (typeof callId !== 'string' || callId.length === 0 || callId.length > 200) return "call_id must be the card's call id";
  if (typeof nonce !== 'string' || !/^[0-9a-f]{32}$/.test(nonce)) return "nonce must be the card's nonce (32 hex)";
  if (decision !== 'approve' && decision !== 'deny') return 'decision must be "approve" or "deny"';
  return { setId, callId, nonce, approve: decision === 'approve' };
}

/** The approved answer's message: in pending mode nothing runs until the agent collects the decision. */
export function approvedMessage(pendingMode: boolean): string {
  return pendingMode ? 'Approved: runs when the agent collects it' : 'Approved: executes now';
}

/**
 * The HTTP status and JSON body of a decision's answer (docs/device-api.md, "Decide"): 200 with
 * `outcome` `approved`, `denied` or `second` (a high-risk card's first yes; `cards` is the new set with its
 * second-stage card), else 409 (403 when the device is not entitled) naming the first failed check.
 * @param pendingMode `confirm.mode: pending`: an approval runs only when the agent calls lookfirst_confirm,
 *   so the message must not say it runs now.
 */
export function decisionAnswer(r: VoiceDecision, pendingMode = false): { status: number; body: Record<string, unknown> } {
  const heard = r.transcript !== undefined ? { transcript: r.transcript } : {};
  if (r.ok && r.status === 'decided') {
    return {
      status: 200,
      body: {
        ok: true,
        outcome: r.approve ? 'approved' : 'denied',
        message: r.approve ? approvedMessage(pendingMode) : 'Denied',
        evidence_ref: r.evidenceRef,
        ...heard,
        checks: r.checks,
      },
    };
  }
  if (r.ok)
    return { status: 200, body: { ok: true, outcome: 'second', message: 'High risk: confirm again to approve', cards: r.cards, ...heard, checks: r.checks } };
  return {
    status: r.httpStatus,
    body: { error: `refused: ${r.failed} failed (${r.reason})`, failed_check: r.failed, ...heard, checks: r.checks },
  };
}
