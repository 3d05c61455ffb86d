/**
 * Addresses as lookfirst prints them: a URL may carry a secret in its userinfo (`https://u:pw@h`), its
 * query (`?key=`), or, for capability URLs such as chat webhooks (`/services/T…/B…/<token>`), its path.
 * What is printed goes to terminals, logs and pasted bug reports, so those parts are masked there.
 */

/** A path segment at least this long (characters, after decoding) is taken for a token when `path` masking is asked for. */
export const PATH_TOKEN_CHARS = 16;

/** What {@link maskUrl} masks beyond the password and the query values. */
export interface MaskUrlOptions {
  /** Also mask each path segment of {@link PATH_TOKEN_CHARS} characters or more (a webhook's token). Default false. */
  path?: boolean;
}

/**
 * The address with the userinfo password and every query value as `***` (the keys are kept, so the
 * reader sees what was there), a fragment as a whole (never sent, but it can hold a token too), and with
 * `path`, every long path segment; the rest is kept. Not a URL: returned as is (there is nothing to parse, so nothing is known
 * to be secret; the callers print configured addresses, which the config schema already checked).
 */
export function maskUrl(url: string, options: MaskUrlOptions = {}): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return url;
  }
  let changed = false;
  if (u.password !== '') {
    u.password = '***';
    changed = true;
  }
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=***`).join('&');
  if (query !== '') {
    u.search = `?${query}`;
    changed = true;
  }
  if (u.hash !== '') {
    u.hash = '***';
    changed = true;
  }
  if (options.path) {
    const segments = u.pathname.split('/');
    const masked = segments.map((s) => (safeDecode(s).length >= PATH_TOKEN_CHARS ? '***' : s));
    if (masked.some((s, i) => s !== segments[i])) {
      u.pathname = masked.join('/');
      changed = true;
    }
  }
  if (!changed) return url;
  return u.toString().replaceAll('%2A%2A%2A', '***');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
