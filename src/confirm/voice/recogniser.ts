/**
 * Speech recognisers: a recording's 16 kHz samples → the words heard. Two kinds, as the config names them:
 * - `command`: a local program run per recording without a shell (Debian's pocketsphinx works offline),
 *   reading a private temporary WAV file named by `{file}` in its argv and printing the transcript;
 * - `http`: an OpenAI-compatible transcription endpoint (`POST …/audio/transcriptions`, multipart `file`
 *   and `model`, answer `{ text }`), such as a whisper.cpp server.
 *
 * Security posture: the transcript is the user's words only if the recording went to the recogniser and
 * nothing else answered, so every failure (exit code, timeout, oversized output, an endpoint's error or an
 * answer without `text`) throws VOICE_RECOGNISER_FAILED and nothing is decided. The API key is read from
 * its file per request and never appears in an error.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { LookfirstError } from '../../errors.js';
import { encodeWav16k } from './audio.js';

/**
 * What a recogniser needs of `confirm.device.voice` (config's `VoiceConfig` has this shape; it is
 * restated here because confirm/ does not import config/).
 */
export interface RecogniserConfig {
  /** The argv run per recording (`{file}` → a 16 kHz mono 16-bit WAV), or an OpenAI-compatible endpoint. */
  recogniser: { kind: 'command'; argv: string[] } | { kind: 'http'; url: string; model: string; apiKeyFile?: string };
  /** Bound of one transcription (ms). */
  timeoutMs: number;
}

/** Turns a recording into words. */
export interface Recogniser {
  /**
   * The transcript of a recording, whitespace-collapsed (possibly empty when nothing was heard).
   * @param samples 16 kHz mono 16-bit samples.
   * @param signal aborts the transcription (the request went away).
   * @throws LookfirstError `VOICE_RECOGNISER_FAILED` with a sentence naming the command or endpoint.
   */
  transcribe(samples: Int16Array, signal?: AbortSignal): Promise<string>;
}

/** Largest transcript or endpoint answer read (bytes): an answer is a few words. */
export const MAX_TRANSCRIPT_BYTES = 64 * 1024;

function failed(message: string, cause?: unknown): LookfirstError {
  return new LookfirstError('VOICE_RECOGNISER_FAILED', message, cause === undefined ? undefined : { cause });
}

/**
 * Builds the recogniser the config names.
 * @param cfg `confirm.device.voice` (or any object with its `recogniser` and `timeoutMs`).
 * @throws LookfirstError `VOICE_RECOGNISER_FAILED` when a command's argv is empty or never names `{file}`.
 */
export function createRecogniser(cfg: RecogniserConfig): Recogniser {
  const r = cfg.recogniser;
  if (r.kind === 'command') {
    if (r.argv.length === 0 || !r.argv.some((a) => a.includes('{file}')))
      throw failed('confirm.device.voice.recogniser.argv must name the program and pass it the recording as {file}: fix the config');
    return { transcribe: (samples, signal) => runCommand(r.argv, cfg.timeoutMs, samples, signal) };
  }
  return { transcribe: (samples, signal) => postRecording(r, cfg.timeoutMs, samples, signal) };
}

