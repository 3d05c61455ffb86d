/**
 * Do the words heard account for the speech recorded? A recogniser that loses a word ("not two" heard as
 * "two") leaves a burst of speech no word explains. Measured with espeak-ng speech and pocketsphinx 0.8:
 * "not two" came out as "two" in 8 of 15 tries and "not yes" as "yes" in 3 of 15 with the default model;
 * every one of those recordings holds two bursts of speech for a one-syllable transcript. This check
 * refuses a yes or a pick when the recording holds more bursts than the transcript can explain.
 *
 * Heuristic, and fail closed: it can only turn a yes or a pick into a refusal (the person says it
 * again), never the other way. It counts bursts on the loudness envelope (audio.ts) and estimates
 * syllables from spelling, leniently (a word in a script without Latin vowels counts one per letter).
 */
import { audioEnvelope } from './audio.js';

/** A frame is speech when within this many tenths of a dB of the loudest frame (20 dB). */
const SPEECH_WITHIN = 200;
/** Quiet frames (20 ms each) that separate two bursts (40 ms: a stop consonant's closure is shorter). */
const BURST_GAP_FRAMES = 2;

/**
 * Bursts of speech in a recording: runs of loud frames separated by at least 40 ms of quieter ones.
 * @param samples 16 kHz mono samples.
 */
export function countBursts(samples: Int16Array): number {
  const env = audioEnvelope(samples);
  if (env.length === 0) return 0;
  const peak = Math.max(...env);
  let bursts = 0;
  let quiet = Number.POSITIVE_INFINITY;
  for (const level of env) {
    if (level >= peak - SPEECH_WITHIN) {
      if (quiet >= BURST_GAP_FRAMES) bursts++;
      quiet = 0;
    } else quiet++;
  }
  return bursts;
}

/**
 * Estimated syllables of a transcript: vowel groups per word (y counts as a vowel), less a
 * silent final e ("one", "five", "please"); digits one each; a word without Latin letters one per letter.
 * @param transcript the recogniser's words.
 */
export function estimateSyllables(transcript: string): number {
  let total = 0;
  for (const raw of transcript.toLowerCase().split(/[^\p{L}\p{M}\p{N}']+/u)) {
    const word = raw.replace(/'/g, '');
    if (word === '') continue;
    if (/^[0-9]+$/.test(word)) total += word.length;
    else if (!/[a-z]/.test(word)) total += [...word].length;
    else {
      let n = word.match(/[aeiouy]+/g)?.length ?? 0;
      if (n > 1 && /[^aeiouy]e$/.test(word) && !/[^aeiouy]le$/.test(word)) n--;
      total += Math.max(1, n);
    }
  }
  return total;
}

/**
 * Whether the transcript accounts for the speech: bursts ≤ syllables. No slack: with one burst of slack
 * for two syllables, "not card two" heard as "card two" passed in 4 of 15 measured tries.
 * @param samples 16 kHz mono samples of the recording.
 * @param transcript what the recogniser heard in it.
 */
export function wordsCoverSpeech(samples: Int16Array, transcript: string): { ok: boolean; bursts: number; syllables: number } {
  const bursts = countBursts(samples);
  const syllables = estimateSyllables(transcript);
  return { ok: bursts <= syllables, bursts, syllables };
}
