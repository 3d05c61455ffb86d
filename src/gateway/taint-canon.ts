/**
 * Canonical forms of the tokens taint remembers (gateway/taint-scan.ts), so that one address written two
 * ways is one token: hosts through the WHATWG URL parser (IDN to punycode, `0x0a010203` and `167838211` to
 * `10.1.2.3`, IPv6 compressed, ideographic full stops, a trailing dot), URLs without their fragment, paths
 * with `//`, `.` and `..` resolved, e-mail addresses with an unquoted local part and a canonical domain,
 * IBANs without spaces or dashes. Both sides (what an untrusted source said, what a call's arguments carry)
 * pass through the same functions. Pure; the parsers are Node's own (`new URL`, `node:net`, `node:path`).
 */
import { isIP } from 'node:net';
import { posix, win32 } from 'node:path';

/** Full stops other scripts write (ideographic, full-width, half-width ideographic): each is a `.` in a host. */
export const OTHER_DOTS = /[\u3002\uff0e\uff61]/g;

/** A URL token: any scheme followed by `//`. */
export const URL_SHAPE = /^[a-z][a-z0-9+.-]{0,15}:\/\//;

/**
 * The canonical form of a host name or IP address (lower case, punycode, dotted IPv4, IPv6 without
 * brackets), or undefined when the URL parser does not accept it as a host.
 */
export function canonicalHost(raw: string): string | undefined {
  let h = raw.replace(OTHER_DOTS, '.');
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  if (h.length === 0 || h.length > 253) return undefined;
  const v6 = isIP(h) === 6;
  if (!v6 && /[\s/?#@\\:[\]%]/.test(h)) return undefined;
  try {
    const host = new URL(`http://${v6 ? `[${h}]` : h}/`).hostname;
    const bare = host.startsWith('[') ? host.slice(1, -1) : host;
    return bare.endsWith('.') ? bare.slice(0, -1) : bare;
  } catch {
    return undefined;
  }
}

/** The canonical URL (no fragment, canonical host, resolved path) and its host, or undefined when it does not parse. */
export function canonicalUrl(raw: string): { url: string; host: string | undefined } | undefined {
  let u: URL;
  try {
    u = new URL(raw.replace(OTHER_DOTS, '.'));
  } catch {
    return undefined;
  }
  u.hash = '';
  let hostname = u.hostname;
  try {
    // Non-special schemes (ssh:, s3:) keep the host percent-encoded and not in punycode.
    hostname = decodeURIComponent(hostname);
  } catch {
    // kept as it is
  }
  const host = hostname === '' ? undefined : canonicalHost(hostname);
  return { url: u.href.toLowerCase(), host };
}

/** A POSIX path with `//`, `.` and `..` resolved (`/tmp//x/./y` is `/tmp/x/y`). */
export function canonicalPath(raw: string): string {
  const p = posix.normalize(raw);
  return p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p;
}

/** A Windows path with either slash, `.` and `..` resolved, lower case. */
export function canonicalWindowsPath(raw: string): string {
  return win32.normalize(raw.replaceAll('/', '\\')).toLowerCase();
}

/** An e-mail address with its local part unquoted and its domain canonical; undefined when the domain is no host. */
export function canonicalEmail(local: string, domain: string): { address: string; domain: string } | undefined {
  const host = canonicalHost(domain.startsWith('[') && domain.endsWith(']') ? domain.slice(1, -1) : domain);
  if (host === undefined) return undefined;
  const unquoted = local.length >= 2 && local.startsWith('"') && local.endsWith('"') ? local.slice(1, -1).replace(/\\(.)/g, '$1') : local;
  return { address: `${unquoted.toLowerCase()}@${host}`, domain: host };
}

/**
 * The parent domains of a host that could be planted (at least two labels: `a.b.evil.test` gives
 * `b.evil.test` and `evil.test`): a planted host taints its subdomains. No public-suffix list: a planted
 * `evil.github.io` taints `x.evil.github.io`, never `github.io`, because only what was planted is looked up.
 */
export function parentDomains(host: string): string[] {
  if (isIP(host) !== 0) return [];
  const labels = host.split('.');
  const out: string[] = [];
  for (let i = 1; i + 2 <= labels.length && out.length < 126; i++) out.push(labels.slice(i).join('.'));
  return out;
}

// File extensions and member names: `package.json`, `console.log` on a page are not hosts.
const NOT_TLDS = new Set(
  (
    'json js mjs cjs ts tsx jsx md txt html htm css scss less py pyc rb go rs java class jar c h cc cpp hpp cs vb ' +
    'yml yaml xml csv tsv png jpg jpeg gif svg webp ico bmp tif tiff pdf zip gz tgz bz2 xz tar rar lock toml ini cfg conf ' +
    'log sh bash zsh exe dll so dylib bin php pl lua swift kt kts scala dart ex exs erl hrl hs ml fs vue svelte sql db ' +
    'sqlite doc docx xls xlsx ppt pptx odt mp3 mp4 wav mov avi mkv ogg flac woff woff2 ttf otf eot map wasm env bak tmp ' +
    'old swp orig pem key crt cer der pub asc sig gpg ps1 bat cmd lnk iso img dmg deb rpm apk ipa msi dat out obj o a lib ' +
    'spec ipynb rst tex bib length prototype parse stringify then push pop keys values entries error warn debug ' +
    'exports module require default name value type data text body src href style id'
  ).split(' '),
);

/**
 * Whether a dotted word on an untrusted page is remembered as a host: its last label alphabetic (or
 * punycode), at least two characters, and not a file extension or a member name (`package.json`,
 * `console.log`, `req.body` stay clean).
 */
export function looksLikeHost(host: string): boolean {
  const tld = host.slice(host.lastIndexOf('.') + 1);
  return (/^[a-z]{2,63}$/.test(tld) || /^xn--[a-z0-9-]{1,59}$/.test(tld)) && !NOT_TLDS.has(tld);
}
