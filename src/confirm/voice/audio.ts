/**
 * A voice answer's recording: WAV in (as a phone or a third-party app sends it), 16 kHz mono 16-bit out
 * (what recognisers take), and the recording's fingerprints.
 *
 * Security posture: the body is hostile input. Every header field is checked before a sample is read,
 * the duration is bounded before any work proportional to it, and anything that is not a plain WAV is
 * refused with VOICE_AUDIO_INVALID saying what to send. Nothing here guesses a format.
 */
import { createHash } from 'node:crypto';
import { LookfirstError } from '../../errors.js';

/** The rate every recording is brought to (Hz): what pocketsphinx's en-us model and whisper expect. */
export const RATE_16K = 16000;

/** A decoded recording: 16 kHz mono 16-bit samples and their duration (ms). */
export interface Recording {
  samples: Int16Array;
  durationMs: number;
}

const WHAT_TO_SEND = 'send a WAV file (PCM 8/16/24/32-bit integer or 32/64-bit float, 1 or 2 channels, 8 to 192 kHz)';

function invalid(what: string): LookfirstError {
  return new LookfirstError('VOICE_AUDIO_INVALID', `the recording ${what}: ${WHAT_TO_SEND}`);
}

interface Format {
  float: boolean;
  channels: number;
  rate: number;
  bits: number;
}

/** Reads the `fmt ` chunk; WAVE_FORMAT_EXTENSIBLE is read through its sub-format. */
function readFormat(buf: Buffer, at: number, size: number): Format {
  if (size < 16) throw invalid('has a fmt chunk shorter than 16 bytes');
  let code = buf.readUInt16LE(at);
  const channels = buf.readUInt16LE(at + 2);
  const rate = buf.readUInt32LE(at + 4);
  const blockAlign = buf.readUInt16LE(at + 12);
  const bits = buf.readUInt16LE(at + 14);
  if (code === 0xfffe) {
    if (size < 40) throw invalid('says WAVE_FORMAT_EXTENSIBLE but its fmt chunk is too short');
    code = buf.readUInt16LE(at + 24);
  }
  const float = code === 3;
  if (code !== 1 && code !== 3) throw invalid(`is encoded with WAV format code ${code}, not PCM (1) or float (3)`);
  if (channels < 1 || channels > 2) throw invalid(`has ${channels} channels`);
  if (rate < 8000 || rate > 192000) throw invalid(`has a sample rate of ${rate} Hz`);
  if (float ? bits !== 32 && bits !== 64 : ![8, 16, 24, 32].includes(bits)) throw invalid(`has ${bits}-bit ${float ? 'float' : 'integer'} samples`);
  if (blockAlign !== (channels * bits) / 8) throw invalid(`says ${blockAlign} bytes per frame, not ${(channels * bits) / 8}`);
  return { float, channels, rate, bits };
}

