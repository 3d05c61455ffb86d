/**
 * A card answered by voice: the recording → its fingerprint (never used before) → the recogniser's words
 * → a consent. The words come from the user's recording, never from the model's account of it.
 *
 * Security posture: fail closed. A recording that cannot be read, is silent, or was used before (the same
 * samples, or a copy re-encoded at another rate) decides nothing, and the check that failed is named.
 * The fingerprint is recorded before transcribing, so two concurrent replays cannot both pass. A yes or a
 * pick whose words do not account for the speech recorded is refused (coverage.ts: a lost "not"). A refused
 * consent comes back with `ok: true` and its transcript, so the device can show what was heard and the
 * card step (Cards.pickByWords) fails `words_choose_card` with the parser's reason.
 * @see docs/decisions/0018-devices-and-receipts.md (checks `evidence_unused`, `words_choose_card`)
 */
import { LookfirstError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { type Consent, parseConsent } from '../devices/consent.js';
import { audioEnvelope, audioFingerprint, decodeRecording, sameEnvelope, trimSilence } from './audio.js';
import { wordsCoverSpeech } from './coverage.js';
import type { Recogniser } from './recogniser.js';

/** Store kind of used recordings: key = audioFingerprint, value VoicePrint. */
export const VOICE_PRINT_KIND = 'voice-print';
/** How long a used recording is remembered (ms): far longer than any card lives. */
export const VOICE_PRINT_TTL_MS = 24 * 60 * 60 * 1000;

/** What is remembered of a used recording: its loudness envelope, to catch re-encoded copies. */
export interface VoicePrint {
  envelope: number[];
}

/** What hearAnswer needs. */
export interface HearOptions {
  recogniser: Recogniser;
  store: Store;
  /** Consent word lists to understand (`en`, `hi`). */
  languages: readonly string[];
  /** Longest recording accepted (ms). */
  maxMs: number;
}

/** The outcome of hearing an answer. */
export type HeardAnswer =
  | {
      ok: true;
      /** The recogniser's words, to show on the device and keep in the receipt. */
      transcript: string;
      /** audioFingerprint of the recording (SHA-256 hex). */
      audioSha256: string;
      /** What the words decide; `refuse` carries the reason to show. */
      consent: Consent;
    }
  | {
      ok: false;
      /** A sentence for the person: what was wrong and what to do. */
      reason: string;
      /** The named check that failed: `evidence_exists` (no usable recording) or `evidence_unused` (a replay). */
      check: 'evidence_exists' | 'evidence_unused';
      audioSha256?: string;
    };

/**
 * Hears a voice answer to a card set of `cardCount` cards.
 * @param opts the recogniser, the store that remembers used recordings, languages and the length bound.
 * @param audio the request body: a WAV recording (see decodeRecording).
 * @param cardCount how many cards the set shown holds.
 * @param signal aborts the transcription.
 * @returns `ok: false` naming the failed check for an unreadable, silent or replayed recording; else the
 *   transcript, the fingerprint and the consent.
 * @throws LookfirstError `VOICE_RECOGNISER_FAILED` when the recogniser fails (nothing is decided; the
 *   recording stays used, so the person records again); store errors as the store throws them.
 */
export async function hearAnswer(opts: HearOptions, audio: Buffer, cardCount: number, signal?: AbortSignal): Promise<HeardAnswer> {
  let samples: Int16Array;
  try {
    ({ samples } = decodeRecording(audio, opts.maxMs));
  } catch (err) {
    if (err instanceof LookfirstError && err.code === 'VOICE_AUDIO_INVALID') return { ok: false, reason: err.message, check: 'evidence_exists' };
    throw err;
  }
  if (trimSilence(samples).length === 0)
    return { ok: false, reason: 'the recording is silent: hold the button and say the card, yes or no', check: 'evidence_exists' };
  const audioSha256 = audioFingerprint(samples);
  const envelope = audioEnvelope(samples);
  const used = { ok: false as const, reason: 'this recording was used before: record your answer again', check: 'evidence_unused' as const, audioSha256 };
  const mine = await opts.store.putIfAbsent<VoicePrint>(VOICE_PRINT_KIND, audioSha256, { envelope }, { ttlMs: VOICE_PRINT_TTL_MS });
  if (!mine) return used;
  // A copy re-encoded at another rate has other samples, hence another exact print: compare envelopes.
  for (const other of await opts.store.list<VoicePrint>(VOICE_PRINT_KIND)) {
    if (other.key !== audioSha256 && Array.isArray(other.value?.envelope) && sameEnvelope(envelope, other.value.envelope)) return used;
  }
  const transcript = await opts.recogniser.transcribe(samples, signal);
  const consent = parseConsent(transcript, opts.languages, cardCount);
  if (consent.kind === 'pick' || consent.kind === 'confirm') {
    // A recogniser that loses "not" turns a refusal into a choice: refuse when words are missing.
    const cover = wordsCoverSpeech(samples, transcript);
    if (!cover.ok) {
      const reason = `the recording holds more speech than the words heard ("${transcript}"): a word such as "not" may have been lost; say the answer again`;
      return { ok: true, transcript, audioSha256, consent: { kind: 'refuse', reason } };
    }
  }
  return { ok: true, transcript, audioSha256, consent };
}
