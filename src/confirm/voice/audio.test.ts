import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import wavefile from 'wavefile';
import { LookfirstError } from '../../errors.js';
import { audioEnvelope, audioFingerprint, decodeRecording, encodeWav16k, RATE_16K, sameEnvelope } from './audio.js';

/** Builds a WAV by hand, so that every header field can be set (and broken) on purpose. */
function wav(o: { code?: number; channels?: number; rate?: number; bits?: number; data: Buffer; extensible?: boolean; before?: Buffer }): Buffer {
  const channels = o.channels ?? 1;
  const rate = o.rate ?? RATE_16K;
  const bits = o.bits ?? 16;
  const fmt = Buffer.alloc(o.extensible ? 40 : 16);
  fmt.writeUInt16LE(o.extensible ? 0xfffe : (o.code ?? 1), 0);
  fmt.writeUInt16LE(channels, 2);
  fmt.writeUInt32LE(rate, 4);
  fmt.writeUInt32LE((rate * channels * bits) / 8, 8);
  fmt.writeUInt16LE((channels * bits) / 8, 12);
  fmt.writeUInt16LE(bits, 14);
  if (o.extensible) {
    fmt.writeUInt16LE(22, 16);
    fmt.writeUInt16LE(bits, 18);
    fmt.writeUInt16LE(o.code ?? 1, 24);
  }
  const chunk = (id: string, body: Buffer) => {
    const h = Buffer.alloc(8);
    h.write(id, 0, 'latin1');
    h.writeUInt32LE(body.length, 4);
    return Buffer.concat([h, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
  };
  const body = Buffer.concat([Buffer.from('WAVE', 'latin1'), o.before ?? Buffer.alloc(0), chunk('fmt ', fmt), chunk('data', o.data)]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'latin1');
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
}

/** A deterministic speech-like signal: noise under a syllable envelope, with silence around it. */
function speechLike(ms: number, seed = 1): Int16Array {
  const n = (RATE_16K * ms) / 1000;
  const out = new Int16Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    const t = i / RATE_16K;
    const env = i < n * 0.1 || i > n * 0.9 ? 0 : Math.abs(Math.sin(2 * Math.PI * (2 + seed) * t));
    out[i] = Math.round(((s / 2147483648) * 2 - 1) * 12000 * env + 6000 * env * Math.sin(2 * Math.PI * 220 * t));
  }
  return out;
}

function pcm16(samples: Int16Array): Buffer {
  const b = Buffer.alloc(samples.length * 2);
  samples.forEach((v, i) => {
    b.writeInt16LE(v, i * 2);
  });
  return b;
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof LookfirstError);
    return `${err.code}: ${err.message}`;
  }
  return 'no error';
}