/** Finds `fmt ` and `data` in a RIFF/WAVE buffer, checking every chunk size against the buffer. */
function readChunks(buf: Buffer): { format: Format; data: Buffer } {
  if (buf.length < 12 || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WAVE') throw invalid('is not a RIFF/WAVE file');
  let at = 12;
  let format: Format | undefined;
  while (at + 8 <= buf.length) {
    const id = buf.toString('latin1', at, at + 4);
    const size = buf.readUInt32LE(at + 4);
    const body = at + 8;
    if (size > buf.length - body) throw invalid(`has a "${id.replace(/[^\x20-\x7e]/g, '?')}" chunk of ${size} bytes where only ${buf.length - body} follow`);
    if (id === 'fmt ') format = readFormat(buf, body, size);
    if (id === 'data') {
      if (!format) throw invalid('has its data before its fmt chunk');
      return { format, data: buf.subarray(body, body + size) };
    }
    at = body + size + (size % 2);
  }
  throw invalid(format ? 'has no data chunk' : 'has no fmt chunk');
}

/** One channel-mixed sample in [-1, 1] per frame. */
function toMono(data: Buffer, f: Format): Float64Array {
  const bytes = f.bits / 8;
  const frames = Math.floor(data.length / (bytes * f.channels));
  const out = new Float64Array(frames);
  for (let i = 0; i < frames; i++) {
    let sum = 0;
    for (let c = 0; c < f.channels; c++) {
      const at = (i * f.channels + c) * bytes;
      let v: number;
      if (f.float) v = f.bits === 32 ? data.readFloatLE(at) : data.readDoubleLE(at);
      else if (f.bits === 8) v = (data[at]! - 128) / 128;
      else if (f.bits === 16) v = data.readInt16LE(at) / 32768;
      else if (f.bits === 24) v = data.readIntLE(at, 3) / 8388608;
      else v = data.readInt32LE(at) / 2147483648;
      if (!Number.isFinite(v)) throw invalid('holds a float sample that is not a finite number');
      sum += v;
    }
    out[i] = sum / f.channels;
  }
  return out;
}

const HALF_TAPS = 16;

/**
 * Windowed-sinc resampling (Blackman window), low-passed below the lower Nyquist so that 44.1/48 kHz
 * input does not alias into the speech band.
 */
function resample(x: Float64Array, from: number, to: number): Float64Array {
  if (from === to) return x;
  const ratio = from / to;
  const cutoff = Math.min(1, to / from) * 0.95;
  const half = Math.ceil(HALF_TAPS / Math.min(1, cutoff));
  const n = Math.floor((x.length * to) / from);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = i * ratio;
    const k0 = Math.floor(t);
    let sum = 0;
    for (let k = k0 - half + 1; k <= k0 + half; k++) {
      if (k < 0 || k >= x.length) continue;
      const d = t - k;
      const w = 0.42 + 0.5 * Math.cos((Math.PI * d) / half) + 0.08 * Math.cos((2 * Math.PI * d) / half);
      const arg = Math.PI * d * cutoff;
      sum += x[k]! * cutoff * (arg === 0 ? 1 : Math.sin(arg) / arg) * w;
    }
    out[i] = sum;
  }
  return out;
}

function toInt16(x: Float64Array): Int16Array {
  const out = new Int16Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(x[i]! * 32768)));
  return out;
}

/**
 * Decodes a WAV recording to 16 kHz mono 16-bit samples: PCM 8/16/24/32-bit integer or 32/64-bit float
 * (plain or WAVE_FORMAT_EXTENSIBLE), any rate from 8 to 192 kHz, 1 or 2 channels (mixed to mono).
 * @param buf the request body.
 * @param maxMs longest recording accepted (ms), checked from the header before decoding.
 * @throws LookfirstError `VOICE_AUDIO_INVALID` for anything else, a malformed header, no samples, or a
 *   recording longer than `maxMs`, saying what to send.
 */
export function decodeRecording(buf: Buffer, maxMs: number): Recording {
  if (!Buffer.isBuffer(buf) || buf.length === 0) throw invalid('is empty');
  const { format, data } = readChunks(buf);
  const frameBytes = (format.bits / 8) * format.channels;
  if (data.length % frameBytes !== 0) throw invalid(`has ${data.length} data bytes, not a whole number of ${frameBytes}-byte frames`);
  const frames = data.length / frameBytes;
  if (frames === 0) throw invalid('holds no samples');
  const durationMs = (frames * 1000) / format.rate;
  if (durationMs > maxMs) throw invalid(`lasts ${Math.round(durationMs)} ms, longer than the ${maxMs} ms allowed; answer in a few words`);
  const samples = toInt16(resample(toMono(data, format), format.rate, RATE_16K));
  return { samples, durationMs: (samples.length * 1000) / RATE_16K };
}

/**
 * Encodes 16 kHz mono 16-bit samples as a canonical 44-byte-header PCM WAV (what recognisers read).
 * @param samples 16 kHz mono samples.
 */
