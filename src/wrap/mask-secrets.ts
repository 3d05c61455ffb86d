/**
 * Secrets outside the servers' env and headers, for what `--dry-run` prints: a diff shows lines of
 * context around each change, and a client keeps its own secrets beside its servers (Claude Code's
 * ~/.claude.json holds `primaryApiKey` and `customApiKeyResponses` next to `mcpServers`; a webhook URL
 * or a database address sits in lookfirst.yaml next to `upstreams`). Every string value under a key
 * named like a credential is masked whole, and every address in any other string has its credentials
 * masked (core/mask-url.ts). A name-based rule over-masks (`"authMode": "***"`), which is the safe side.
 * Pure.
 */
import { applyEdits, type Node as JsonNode, parseTree } from 'jsonc-parser';
import { type Document, isMap, isScalar, isSeq } from 'yaml';
import { maskUrlsIn } from '../core/mask-url.js';

/** Key names taken for credentials (case-insensitive, anywhere in the name). */
const SECRET_NAME = /api[-_]?key|token|secret|passw(?:or)?d|passphrase|credential|auth|cookie|private[-_]?key|bearer|signature|session[-_]?id/i;

/** Keys that name where a credential is found, not the credential (Codex's `bearer_token_env_var`, `env_key`). */
const NAMES_A_VARIABLE = /(?:env[-_]?(?:var|key)s?|_var)$/i;

const MASK = '***';

/** True when a key's name says its value is a credential (`primaryApiKey`, `client_secret`, `Authorization`). */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name) && !NAMES_A_VARIABLE.test(name);
}

function maskString(value: string, secret: boolean, path: boolean): string {
  return secret ? MASK : maskUrlsIn(value, { path });
}

/**
 * JSON (with comments) text with every string under a credential-named key as `"***"` and the
 * credentials of every address in other strings masked; everything else, comments and layout, kept.
 * Text that does not parse is returned as is (the caller parsed it already).
 */
export function maskJsonSecrets(text: string): string {
  const root = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  if (root === undefined) return text;
  const edits: { offset: number; length: number; content: string }[] = [];
  const walk = (node: JsonNode, secret: boolean): void => {
    if (node.type === 'string') {
      const value = String(node.value);
      const masked = maskString(value, secret, false);
      if (masked !== value) edits.push({ offset: node.offset, length: node.length, content: JSON.stringify(masked) });
    } else if (node.type === 'property') {
      const [key, value] = node.children ?? [];
      if (value !== undefined) walk(value, secret || isSecretName(String(key?.value)));
    } else for (const child of node.children ?? []) walk(child, secret);
  };
  walk(root, false);
  return edits.length === 0 ? text : applyEdits(text, edits);
}

/** A parsed TOML document (plain objects and arrays) with its secrets masked in place, as {@link maskJsonSecrets}. */
export function maskTomlSecrets(value: unknown, secret = false): unknown {
  if (typeof value === 'string') return maskString(value, secret, false);
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) value[i] = maskTomlSecrets(v, secret);
  } else if (typeof value === 'object' && value !== null && [null, Object.prototype].includes(Object.getPrototypeOf(value))) {
    // A table (toml-patch makes them with no prototype); dates and times are class instances, left as they are.
    const o = value as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = maskTomlSecrets(o[k], secret || isSecretName(k));
  }
  return value;
}

/**
 * A YAML document's secrets masked in place, as {@link maskJsonSecrets}, comments kept; outside
 * `upstreams`, long path segments of addresses too (a webhook's token: `confirm.webhook.url`).
 */
export function maskYamlSecrets(doc: Document): void {
  const walk = (node: unknown, secret: boolean, path: boolean): void => {
    if (isScalar(node)) {
      if (typeof node.value === 'string') node.value = maskString(node.value, secret, path);
    } else if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        walk(pair.value, secret || isSecretName(key), path);
      }
    } else if (isSeq(node)) for (const item of node.items) walk(item, secret, path);
  };
  const root = doc.contents;
  if (!isMap(root)) {
    walk(root, false, true);
    return;
  }
  for (const pair of root.items) {
    const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
    walk(pair.value, isSecretName(key), key !== 'upstreams');
  }
}
