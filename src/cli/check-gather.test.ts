import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseConfig } from '../config/load.js';
import { fileFact, portFacts, secretFact, storeFact, trustedHeadFact, upstreamFact } from './check-gather.js';

const dir = mkdtempSync(join(tmpdir(), 'lf-gather-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const config = (yaml: string) => parseConfig(`upstreams:\n  files:\n    command: node\n${yaml}`, join(dir, 'lookfirst.yaml'));

describe('the facts check reads', () => {
  it('reduces a secret file to its mode and lengths: no field holds its text', () => {
    const path = join(dir, 'tokens');
    const secret = 'S3CRET'.repeat(8);
    writeFileSync(path, `${secret}\n\nshort\n${secret}\n`, { mode: 0o640 });
    const f = secretFact(path);
    assert.deepEqual(f.lineLengths, [48, 5, 48]);
    assert.equal(f.repeated, 1);
    assert.equal(f.mode, 0o640);
    assert.ok(!JSON.stringify(f).includes('S3CRET'));
    assert.ok(!JSON.stringify(f).includes('short'));
  });

  it('tells a missing file from one that cannot be read', () => {
    assert.deepEqual(fileFact(join(dir, 'none')), { path: join(dir, 'none'), exists: false });
    const sub = join(dir, 'a-folder');
    mkdirSync(sub);
    assert.equal(fileFact(sub).error, 'not a regular file');
  });

  it("calls a trusted head in the log's folder (or below) not elsewhere, and one outside elsewhere", () => {
    const c = config('');
    assert.equal(trustedHeadFact(c, join(dir, 'copy.head')).besideLog, true);
    assert.equal(trustedHeadFact(c, join(dir, 'sub', 'copy.head')).besideLog, true);
    assert.equal(trustedHeadFact(c, join(tmpdir(), 'elsewhere.head')).besideLog, false);
  });

  it('finds a SQLite store whose folder does not exist unwritable, without creating anything', async () => {
    const c = config('store: { kind: sqlite, path: no-such-folder/state.db }\n');
    const f = await storeFact(c, 1000);
    assert.equal(f.reachable, false);
    assert.equal(f.error, 'ENOENT');
    assert.equal(fileFact(join(dir, 'no-such-folder')).exists, false);
  });

  it('probes a listener port by connecting: in use while a server holds it', async () => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const [fact] = await portFacts(config(`confirm:\n  web: { enabled: true, port: ${port} }\n`));
      assert.deepEqual(fact, { key: 'confirm.web.port', host: '127.0.0.1', port, inUse: true });
    } finally {
      await new Promise((r) => server.close(r));
    }
    const [free] = await portFacts(config(`confirm:\n  web: { enabled: true, port: ${port} }\n`));
    assert.equal(free?.inUse, false);
  });

  it('gives up on an upstream that never answers within the timeout, and stops it', async () => {
    const c = parseConfig(
      `upstreams:\n  mute:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["-e", "setInterval(() => {}, 1000)"]\n`,
      join(dir, 'lookfirst.yaml'),
    );
    const start = performance.now();
    const f = await upstreamFact(c.upstreams[0]!, 500);
    assert.equal(f.ok, false);
    assert.match(f.error ?? '', /timed out|no answer within/i);
    // Bounded: the timeout, twice at worst, plus the child's stop (end of stdin, then SIGTERM after 2 s).
    assert.ok(performance.now() - start < 8000);
  });
});