describe('decodeRecording', () => {
  const samples = speechLike(600);
  it('gives back 16 kHz mono 16-bit samples unchanged, with their duration', () => {
    const got = decodeRecording(encodeWav16k(samples), 10_000);
    assert.deepEqual(got.samples, samples);
    assert.equal(got.durationMs, 600);
  });
  it('reads 8/24/32-bit integer, 32/64-bit float, stereo and WAVE_FORMAT_EXTENSIBLE', () => {
    const f32 = Buffer.alloc(samples.length * 4);
    const f64 = Buffer.alloc(samples.length * 8);
    const i24 = Buffer.alloc(samples.length * 3);
    const i32 = Buffer.alloc(samples.length * 4);
    const u8 = Buffer.alloc(samples.length);
    const stereo = Buffer.alloc(samples.length * 4);
    samples.forEach((v, i) => {
      f32.writeFloatLE(v / 32768, i * 4);
      f64.writeDoubleLE(v / 32768, i * 8);
      i24.writeIntLE(v * 256, i * 3, 3);
      i32.writeInt32LE(v * 65536, i * 4);
      u8[i] = Math.round(v / 256) + 128;
      stereo.writeInt16LE(v, i * 4);
      stereo.writeInt16LE(v, i * 4 + 2);
    });
    const exact = [
      wav({ code: 3, bits: 32, data: f32 }),
      wav({ code: 3, bits: 64, data: f64 }),
      wav({ bits: 24, data: i24 }),
      wav({ bits: 32, data: i32 }),
      wav({ channels: 2, data: stereo }),
      wav({ extensible: true, data: pcm16(samples) }),
      wav({ extensible: true, code: 3, bits: 32, data: f32 }),
      wav({ data: pcm16(samples), before: Buffer.from('LIST\u0003\u0000\u0000\u0000abc\u0000', 'latin1') }),
    ];
    for (const w of exact) assert.deepEqual(decodeRecording(w, 10_000).samples, samples);
    const eight = decodeRecording(wav({ bits: 8, data: u8 }), 10_000).samples;
    assert.equal(eight.length, samples.length);
    assert.ok(eight.every((v, i) => Math.abs(v - samples[i]!) <= 256));
  });
  it('resamples any rate to 16 kHz, keeping the pitch', () => {
    for (const rate of [8000, 22050, 44100, 48000]) {
      const n = rate / 2;
      const tone = new Int16Array(n);
      for (let i = 0; i < n; i++) tone[i] = Math.round(10000 * Math.sin((2 * Math.PI * 440 * i) / rate));
      const got = decodeRecording(wav({ rate, data: pcm16(tone) }), 10_000);
      assert.equal(got.samples.length, 8000, `${rate} Hz`);
      let crossings = 0;
      for (let i = 1000; i < 7000; i++) if (got.samples[i - 1]! < 0 && got.samples[i]! >= 0) crossings++;
      assert.ok(Math.abs(crossings - 165) <= 2, `${rate} Hz: ${crossings} rising zero crossings in 375 ms of 440 Hz`);
    }
  });
  const refusals: [string, Buffer, string][] = [
    ['an empty body', Buffer.alloc(0), 'is empty'],
    ['something that is not RIFF/WAVE', Buffer.from('ID3\u0004\u0000 not a wav at all'), 'not a RIFF/WAVE'],
    ['ADPCM', wav({ code: 2, bits: 4, data: Buffer.alloc(100) }), 'format code 2'],
    ['three channels', wav({ channels: 3, data: Buffer.alloc(60) }), '3 channels'],
    ['a 4 kHz rate', wav({ rate: 4000, data: Buffer.alloc(60) }), '4000 Hz'],
    ['12-bit samples', wav({ bits: 12, data: Buffer.alloc(60) }), '12-bit'],
    ['no samples', wav({ data: Buffer.alloc(0) }), 'no samples'],
    ['half a frame', wav({ data: Buffer.alloc(3) }), 'whole number'],
    ['a data chunk longer than the body', wav({ data: pcm16(samples) }).subarray(0, 200), 'only'],
    ['data before fmt', Buffer.concat([Buffer.from('RIFF\u0000\u0000\u0000\u0000WAVEdata\u0002\u0000\u0000\u0000\u0000\u0000', 'latin1')]), 'before its fmt'],
    ['a NaN float sample', wav({ code: 3, bits: 32, data: Buffer.from([0, 0, 0xc0, 0x7f]) }), 'finite'],
  ];
  for (const [what, buf, fragment] of refusals) {
    it(`refuses ${what} with VOICE_AUDIO_INVALID saying what to send`, () => {
      const got = code(() => decodeRecording(buf, 10_000));
      assert.ok(got.startsWith('VOICE_AUDIO_INVALID: '), got);
      assert.ok(got.includes(fragment), got);
      assert.ok(got.includes('send a WAV file'), got);
    });
  }
  it('refuses a recording longer than maxMs from its header', () => {
    assert.match(
      code(() => decodeRecording(encodeWav16k(samples), 500)),
      /VOICE_AUDIO_INVALID: .*lasts 600 ms, longer than the 500 ms/,
    );
  });
});

describe('audio fingerprints', () => {
  const samples = speechLike(800);
  it('gives the same print for the same samples in another header or with silence around them', () => {
    const print = audioFingerprint(samples);
    assert.match(print, /^[0-9a-f]{64}$/);
    const padded = new Int16Array(samples.length + 16000);
    padded.set(samples, 8000);
    assert.equal(audioFingerprint(padded), print);
    assert.equal(audioFingerprint(decodeRecording(wav({ extensible: true, data: pcm16(samples) }), 10_000).samples), print);
  });
  it('gives another print for other audio', () => {
    assert.notEqual(audioFingerprint(speechLike(800, 2)), audioFingerprint(samples));
  });
  it('recognises a copy re-encoded at another rate by its envelope, and not another recording', () => {
    for (const rate of [8000, 22050, 44100, 48000]) {
      const w = new wavefile.WaveFile();
      w.fromScratch(1, RATE_16K, '16', Array.from(samples));
      w.toSampleRate(rate);
      const copy = decodeRecording(Buffer.from(w.toBuffer()), 10_000).samples;
      assert.notEqual(audioFingerprint(copy), audioFingerprint(samples), `${rate} Hz: samples differ after two resamplings`);
      assert.ok(sameEnvelope(audioEnvelope(copy), audioEnvelope(samples)), `${rate} Hz copy has the same envelope`);
    }
    assert.equal(sameEnvelope(audioEnvelope(speechLike(800, 2)), audioEnvelope(samples)), false);
    const slower = speechLike(880);
    assert.equal(sameEnvelope(audioEnvelope(slower), audioEnvelope(samples)), false);
    assert.equal(sameEnvelope([], []), false);
  });
});