async function runCommand(argv: string[], timeoutMs: number, samples: Int16Array, signal?: AbortSignal): Promise<string> {
  const name = basename(argv[0]!);
  const dir = await mkdtemp(join(tmpdir(), 'lookfirst-voice-'));
  try {
    const file = join(dir, 'answer.wav');
    await writeFile(file, encodeWav16k(samples), { mode: 0o600 });
    const args = argv.map((a) => a.replaceAll('{file}', file));
    return await new Promise<string>((resolve, reject) => {
      // detached: the recogniser leads its own process group, so a timeout kills its children too.
      const child = spawn(args[0]!, args.slice(1), { shell: false, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let outBytes = 0;
      let errTail = '';
      let why: string | undefined;
      const kill = (reason: string) => {
        why ??= reason;
        try {
          if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      };
      const timer = setTimeout(() => kill(`did not finish within ${timeoutMs} ms`), timeoutMs);
      const onAbort = () => kill('was stopped because the request went away');
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) onAbort();
      child.stdout.on('data', (b: Buffer) => {
        outBytes += b.length;
        if (outBytes > MAX_TRANSCRIPT_BYTES) kill(`printed more than ${MAX_TRANSCRIPT_BYTES} bytes`);
        else out.push(b);
      });
      child.stderr.on('data', (b: Buffer) => {
        errTail = (errTail + b.toString('utf8')).slice(-300);
      });
      child.on('error', (err) => {
        why ??= `could not be started (${(err as NodeJS.ErrnoException).code ?? err.message}): install it or fix confirm.device.voice.recogniser.argv`;
      });
      child.on('close', (code, sig) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (why) return reject(failed(`the voice recogniser "${name}" ${why}`));
        if (code !== 0) {
          const tail = errTail.trim().split('\n').pop()?.slice(0, 200);
          return reject(
            failed(`the voice recogniser "${name}" exited with ${code ?? sig}${tail ? ` (${tail})` : ''}: run it by hand on a WAV file to see why`),
          );
        }
        resolve(Buffer.concat(out).toString('utf8').replace(/\s+/g, ' ').trim());
      });
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The endpoint as shown in errors: origin and path, never credentials or query. */
function shown(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  } catch {
    return 'the configured URL';
  }
}

async function readCapped(res: Response, where: string): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const parts: Uint8Array[] = [];
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    bytes += value.length;
    if (bytes > MAX_TRANSCRIPT_BYTES) {
      await reader.cancel();
      throw failed(`the transcription endpoint ${where} answered more than ${MAX_TRANSCRIPT_BYTES} bytes: check that the URL is a transcription endpoint`);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}

async function postRecording(
  r: { url: string; model: string; apiKeyFile?: string },
  timeoutMs: number,
  samples: Int16Array,
  signal?: AbortSignal,
): Promise<string> {
  const where = shown(r.url);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (r.apiKeyFile) {
    let key: string;
    try {
      key = (await readFile(r.apiKeyFile, 'utf8')).trim();
    } catch (err) {
      throw failed(`the API key file of the transcription endpoint ${where} cannot be read: check confirm.device.voice.recogniser.api_key_file`, err);
    }
    if (key === '') throw failed(`the API key file of the transcription endpoint ${where} is empty: put the key in it`);
    headers.authorization = `Bearer ${key}`;
  }
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(encodeWav16k(samples))], { type: 'audio/wav' }), 'answer.wav');
  form.append('model', r.model);
  form.append('response_format', 'json');
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let text: string;
  let status: number;
  try {
    const res = await fetch(r.url, { method: 'POST', body: form, headers, signal: both, redirect: 'error' });
    status = res.status;
    text = await readCapped(res, where);
  } catch (err) {
    if (err instanceof LookfirstError) throw err;
    if (timeout.aborted) throw failed(`the transcription endpoint ${where} did not answer within ${timeoutMs} ms: check that it is running`, err);
    if (signal?.aborted) throw failed(`the transcription at ${where} was stopped because the request went away`, err);
    throw failed(`the transcription endpoint ${where} could not be reached (${(err as Error).message}): check that it is running`, err);
  }
  const excerpt = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  if (status < 200 || status > 299) throw failed(`the transcription endpoint ${where} answered ${status}${excerpt ? `: ${excerpt}` : ''}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw failed(
      `the transcription endpoint ${where} answered ${status} with something that is not JSON (${excerpt}): point the config at an OpenAI-compatible transcription endpoint`,
    );
  }
  const heard = (body as { text?: unknown } | null)?.text;
  if (typeof heard !== 'string')
    throw failed(
      `the transcription endpoint ${where} answered without a "text" string (${excerpt}): point the config at an OpenAI-compatible transcription endpoint`,
    );
  return heard.replace(/\s+/g, ' ').trim();
}
