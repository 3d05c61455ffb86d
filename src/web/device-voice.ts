/**
 * Voice answers for the device endpoint: a WAV recording about one card set is heard (confirm/voice:
 * decoded, fingerprinted once, transcribed by the configured recogniser, parsed into a consent) and the
 * card the words choose is decided through `Cards.decideByWords`, which runs every named check. The words
 * come from the person's recording, never from the model's account of it.
 *
 * Security posture: fail closed. An unreadable, silent or replayed recording decides nothing and names
 * the failed check (`evidence_exists`, `evidence_unused`); words that choose no card fail
 * `words_choose_card`; a recogniser failure throws and the endpoint answers 502 (nothing decided).
 */
import { CARDSET_KIND, type Cards } from '../confirm/devices/cards.js';
import type { DeviceRecord } from '../confirm/devices/registry.js';
import { type HearOptions, hearAnswer } from '../confirm/voice/answer.js';
import type { DeviceVoice, VoiceDecision } from './device-decide.js';

/**
 * Builds the endpoint's voice answerer.
 * @param opts the `cards` that decide, and `hear`: the recogniser, the store of used recordings, the
 *   consent languages and the longest recording (ms).
 */
export function createDeviceVoice(opts: { cards: Cards; hear: HearOptions }): DeviceVoice {
  return {
    async answer(device: DeviceRecord, setId: string, wav: Buffer, signal?: AbortSignal): Promise<VoiceDecision> {
      // The number of cards the person saw decides what "yes" (the final card) and "the second one" mean.
      const set = await opts.hear.store.get<{ deviceId?: unknown; cards?: unknown }>(CARDSET_KIND, setId).catch(() => undefined);
      const cardCount = set && set.value.deviceId === device.id && Array.isArray(set.value.cards) ? set.value.cards.length : 0;
      const heard = await hearAnswer(opts.hear, wav, cardCount, signal);
      if (!heard.ok)
        return { ok: false, failed: heard.check, reason: heard.reason, checks: [{ name: heard.check, ok: false, detail: heard.reason }], httpStatus: 409 };
      const d = await opts.cards.decideByWords(device, setId, heard.consent, { transcript: heard.transcript, audioSha256: heard.audioSha256 });
      return { ...d, transcript: heard.transcript };
    },
  };
}