export function encodeWav16k(samples: Int16Array): Buffer {
  const data = samples.length * 2;
  const out = Buffer.alloc(44 + data);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(1, 20);
  out.writeUInt16LE(1, 22);
  out.writeUInt32LE(RATE_16K, 24);
  out.writeUInt32LE(RATE_16K * 2, 28);
  out.writeUInt16LE(2, 32);
  out.writeUInt16LE(16, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(data, 40);
  for (let i = 0; i < samples.length; i++) out.writeInt16LE(samples[i]!, 44 + i * 2);
  return out;
}

/** Amplitude at or under which a sample counts as silence when trimming (about −36 dBFS). */
export const SILENCE_LEVEL = 512;

/**
 * The samples without leading and trailing silence (|sample| ≤ SILENCE_LEVEL), so that padding a
 * replayed recording with silence does not change its prints. Empty when the recording is all silence.
 */
export function trimSilence(samples: Int16Array): Int16Array {
  let start = 0;
  let end = samples.length;
  while (start < end && Math.abs(samples[start]!) <= SILENCE_LEVEL) start++;
  while (end > start && Math.abs(samples[end - 1]!) <= SILENCE_LEVEL) end--;
  return samples.subarray(start, end);
}

/**
 * The exact fingerprint of a recording: SHA-256 (hex) of its 16 kHz samples (little-endian 16-bit) after
 * trimming silence. The same samples in another header (extensible, float, stereo copies, extra chunks,
 * padding) give the same print; a copy resampled to another rate and back does not in general (its
 * samples differ slightly), which is what `audioEnvelope` is for.
 * @param samples 16 kHz mono samples, as decodeRecording returns them.
 */
export function audioFingerprint(samples: Int16Array): string {
  const t = trimSilence(samples);
  const le = Buffer.alloc(t.length * 2);
  for (let i = 0; i < t.length; i++) le.writeInt16LE(t[i]!, i * 2);
  return createHash('sha256').update(le).digest('hex');
}

/** Length of one envelope frame (ms). */
export const ENVELOPE_FRAME_MS = 20;

/**
 * The loudness envelope of a recording: per 20 ms frame of the trimmed samples, low-passed below 3.8 kHz
 * (so that a copy re-encoded at 8 kHz keeps the same envelope), the level in tenths of a dB (integers,
 * 0 = silence floor), so that a copy re-encoded at another rate (whose samples differ slightly) can still
 * be recognised as the same recording by `sameEnvelope`.
 * @param samples 16 kHz mono samples.
 */
export function audioEnvelope(samples: Int16Array): number[] {
  const t = trimSilence(samples);
  const x = new Float64Array(t.length);
  for (let i = 0; i < t.length; i++) x[i] = t[i]! / 32768;
  const rate = 8000;
  const band = resample(x, RATE_16K, rate);
  const frame = (rate * ENVELOPE_FRAME_MS) / 1000;
  const out: number[] = [];
  for (let at = 0; at < band.length; at += frame) {
    let sum = 0;
    const end = Math.min(band.length, at + frame);
    for (let i = at; i < end; i++) sum += band[i]! * band[i]!;
    const rms = Math.sqrt(sum / (end - at)) * 32768;
    out.push(Math.round(Math.max(0, 200 * Math.log10(Math.max(1, rms)))));
  }
  return out;
}

/**
 * Whether two envelopes are the same recording: the same number of frames (±1) and, frame by frame,
 * levels within 1.5 dB on at least 95% of frames. A person saying the same word twice differs by far
 * more (timing alone shifts the frames); a resampled copy differs by a fraction of a dB.
 */
export function sameEnvelope(a: readonly number[], b: readonly number[]): boolean {
  if (a.length === 0 || b.length === 0 || Math.abs(a.length - b.length) > 1) return false;
  const n = Math.min(a.length, b.length);
  let close = 0;
  for (let i = 0; i < n; i++) if (Math.abs(a[i]! - b[i]!) <= 15) close++;
  return close >= 0.95 * Math.max(a.length, b.length);
}
