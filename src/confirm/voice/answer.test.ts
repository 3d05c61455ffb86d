import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import wavefile from 'wavefile';
import { createMemoryStore } from '../../store/memory/memory.js';
import type { Store } from '../../store/store.js';
import { hearAnswer, VOICE_PRINT_KIND } from './answer.js';
import { encodeWav16k, RATE_16K } from './audio.js';
import type { Recogniser } from './recogniser.js';

/** A deterministic one-syllable recording (noise under one burst); each seed has its own length. */
function recording(seed: number): Int16Array {
  const n = (RATE_16K * (300 + 60 * seed)) / 1000;
  const out = new Int16Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const env = Math.sin((Math.PI * i) / n);
    out[i] = Math.round(((s / 2147483648) * 2 - 1) * 12000 * env);
  }
  return out;
}

/** Stands in for the speech recogniser (test/voice.test.ts runs the real one): says what it is told. */
function saying(words: string): Recogniser & { calls: number } {
  const r = {
    calls: 0,
    transcribe: async () => {
      r.calls++;
      return words;
    },
  };
  return r;
}

describe('hearAnswer', () => {
  let store: Store;
  beforeEach(() => {
    store = createMemoryStore();
  });
  afterEach(async () => {
    await store.close();
  });
  const opts = (recogniser: Recogniser) => ({ recogniser, store, languages: ['en'], maxMs: 10_000 });

  it('returns the transcript, the fingerprint and the consent, and remembers the recording for a day', async () => {
    const got = await hearAnswer(opts(saying('the second one')), encodeWav16k(recording(1)), 3);
    assert.equal(got.ok, true);
    if (!got.ok) return;
    assert.equal(got.transcript, 'the second one');
    assert.match(got.audioSha256, /^[0-9a-f]{64}$/);
    assert.deepEqual(got.consent, { kind: 'pick', position: 2 });
    const rec = await store.get(VOICE_PRINT_KIND, got.audioSha256);
    assert.ok(rec?.expiresAtMs);
  });
  it('refuses a yes whose words do not account for the speech (a lost "not"), with the transcript', async () => {
    const two = new Int16Array(16000);
    two.set(recording(1), 0);
    two.set(recording(2), 9000);
    const got = await hearAnswer(opts(saying('yes')), encodeWav16k(two), 3);
    assert.equal(got.ok && got.transcript, 'yes');
    assert.match(got.ok && got.consent.kind === 'refuse' ? got.consent.reason : '', /more speech than the words heard \("yes"\)/);
  });
  it('returns a refused consent with its transcript, so the device shows what was heard', async () => {
    const got = await hearAnswer(opts(saying('not two')), encodeWav16k(recording(1)), 3);
    assert.equal(got.ok && got.consent.kind, 'refuse');
  });
  it('fails evidence_unused for the same recording again, in another header, or re-encoded at another rate', async () => {
    const r = saying('yes');
    const first = await hearAnswer(opts(r), encodeWav16k(recording(1)), 1);
    assert.equal(first.ok, true);
    const w = new wavefile.WaveFile();
    w.fromScratch(2, RATE_16K, '32f', [Array.from(recording(1), (v) => v / 32768), Array.from(recording(1), (v) => v / 32768)]);
    const again: Buffer[] = [encodeWav16k(recording(1)), Buffer.from(w.toBuffer())];
    for (const rate of [22050, 44100, 48000, 8000]) {
      const x = new wavefile.WaveFile();
      x.fromScratch(1, RATE_16K, '16', Array.from(recording(1)));
      x.toSampleRate(rate);
      again.push(Buffer.from(x.toBuffer()));
    }
    for (const [i, audio] of again.entries()) {
      const got = await hearAnswer(opts(r), audio, 1);
      assert.deepEqual(
        { ok: got.ok, check: !got.ok && got.check, reason: !got.ok && got.reason },
        { ok: false, check: 'evidence_unused', reason: 'this recording was used before: record your answer again' },
        `copy ${i}`,
      );
    }
    assert.equal(r.calls, 1, 'a replay never reaches the recogniser');
    assert.equal((await hearAnswer(opts(r), encodeWav16k(recording(2)), 1)).ok, true, 'another recording is heard');
  });
  it('fails evidence_exists for audio that is not a usable WAV, or silent', async () => {
    const r = saying('yes');
    const bad = await hearAnswer(opts(r), Buffer.from('not a wav'), 1);
    assert.equal(!bad.ok && bad.check, 'evidence_exists');
    assert.match(!bad.ok ? bad.reason : '', /VOICE|send a WAV file/);
    const silent = await hearAnswer(opts(r), encodeWav16k(new Int16Array(16000)), 1);
    assert.deepEqual(silent, { ok: false, check: 'evidence_exists', reason: 'the recording is silent: hold the button and say the card, yes or no' });
    const long = await hearAnswer({ ...opts(r), maxMs: 100 }, encodeWav16k(recording(3)), 1);
    assert.equal(!long.ok && long.check, 'evidence_exists');
    assert.equal(r.calls, 0);
  });
  it('lets a recogniser failure through, with the recording used', async () => {
    const failing: Recogniser = {
      transcribe: async () => {
        throw new Error('boom');
      },
    };
    await assert.rejects(hearAnswer(opts(failing), encodeWav16k(recording(4)), 1), /boom/);
    const again = await hearAnswer(opts(saying('yes')), encodeWav16k(recording(4)), 1);
    assert.equal(!again.ok && again.check, 'evidence_unused');
  });
});
