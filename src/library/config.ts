/**
 * `createGatedServer`'s options → the gate's `Config`, through the lookfirst.yaml parser itself: the
 * options become the equivalent config document (JSON is YAML) with one in-process upstream, so every
 * setting is checked by the same schema, with the same defaults and the same error words as
 * `lookfirst serve`. Paths resolve against the working folder.
 */
import { dirname, join, resolve } from 'node:path';
import type { Config } from '../config/load.js';
import { parseConfig } from '../config/load.js';
import { ConfigError, type ConfigProblem } from '../errors.js';
import type { GatedServerOptions } from './types.js';

/** What the errors name as their source. */
export const OPTIONS_SOURCE = 'createGatedServer options';

const KNOWN = new Set(['name', 'version', 'audit', 'store', 'confirm', 'rules', 'log']);

/** The upstream name of the author's tools: the server's name in the config's upstream-name form. */
export function upstreamNameOf(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
  return slug || 'server';
}

/**
 * Builds the gate's config from the options.
 * @param upstream the in-process upstream's name (upstreamNameOf, made unique in the process).
 * @throws ConfigError `CONFIG_INVALID` naming every problem at once (`confirm.webhook.url: …`), as for
 *   lookfirst.yaml; with `createGatedServer options` as the source.
 */
export function toConfig(opts: GatedServerOptions, upstream: string): Config {
  const problems: ConfigProblem[] = [];
  const given = (opts ?? {}) as unknown as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!KNOWN.has(key)) problems.push({ path: key, message: `unknown option "${key}"` });
  if (typeof given.name !== 'string' || given.name.trim() === '') problems.push({ path: 'name', message: 'name is the server name clients see, e.g. "bank"' });
  if (typeof given.version !== 'string' || given.version === '')
    problems.push({ path: 'version', message: 'version is the server version clients see, e.g. "1.0.0"' });
  const audit = given.audit as GatedServerOptions['audit'] | undefined;
  if (typeof audit?.log !== 'string' || typeof audit?.key !== 'string')
    problems.push({ path: 'audit', message: 'audit needs log and key, e.g. { log: "./audit.jsonl", key: "./audit.key" }' });
  if (problems.length > 0) throw new ConfigError(OPTIONS_SOURCE, problems);
  const a = audit as GatedServerOptions['audit'];
  const doc = {
    upstreams: { [upstream]: { command: 'in-process' } },
    rules: { tools: opts.rules ?? {} },
    confirm: opts.confirm ?? {},
    audit: { log: a.log, key: a.key, reads: a.reads, receipts: a.receipts ?? join(dirname(resolve(a.log)), 'receipts') },
    store: opts.store ?? {},
  };
  const file = resolve(OPTIONS_SOURCE);
  try {
    const config = parseConfig(JSON.stringify(doc), file);
    // The lines of a document nobody wrote would only mislead the warnings that quote them.
    return { ...config, rules: config.rules.map(({ line: _line, ...rule }) => rule) };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Lines of a document nobody wrote mean nothing; the paths are the options' own.
    throw new ConfigError(
      OPTIONS_SOURCE,
      err.problems.map((p) => ({ path: p.path.replace(/^rules\.tools\./, 'rules.'), message: p.message })),
      err.code === 'CONFIG_UNREADABLE' ? 'CONFIG_UNREADABLE' : 'CONFIG_INVALID',
    );
  }
}
