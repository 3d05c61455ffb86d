/**
 * The gate's side of a wrap: the moved servers become `upstreams` entries of lookfirst.yaml, either in a
 * new file (with the approval page on, for clients that cannot ask in their own window) or merged into
 * an existing one through the `yaml` package's document model, which keeps its comments. Pure: the
 * caller validates the result with the config loader before anything is written.
 */
import { Document, isMap, isScalar, isSeq, parseDocument, type YAMLMap } from 'yaml';
import { maskUrl, maskUrlsIn } from '../core/mask-url.js';
import { LookfirstError } from '../errors.js';
import { maskYamlSecrets } from './mask-secrets.js';
import type { MovedServer } from './types.js';

/**
 * The upstream names an existing lookfirst.yaml already uses.
 * @throws LookfirstError WRAP_INVALID when the YAML does not parse (line and column named).
 */
export function upstreamNamesIn(text: string, file: string): Set<string> {
  const doc = parseGate(text, file);
  const ups = doc.get('upstreams');
  return new Set(isMap(ups) ? ups.items.map((p) => String((p.key as { value?: unknown })?.value ?? p.key)) : []);
}

function parseGate(text: string, file: string): Document.Parsed {
  const doc = parseDocument(text, { prettyErrors: true });
  const first = doc.errors[0];
  if (first !== undefined) {
    const pos = first.linePos?.[0];
    throw new LookfirstError(
      'WRAP_INVALID',
      `${file}: not valid YAML${pos ? ` at line ${pos.line}, column ${pos.col}` : ''} (${first.message.split('\n')[0]}). Fix it first; nothing was written.`,
    );
  }
  return doc;
}

/**
 * lookfirst.yaml with the moved servers added under `upstreams`; a reused one (MovedServer.reused) is
 * there already and is not added again. When nothing is added, the existing text comes back unchanged.
 * @param existing the current file's text, or undefined to write a new one.
 * @param source the client's file, named in a new file's header comment.
 * @param schema the JSON Schema of lookfirst.yaml (an absolute path), named on a new file's first line
 *   (`# yaml-language-server: $schema=…`) so that editors complete and check its keys; undefined: no line.
 * @param cli how a person runs this CLI here (cli/output.ts cliName), for the keygen hint in a new file.
 * @throws LookfirstError WRAP_INVALID when the existing YAML does not parse; WRAP_REFUSED when an
 *   upstream name is already taken (the caller avoids that by passing the taken names to the plan).
 */
export function mergeGateConfig(
  existing: string | undefined,
  moved: readonly MovedServer[],
  file: string,
  source: string,
  schema?: string,
  cli = 'lookfirst',
): string {
  const added = moved.filter((m) => m.reused !== true);
  if (existing === undefined) {
    const doc = new Document({
      upstreams: Object.fromEntries(added.map((m) => [m.upstream, m.entry])),
      confirm: { web: { enabled: true } },
    });
    // A path with a line break would end the comment; no line then, rather than a broken one.
    const schemaLine = schema === undefined || /[\u0000-\u001f\u007f\u2028\u2029]/.test(schema) ? '' : ` yaml-language-server: $schema=${schema}\n`;
    doc.commentBefore = `${schemaLine} Written by \`lookfirst wrap\` from ${source}.\n The servers below run behind the gate; see README "Config reference" for rules and channels.\n The audit key and log sit beside this file: run \`${cli} keygen --config ${file}\` once.`;
    const enabled = doc.getIn(['confirm', 'web', 'enabled'], true) as { comment?: string } | undefined;
    if (enabled) enabled.comment = ' the approval page, for clients that cannot ask in their own window';
    carryComments(doc, added);
    return doc.toString({ lineWidth: 0 });
  }
  const doc = parseGate(existing, file);
  if (added.length === 0) return existing;
  if (!isMap(doc.get('upstreams'))) doc.set('upstreams', doc.createNode({}));
  for (const m of added) {
    if (doc.hasIn(['upstreams', m.upstream]))
      throw new LookfirstError('WRAP_REFUSED', `${file}: upstreams.${m.upstream} exists already; rename it there, then run wrap again.`);
    doc.setIn(['upstreams', m.upstream], doc.createNode(m.entry));
  }
  carryComments(doc, added);
  return doc.toString({ lineWidth: 0 });
}

/** Puts each added server's comments (MovedServer.comments) above its `upstreams.<name>` key. */
function carryComments(doc: Document, added: readonly MovedServer[]): void {
  const ups = doc.get('upstreams') as YAMLMap | undefined;
  for (const m of added) {
    if (m.comments === undefined || m.comments.length === 0) continue;
    const pair = ups?.items.find((p) => (isScalar(p.key) ? p.key.value : p.key) === m.upstream);
    if (pair === undefined) continue;
    const key = isScalar(pair.key) ? pair.key : doc.createNode(pair.key);
    key.commentBefore = m.comments.map((l) => ` ${l}`).join('\n');
    pair.key = key;
  }
}

/**
 * lookfirst.yaml text with every env and header value under `upstreams` replaced by `***` and each url
 * (and each address in args) masked by maskUrl, comments
 * kept: what `--dry-run` shows.
 */
export function maskGateConfig(text: string, file: string): string {
  const doc = parseGate(text, file);
  const ups = doc.get('upstreams');
  if (!isMap(ups)) return text;
  for (const p of ups.items) {
    const name = (p.key as { value?: unknown })?.value ?? p.key;
    for (const sk of ['env', 'headers']) {
      const block = doc.getIn(['upstreams', name, sk]);
      if (!isMap(block)) continue;
      for (const q of block.items) doc.setIn(['upstreams', name, sk, (q.key as { value?: unknown })?.value ?? q.key], '***');
    }
    const url = doc.getIn(['upstreams', name, 'url']);
    if (typeof url === 'string') doc.setIn(['upstreams', name, 'url'], maskUrl(url));
    const args = doc.getIn(['upstreams', name, 'args']);
    if (isSeq(args))
      for (const [i, a] of args.items.entries()) {
        const v = isScalar(a) ? a.value : a;
        if (typeof v === 'string' && maskUrlsIn(v) !== v) doc.setIn(['upstreams', name, 'args', i], maskUrlsIn(v));
      }
  }
  // Secrets beside the upstreams (a diff's context lines show them): credential-named keys, webhook and other addresses.
  maskYamlSecrets(doc);
  return doc.toString({ lineWidth: 0 });
}
