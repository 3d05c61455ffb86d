/**
 * A question as the shared store keeps it (kind `pending`): waiting, decided, or ended, with the checks
 * that a record read from the store is about the call it names, and the answer it gives that call.
 */
import { createHash } from 'node:crypto';
import type { StoreRecord } from '../store/store.js';
import type { Decider } from '../types.js';
import type { ChannelAnswer } from './channel.js';
import { type EndedHow, type PendingView, TIMED_OUT } from './pending-types.js';

/** A question as the store keeps it: waiting, decided (by whom, which way), or ended otherwise. */
export interface PendingRecord {
  view: PendingView;
  state: 'waiting' | 'decided' | 'ended';
  decision?: { approve: boolean; who: Decider };
  how?: EndedHow;
  /** The answer an ended question gave its call. */
  answer?: ChannelAnswer;
}

/** Whether a stored question is about the call it names: its key, and arguments that hash to its args_sha256. */
export function isWellFormed(r: StoreRecord<PendingRecord>): boolean {
  const v = r.value?.view;
  return (
    typeof v?.callId === 'string' &&
    v.callId === r.key &&
    typeof v.argsCanonical === 'string' &&
    typeof v.argsSha256 === 'string' &&
    createHash('sha256').update(v.argsCanonical).digest('hex') === v.argsSha256 &&
    typeof v.deadlineMs === 'number'
  );
}

/** The answer a store record gives: the decision, or how it ended. */
export function answerOf(r: PendingRecord): ChannelAnswer {
  if (r.state === 'decided' && r.decision) {
    const { approve, who } = r.decision;
    return approve
      ? { kind: 'approved', ...who }
      : { kind: 'denied', ...who, reason: `denied on the ${who.channel} channel by ${who.actor}${who.comment ? ` ("${who.comment}")` : ''}` };
  }
  if (r.answer) return r.answer;
  const how = r.how;
  if (how?.kind === 'timed out') return { kind: 'denied', channel: 'store', reason: TIMED_OUT };
  return { kind: 'unavailable', reason: how?.kind === 'withdrawn' ? `withdrawn: ${how.reason}` : 'the question ended' };
}
