/**
 * Addresses as lookfirst prints them: a URL may carry a secret in its userinfo (`https://u:pw@h`, or a
 * token as the user name: `https://ghp_…@github.com`), its query (`?key=`, or a bare `?<token>`), or, for
 * capability URLs such as chat webhooks (`/services/T…/B…/<token>`), its path.
 * What is printed goes to terminals, logs and pasted bug reports, so those parts are masked there.
 * Fail closed: a text that does not parse as a URL is masked by its shape (whatever sits before an `@`,
 * after a `?` or `#`), since it may still be an address with a typo in it, copied from a client's file.
 */

/** A path segment or user name at least this long (characters, after decoding) is taken for a token. */
export const PATH_TOKEN_CHARS = 16;

/** What {@link maskUrl} masks beyond the userinfo secrets, the query and the fragment. */
export interface MaskUrlOptions {
  /** Also mask each path segment of {@link PATH_TOKEN_CHARS} characters or more (a webhook's token). Default false. */
  path?: boolean;
}

const MASK = '***';

/**
 * The address with its secrets as `***`, the rest kept:
 * - the password; the user name too when there is no password or it is token-length (a token used as
 *   the user name), so only a short name beside a password is kept for the reader;
 * - every query value, keeping `key=` so the reader sees what was there; a query part with no value
 *   (`?<token>`, `?<token>=`) as a whole (the key is then the token itself);
 * - a fragment as a whole (never sent, but it can hold a token too);
 * - with `path`, every path segment of {@link PATH_TOKEN_CHARS} characters or more.
 * Returned exactly as given when nothing was masked. Never throws.
 */
export function maskUrl(url: string, options: MaskUrlOptions = {}): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return maskByShape(url, options);
  }
  // An opaque path (`foo:u:pw@host`, `mailto:…`) has no parts the parser tells apart: mask by shape.
  if (u.host === '' && !u.pathname.startsWith('/')) return maskByShape(url, options);
  // An `@` the parser did not take for the userinfo's end (`https://u:p?w@h` reads as host u, port p):
  // the text may still be a mistyped password, so it is masked by its shape too.
  if (u.username === '' && u.password === '' && userinfoEnd(url.replace(/^\s*[A-Za-z][A-Za-z0-9+.-]*:[/\\]*/, '')) >= 0) {
    return maskByShape(url, options);
  }
  let changed = false;
  if (u.password !== '') {
    u.password = MASK;
    changed = true;
  }
  if (u.username !== '' && (u.password === '' || safeDecode(u.username).length >= PATH_TOKEN_CHARS)) {
    u.username = MASK;
    changed = true;
  }
  if (u.search.length > 1) {
    u.search = `?${maskQuery(u.search.slice(1))}`;
    changed = true;
  }
  if (u.hash !== '') {
    u.hash = MASK;
    changed = true;
  }
  if (options.path) {
    const segments = u.pathname.split('/');
    const masked = segments.map(maskSegment);
    if (masked.some((s, i) => s !== segments[i])) {
      u.pathname = masked.join('/');
      changed = true;
    }
  }
  if (!changed) return url;
  return u.toString().replaceAll('%2A%2A%2A', MASK);
}

/** `a=1&tok&t2=` as `a=***&***&***`: values masked, keys kept, a part with no value masked whole. */
function maskQuery(query: string): string {
  return query
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      if (part === '') return '';
      // No value (`?<token>` or `?<token>=`): the key is the secret.
      return eq < 0 || eq === part.length - 1 ? MASK : `${part.slice(0, eq)}=${MASK}`;
    })
    .join('&');
}

function maskSegment(segment: string): string {
  return safeDecode(segment).length >= PATH_TOKEN_CHARS ? MASK : segment;
}

/**
 * A text the URL parser refused (or an opaque one), masked by where secrets sit in an address:
 * the userinfo (all before the last `@` of the authority) whole, the query as {@link maskQuery},
 * the fragment whole, and with `path` the long segments. Text with none of these is returned as is.
 */
function maskByShape(text: string, options: MaskUrlOptions): string {
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:/.exec(text)?.[0] ?? '';
  const slashes = /^[/\\]*/.exec(text.slice(scheme.length))?.[0] ?? '';
  let body = text.slice(scheme.length + slashes.length);
  // The userinfo ends at the last `@` before the path, even past a `?` or `#` (a password holding one).
  const at = userinfoEnd(body);
  const userinfo = at < 0 ? '' : MASK;
  if (at >= 0) body = body.slice(at);
  let tail = '';
  const hash = body.indexOf('#');
  if (hash >= 0) {
    tail = hash === body.length - 1 ? '#' : `#${MASK}`;
    body = body.slice(0, hash);
  }
  const q = body.indexOf('?');
  if (q >= 0) {
    tail = `?${maskQuery(body.slice(q + 1))}${tail}`;
    body = body.slice(0, q);
  }
  const end = body.search(/[/\\]/);
  const authority = end < 0 ? body : body.slice(0, end);
  let path = end < 0 ? '' : body.slice(end);
  if (options.path)
    path = path
      .split(/(?=[/\\])/)
      .map((s) => s.slice(0, 1) + maskSegment(s.slice(1)))
      .join('');
  return scheme + slashes + userinfo + authority + path + tail;
}

/** Where the userinfo of an address's text (after `scheme://`) ends: its last `@` before a path separator; -1 if none. */
function userinfoEnd(body: string): number {
  const end = body.search(/[/\\]/);
  return (end < 0 ? body : body.slice(0, end)).lastIndexOf('@');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** An address inside a longer text: a scheme, `://`, then up to a space or a quote. */
const ADDRESS_IN_TEXT = /[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>`]+/g;

/**
 * `text` with every address in it (`postgresql://u:pw@h/db`, `--url=https://h/?key=…`) masked by
 * {@link maskUrl}: for command-line arguments, which often carry a database or API address with its
 * credentials. Text with no address is returned as is.
 */
export function maskUrlsIn(text: string, options: MaskUrlOptions = {}): string {
  return text.replace(ADDRESS_IN_TEXT, (address) => maskUrl(address, options));
}
