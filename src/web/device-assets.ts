/**
 * The device page's own files (src/web/device-static, copied to dist/web/device-static by the build):
 * served without authentication, since they hold no secret; everything they can do goes through signed
 * API requests. Read once and kept in memory.
 */
import { readFileSync } from 'node:fs';

/** The device page's Content-Security-Policy: the approval page's, plus its manifest and service worker. */
export const DEVICE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; manifest-src 'self'; worker-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Request path → file in device-static and its Content-Type. */
const FILES: Record<string, { file: string; type: string }> = {
  '/device/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/device/index.html': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/device/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/device/voice.js': { file: 'voice.js', type: 'text/javascript; charset=utf-8' },
  '/device/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
  '/device/manifest.webmanifest': { file: 'manifest.webmanifest', type: 'application/manifest+json; charset=utf-8' },
  '/device/sw.js': { file: 'sw.js', type: 'text/javascript; charset=utf-8' },
  '/device/icon.svg': { file: 'icon.svg', type: 'image/svg+xml' },
};

const cache = new Map<string, string>();

/**
 * The static file served at `path`, or undefined when the path is none of the page's files.
 * @throws Error when the file is missing from the build (device-static was not copied to dist).
 */
export function deviceAsset(path: string): { body: string; type: string } | undefined {
  const f = FILES[path];
  if (!f) return undefined;
  let body = cache.get(f.file);
  if (body === undefined) {
    body = readFileSync(new URL(`./device-static/${f.file}`, import.meta.url), 'utf8');
    cache.set(f.file, body);
  }
  return { body, type: f.type };
}
