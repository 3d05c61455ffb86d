import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LookfirstError } from '../../errors.js';
import { decodeRecording } from './audio.js';
import { createRecogniser } from './recogniser.js';

const samples = new Int16Array(1600).map((_, i) => Math.round(8000 * Math.sin(i / 5)));

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof LookfirstError, String(err));
    return `${err.code}: ${err.message}`;
  }
  return 'no error';
}

/** Node as the recogniser: real processes, scripts written for each behaviour. */
const node = (script: string) => [process.execPath, '-e', script, '{file}'];

describe('the command recogniser', () => {
  it('passes a private 16 kHz WAV file as {file}, reads the transcript from stdout, and removes the file', async () => {
    const script = `const fs=require('fs');const f=process.argv[1];const st=fs.statSync(f);
      process.stdout.write(JSON.stringify({f,mode:st.mode&0o777,dir:fs.statSync(require('path').dirname(f)).mode&0o777,b:fs.readFileSync(f).toString('base64')})+'\\n')`;
    const r = createRecogniser({ recogniser: { kind: 'command', argv: node(script) }, timeoutMs: 10_000 });
    const got = JSON.parse(await r.transcribe(samples));
    assert.equal(got.mode, 0o600);
    assert.equal(got.dir, 0o700);
    assert.deepEqual(decodeRecording(Buffer.from(got.b, 'base64'), 10_000).samples, samples);
    assert.equal(existsSync(got.f), false);
  });
  it('collapses whitespace and lines into one transcript', async () => {
    const r = createRecogniser({ recogniser: { kind: 'command', argv: node("console.log('the second');console.log('  one ')") }, timeoutMs: 10_000 });
    assert.equal(await r.transcribe(samples), 'the second one');
  });
  it('runs without a shell: shell syntax in argv is passed as text', async () => {
    const r = createRecogniser({
      recogniser: { kind: 'command', argv: [process.execPath, '-e', 'console.log(process.argv[1])', '$(echo hi); {file}'] },
      timeoutMs: 10_000,
    });
    assert.match(await r.transcribe(samples), /^\$\(echo hi\); \/.*answer\.wav$/);
  });
  it('names the command and its exit code when it fails', async () => {
    const r = createRecogniser({ recogniser: { kind: 'command', argv: node("console.error('model not found');process.exit(3)") }, timeoutMs: 10_000 });
    assert.match(await failure(r.transcribe(samples)), /^VOICE_RECOGNISER_FAILED: the voice recogniser "node" exited with 3 \(model not found\)/);
  });
  it('says when the command cannot be started', async () => {
    const r = createRecogniser({ recogniser: { kind: 'command', argv: ['/nonexistent/recogniser', '{file}'] }, timeoutMs: 10_000 });
    assert.match(await failure(r.transcribe(samples)), /"recogniser" could not be started \(ENOENT\)/);
  });
  it('kills the whole process group at the timeout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'lookfirst-voice-test-'));
    try {
      const pidFile = join(dir, 'pid');
      const script = `const c=require('child_process').spawn(process.execPath,['-e','setInterval(()=>{},1000)'],{stdio:'ignore'});
        require('fs').writeFileSync(${JSON.stringify(pidFile)},String(c.pid));setInterval(()=>{},1000)`;
      const r = createRecogniser({ recogniser: { kind: 'command', argv: node(script) }, timeoutMs: 1500 });
      assert.match(await failure(r.transcribe(samples)), /did not finish within 1500 ms/);
      const grandchild = Number(readFileSync(pidFile, 'utf8'));
      await new Promise((res) => setTimeout(res, 200));
      // Gone, or a zombie waiting for a reaper that is not this test (killed all the same).
      const state = existsSync(`/proc/${grandchild}/status`) ? /State:\s+(\S)/.exec(readFileSync(`/proc/${grandchild}/status`, 'utf8'))?.[1] : 'gone';
      assert.ok(state === 'gone' || state === 'Z', `the grandchild ${grandchild} is in state ${state}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
  it('stops a command that prints too much', async () => {
    const r = createRecogniser({
      recogniser: { kind: 'command', argv: node("setInterval(()=>process.stdout.write('x'.repeat(65536)),1)") },
      timeoutMs: 10_000,
    });
    assert.match(await failure(r.transcribe(samples)), /printed more than 65536 bytes/);
  });
  it('stops when the request goes away', async () => {
    const r = createRecogniser({ recogniser: { kind: 'command', argv: node('setInterval(()=>{},1000)') }, timeoutMs: 10_000 });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 300);
    assert.match(await failure(r.transcribe(samples, ac.signal)), /stopped because the request went away/);
  });
  it('refuses an argv that never passes {file}', () => {
    assert.throws(() => createRecogniser({ recogniser: { kind: 'command', argv: ['pocketsphinx_continuous'] }, timeoutMs: 1000 }), /VOICE|\{file\}/);
  });
});

describe('the http recogniser (an OpenAI-compatible endpoint)', () => {
  let server: Server;
  let url: string;
  let dir: string;
  let keyFile: string;
  let answer: (req: IncomingMessage, form: FormData) => { status: number; body: string } | 'hang';
  const seen: { auth?: string; model?: unknown; format?: unknown; file?: Buffer }[] = [];
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lookfirst-voice-test-'));
    keyFile = join(dir, 'key');
    await writeFile(keyFile, 'sk-test-123\n');
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
      const file = form.get('file');
      seen.push({
        auth: req.headers.authorization,
        model: form.get('model'),
        format: form.get('response_format'),
        file: file instanceof Blob ? Buffer.from(await file.arrayBuffer()) : undefined,
      });
      const a = answer(req, form);
      if (a === 'hang') return;
      res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
    });
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/audio/transcriptions?token=secret`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((res) => server.close(res));
    await rm(dir, { recursive: true, force: true });
  });

  it('posts the WAV as multipart file with model and response_format, with the bearer key from its file', async () => {
    answer = () => ({ status: 200, body: JSON.stringify({ text: ' Number  two. ' }) });
    const r = createRecogniser({ recogniser: { kind: 'http', url, model: 'whisper-1', apiKeyFile: keyFile }, timeoutMs: 5000 });
    assert.equal(await r.transcribe(samples), 'Number two.');
    const last = seen.at(-1)!;
    assert.equal(last.auth, 'Bearer sk-test-123');
    assert.equal(last.model, 'whisper-1');
    assert.equal(last.format, 'json');
    assert.deepEqual(decodeRecording(last.file!, 10_000).samples, samples);
  });
  it('says what the endpoint answered on an error, without credentials or query', async () => {
    answer = () => ({ status: 500, body: '{"error":"model not loaded"}' });
    const r = createRecogniser({ recogniser: { kind: 'http', url, model: 'm' }, timeoutMs: 5000 });
    const got = await failure(r.transcribe(samples));
    assert.match(
      got,
      /^VOICE_RECOGNISER_FAILED: the transcription endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/audio\/transcriptions answered 500: \{"error":"model not loaded"\}$/,
    );
    assert.ok(!got.includes('secret'));
  });
  it('refuses an answer without a text string, or not JSON', async () => {
    const r = createRecogniser({ recogniser: { kind: 'http', url, model: 'm' }, timeoutMs: 5000 });
    answer = () => ({ status: 200, body: '{"transcript":"yes"}' });
    assert.match(await failure(r.transcribe(samples)), /without a "text" string/);
    answer = () => ({ status: 200, body: 'yes' });
    assert.match(await failure(r.transcribe(samples)), /not JSON/);
  });
  it('gives up at the timeout', async () => {
    answer = () => 'hang';
    const r = createRecogniser({ recogniser: { kind: 'http', url, model: 'm' }, timeoutMs: 300 });
    assert.match(await failure(r.transcribe(samples)), /did not answer within 300 ms/);
  });
  it('says when the key file cannot be read, without reading further', async () => {
    const r = createRecogniser({ recogniser: { kind: 'http', url, model: 'm', apiKeyFile: join(dir, 'missing') }, timeoutMs: 5000 });
    assert.match(await failure(r.transcribe(samples)), /API key file .* cannot be read/);
  });
  it('says when nothing listens there', async () => {
    const r = createRecogniser({ recogniser: { kind: 'http', url: 'http://127.0.0.1:9/v1/audio/transcriptions', model: 'm' }, timeoutMs: 5000 });
    assert.match(await failure(r.transcribe(samples)), /could not be reached/);
  });
});
