import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { PendingApprovals } from '../confirm/pending.js';
import { ERROR_CSP, startWebApp, type WebApp } from './app.js';
import { acceptsHtml } from './http.js';

/** What Chromium sends when a person opens an address. */
const NAVIGATION = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

function get(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; type: string; csp: string; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: `127.0.0.1:${port}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          type: String(res.headers['content-type']),
          csp: String(res.headers['content-security-policy']),
          body,
        }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const accept = (value: string | undefined) => acceptsHtml({ headers: value === undefined ? {} : { accept: value } } as IncomingMessage);

describe('which requests get a page instead of JSON', () => {
  it('a browser navigation does', () => {
    assert.equal(accept(NAVIGATION), true);
    assert.equal(accept('TEXT/HTML'), true);
  });

  it('fetch, EventSource, API clients and an explicit refusal of HTML do not', () => {
    for (const a of [undefined, '', '*/*', 'application/json', 'text/event-stream', 'text/html;q=0', 'text/htmlx']) assert.equal(accept(a), false, String(a));
  });
});

describe('when the access key is missing or wrong', () => {
  let app: WebApp;
  let key: string;
  before(async () => {
    app = await startWebApp({ host: '127.0.0.1', port: 0, pending: new PendingApprovals() });
    key = new URL(app.url).searchParams.get('k')!;
  });
  after(() => app.close());

  for (const [what, path, sentence] of [
    ['missing', '/', /refused: missing access key: open the address the gate printed at start/],
    ['wrong', '/?k=not-the-key', /refused: wrong access key \(the gate restarted with a new key, or the address was cut short\): open the address/],
  ] as const) {
    it(`answers a browser a small HTML page with the sentence for a ${what} key (403, no script, strict CSP)`, async () => {
      const r = await get(app.port, path, { accept: NAVIGATION });
      assert.equal(r.status, 403);
      assert.match(r.type, /^text\/html; charset=utf-8/);
      assert.equal(r.csp, ERROR_CSP);
      assert.doesNotMatch(r.csp, /script-src/);
      assert.doesNotMatch(r.body, /<script/i);
      assert.match(r.body, sentence);
      assert.match(r.body, /<title>lookfirst: refused<\/title>/);
    });

    it(`keeps JSON with the same sentence for a script or API client, ${what} key (403)`, async () => {
      for (const headers of [{}, { accept: '*/*' }, { accept: 'application/json' }, { accept: 'text/event-stream' }] as Record<string, string>[]) {
        const r = await get(app.port, path.replace('/', '/state.json'), headers);
        assert.equal(r.status, 403);
        assert.match(r.type, /^application\/json/);
        assert.match((JSON.parse(r.body) as { error: string }).error, sentence);
      }
    });
  }

  it('escapes what the request put into the sentence (a foreign Host)', async () => {
    const r = await get(app.port, '/', { accept: NAVIGATION, host: '<b>evil</b>:1' });
    assert.equal(r.status, 403);
    assert.match(r.body, /Host &quot;&lt;b&gt;evil&lt;\/b&gt;:1&quot; is not this server&#39;s own address/);
    assert.doesNotMatch(r.body, /<b>/);
  });

  it('answers an unknown path 404 as a page to a browser and as JSON to a script', async () => {
    const page = await get(app.port, `/nowhere?k=${key}`, { accept: NAVIGATION });
    assert.equal(page.status, 404);
    assert.match(page.body, /not found: the approval page is at \//);
    const json = await get(app.port, `/nowhere?k=${key}`, {});
    assert.equal(json.status, 404);
    assert.match(json.body, /"error":"not found/);
  });

  it('still serves the page itself with the right key', async () => {
    const r = await get(app.port, `/?k=${key}`, { accept: NAVIGATION });
    assert.equal(r.status, 200);
    assert.match(r.body, /<script src="\/static\/app.js"/);
  });
});

describe('a key given to the page (one that outlives the process)', () => {
  it('is refused when short or not URL-safe, saying how to make one', async () => {
    for (const accessKey of ['short', `${'a'.repeat(40)}/`])
      await assert.rejects(
        startWebApp({ host: '127.0.0.1', port: 0, pending: new PendingApprovals(), accessKey }),
        /at least 32 characters .*openssl rand -hex 32/,
      );
  });
});
