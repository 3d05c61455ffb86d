/**
 * What a tool's input and output schemas say about writing: fields that carry content to write or a
 * target to change (`new_name`, `replacement`, `recipients`, a file to save to), switches only a writing
 * tool has (`dry_run`, `overwrite`, `confirm`), an operation field whose choices include a write, and
 * output fields that count changes (`deleted_count`, `rows_affected`). Schemas never make a tool read:
 * they can only add doubt. Pure.
 */
import { judgeOperation } from './operation.js';
import type { PhraseSignal } from './phrase.js';
import { CATEGORY_FIELDS, GENERIC_OPERATION_FIELDS, METHOD_FIELDS, OPERATION_FIELDS } from './words.js';

/** Most properties looked at per schema, and how deep (nested objects, array items). */
const MAX_PROPERTIES = 500;
const MAX_DEPTH = 6;

/** Words of a field name: `newName` → new, name; `dry_run` → dry, run. */
function fieldWords(name: string): string[] {
  return name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** What follows `new` in a field that carries the new value of something (`new_name`, `newContent`). */
const NEW_VALUE = new Set(
  'name content contents string text value title path status state data body description file filename label parent owner location password email message source code version tag branch'.split(
    ' ',
  ),
);

/**
 * A field that names where the call writes a file. A location of the caller's choosing (`outputDir`,
 * `filePath` "to save the screenshot to") is a write; a bare file name (`filename`, usually kept in the
 * server's own output folder) leaves a doubt that a name or description that reads settles.
 */
const LOCATION_WORDS = new Set(['path', 'dir', 'directory', 'folder', 'file', 'filename', 'filepath', 'outfile']);
/** Field words that name a file only when the description says so (`output`, `to`, `location`). */
const MAYBE_LOCATION = new Set(['output', 'out', 'to', 'location', 'target', 'dest', 'destination']);
const OUTPUT_LEAD = /^(?:out|output|save|dest|destination|download|export|target|write)/i;
const SAVES =
  /\b(?:save[sd]?|saving|write[sn]?|writing|written|store[sd]?|export(?:s|ed)?|download(?:s|ed)?|dump(?:s|ed)?)\b[^.]{0,60}?\b(?:to|in|into|as|at|under)\b|\boutput\s+(?:file|path|dir|directory|folder)|\bwhere\s+to\s+(?:save|write|store)|\bfile\s+(?:name|path)\s+to\s+(?:save|write)/i;

/** Whether a field names where a file is written: `path` for a location of the caller's, `name` for a bare file name. */
function outputLocation(name: string, desc: string): 'path' | 'name' | undefined {
  const w = fieldWords(name);
  // `destination` or `to` alone is a place or a person as often as a file: only a description that says
  // file counts for them.
  const named = w.some((x) => MAYBE_LOCATION.has(x)) && /\b(?:file|path|folder|directory|on\s+disk)\b/i.test(desc);
  const fileish = w.some((x) => LOCATION_WORDS.has(x)) || named;
  if (!fileish) return undefined;
  // `to`, `output`, `location` said to be a file: where the result goes.
  if (named && !/^(?:input|source|src|from|read)/i.test(name)) return 'path';
  // A file the call replaces is written, whatever the field is called.
  if (/\boverwrit|\breplaced\b|\btruncat/i.test(desc)) return 'path';
  if (!OUTPUT_LEAD.test(name) && !SAVES.test(desc) && !/\b(?:to\s+write|goes|written)\b/i.test(desc)) return undefined;
  if (/^(?:input|source|src|from|read)/i.test(name)) return undefined;
  const bare = w.every((x) => x === 'file' || x === 'filename' || x === 'name') && !/\b(?:absolute|relative)\b|\bpath\b|\bdirectory\b/i.test(desc);
  return bare ? 'name' : 'path';
}

/** Output fields that count or name what a call changed. */
const CHANGE_COUNTS =
  /^(?:deleted_?count|deleted|rows_?affected|affected_?rows|modified_?count|inserted_?(?:id|ids|count)|upserted_?(?:id|count)|created_?count|updated_?count|removed_?count)$/i;

interface Schema {
  type?: unknown;
  properties?: Record<string, unknown>;
  items?: unknown;
  enum?: unknown[];
  description?: unknown;
  anyOf?: unknown[];
  oneOf?: unknown[];
}

const asSchema = (v: unknown): Schema | undefined => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Schema) : undefined);

/** `anyOf` and `oneOf` entries, when they are arrays (a malformed schema has none). */
const alternatives = (s: Schema): unknown[] => [...(Array.isArray(s.anyOf) ? s.anyOf : []), ...(Array.isArray(s.oneOf) ? s.oneOf : [])];

/**
 * A schema with a local `$ref` (`#/$defs/A`, `#/definitions/A`) followed, up to 8 hops, within `root`
 * (JSON Schema 2020-12 §8.2.3.1). A reference that goes elsewhere or nowhere is left as it is.
 */
function deref(s: Schema | undefined, root: unknown): Schema | undefined {
  let cur = s;
  for (let hop = 0; hop < 8 && cur && typeof (cur as { $ref?: unknown }).$ref === 'string'; hop++) {
    const ref = (cur as { $ref: string }).$ref;
    if (!ref.startsWith('#/')) break;
    let at: unknown = root;
    for (const part of ref.slice(2).split('/')) at = asSchema(at)?.[part.replaceAll('~1', '/').replaceAll('~0', '~') as keyof Schema];
    const next = asSchema(at);
    if (!next) break;
    cur = { ...next, ...Object.fromEntries(Object.entries(cur).filter(([k]) => k !== '$ref')) };
  }
  return cur;
}

/** Most schema nodes one definition's walk visits (properties, alternatives, items, references). */
const MAX_NODES = 5000;

/** Sub-schemas that hold more properties: every shape a JSON Schema can nest them in. */
function subschemas(s: Schema): unknown[] {
  const x = s as Record<string, unknown>;
  const list: unknown[] = [...alternatives(s), ...(Array.isArray(x.allOf) ? x.allOf : []), x.if, x.then, x.else, x.not];
  if (Array.isArray(x.prefixItems)) list.push(...x.prefixItems);
  return list;
}

/**
 * Visits every named property of a schema (nested objects, array items, `anyOf`/`oneOf`/`allOf`,
 * `if`/`then`/`else`, `prefixItems`, `additionalProperties` and `patternProperties` as the property
 * `*`, local `$ref`s), with the name of the property it sits in (`actions[].type` is visited as `type`
 * inside `actions`). Bounded by depth and by MAX_NODES in all.
 * @returns false when the bound cut the walk short (a schema too large or too recursive to read).
 */
function eachProperty(schema: unknown, visit: (name: string, prop: Schema, parent: string) => void): boolean {
  let nodes = 0;
  let complete = true;
  const walk = (s: Schema | undefined, depth: number, parent: string): void => {
    if (!s) return;
    // Deeper than MAX_DEPTH is not read (real schemas put what matters near the top); more nodes than
    // MAX_NODES is a schema too large or recursive to read, and counts against it.
    if (depth > MAX_DEPTH) return;
    if (++nodes > MAX_NODES) {
      complete = false;
      return;
    }
    const x = s as Record<string, unknown>;
    const named: [string, unknown][] = Object.entries(asSchema(s.properties) ?? {});
    if (asSchema(x.additionalProperties)) named.push(['*', x.additionalProperties]);
    // A pattern that is one literal name (`^action$`) names that field; any other stands for any name.
    for (const [pattern, extra] of Object.entries(asSchema(x.patternProperties) ?? {}))
      if (asSchema(extra)) named.push([/^\^?[\w-]+\$?$/.test(pattern) ? pattern.replace(/^\^|\$$/g, '') : '*', extra]);
    for (const [name, raw] of named) {
      if (++nodes > MAX_NODES || named.length > MAX_PROPERTIES) {
        complete = false;
        return;
      }
      const prop = deref(asSchema(raw), schema);
      if (!prop) continue;
      visit(name, prop, parent);
      walk(prop, depth + 1, name);
      walk(deref(asSchema(prop.items), schema), depth + 1, name);
    }
    for (const sub of subschemas(s)) walk(deref(asSchema(sub), schema), depth + 1, parent);
  };
  walk(deref(asSchema(schema), schema), 0, '');
  return complete;
}

/** Fields that send the call's data to an address of the caller's choosing (`webhook`, `callback_url`). */
const OUTBOUND_FIELD =
  /^(?:webhooks?|webhook_?ur[il]|callback(?:_?ur[il])?|notify_?(?:ur[il]|email|to)|notification_?(?:ur[il]|email)|post_?back_?ur[il]|transfer_?to|send_?to|forward_?to|reply_?to)$/i;

/** Choices an operation or method field offers (`action: enum ["list", "create", "delete"]`). */
function choices(prop: Schema): string[] {
  const x = prop as Record<string, unknown>;
  const direct = [...(Array.isArray(prop.enum) ? prop.enum : []), x.const, x.default, ...(Array.isArray(x.examples) ? x.examples : [])];
  for (const part of Array.isArray(x.allOf) ? x.allOf.slice(0, 20) : []) direct.push(...choices(asSchema(part) ?? {}));
  // Choices listed in words ("one of: list, delete", "values: list | delete", "Supported actions are get and delete").
  const listed =
    typeof prop.description === 'string'
      ? /\b(?:one of|values?|options?|choices?|either|supported\s+\w+\s+are|actions?\s+are|can be)\b\s*:?\s*([^.;]{1,300})/i.exec(prop.description)?.[1]
      : undefined;
  if (listed)
    direct.push(
      ...listed
        .split(/\s*(?:,|\||\bor\b|\band\b|\n\s*[-*•]?)\s*/)
        .map((w) => w.replace(/["'`]/g, '').trim())
        .filter((w) => /^[\w.-]{1,40}$/.test(w)),
    );
  const items = asSchema(prop.items);
  const nested = items && Array.isArray(items.enum) ? items.enum : [];
  const alts = alternatives(prop).flatMap((a) => {
    const s = asSchema(a) as (Schema & { const?: unknown }) | undefined;
    return s?.const !== undefined ? [s.const] : Array.isArray(s?.enum) ? s.enum : [];
  });
  return [...direct, ...nested, ...alts].filter((v): v is string => typeof v === 'string').slice(0, 200);
}

/**
 * A field description that says the field only filters what is listed (`action`: "Filter to-do items by
 * action"): its choices name kinds of events, not what this call does.
 */
const FILTERS = /\bfilter(?:s|ed|ing)?\s+(?:[\w-]+\s+){0,3}?by\b|\bto\s+filter\b/i;

/** Whether a schema requires an addressee and a message (`to` with `body`, `message` or `text`). */
function sendsMessage(schema: unknown): boolean {
  // Required, both: a search has optional `to` and `subject` filters.
  const required =
    asSchema(schema) && Array.isArray((schema as { required?: unknown }).required) ? ((schema as { required: unknown[] }).required as unknown[]) : [];
  const names = required.filter((n): n is string => typeof n === 'string').map((n) => n.toLowerCase());
  const to = names.some((n) => /^(?:to|recipient|recipients|to_?address|to_?number|phone_?number)$/.test(n));
  if (to && names.some((n) => /^(?:body|message|text|content|html)$/.test(n))) return true;
  // Not required, an addressee with a body or a message still sends one (a search filters by `subject`).
  const all = Object.keys(asSchema(asSchema(schema)?.properties) ?? {}).map((n) => n.toLowerCase());
  return all.includes('to') && all.some((n) => /^(?:body|message|html|html_?body|text_?body)$/.test(n));
}

/** Words of a switch that writes when it is on (`delete_after_read`, `send_notification`, `purge`). */
const SWITCH_WRITES = new Set(
  'delete remove purge drop destroy erase wipe overwrite send notify publish pay charge refund transfer archive consume ack'.split(' '),
);

/** Judges an input schema: the first field found that says write, or nothing. */
export function judgeInputSchema(schema: unknown): PhraseSignal | undefined {
  let found: PhraseSignal | undefined;
  const complete = eachProperty(schema, (name, prop, parent) => {
    if (found?.kind === 'write') return;
    const w = fieldWords(name);
    const desc = typeof prop.description === 'string' ? prop.description.slice(0, 500) : '';
    let hit: PhraseSignal | undefined;
    // An operation field that only filters what is listed (`action: "merge_train_removed"` of to-do items)
    // names kinds of events, not what this call does.
    // `actions: [{ type: "click" }]`: the kind of each step of an operation list is an operation too.
    // A field whose choices say what the call does: an operation (`action`, `op`, `do`, a `command` with a
    // fixed set of values), the kind of each step of an operation list (`actions: [{ type: "click" }]`),
    // a category (`mode: "purge_all"`), or an HTTP method.
    const operation =
      OPERATION_FIELDS.test(name) ||
      name === '*' ||
      (OPERATION_FIELDS.test(parent) && /^(?:type|kind|name|action)$/i.test(name)) ||
      (/^(?:cmd|command)$/i.test(name) && Array.isArray(prop.enum));
    // An operation field described as a kind of thing ("the type of task", "category filter") names
    // categories: only a bare verb, or a destructive verb that leads a choice, is an operation there.
    const described = operation && /\b(?:type|kind|category|categories)\s+of\b|\bcategory\b/i.test(desc);
    const generic = !operation && GENERIC_OPERATION_FIELDS.test(name);
    const category = (!operation && CATEGORY_FIELDS.test(name)) || described;
    if (OUTBOUND_FIELD.test(name.replace(/-/g, '_'))) {
      hit = { kind: 'write', risk: 'high', soft: false, why: `input "${name}" sends the call's data to an address of the caller's choosing` };
    } else if ((operation || category || generic || METHOD_FIELDS.test(name)) && !FILTERS.test(desc)) {
      for (const c of choices(prop)) {
        const upper = c.trim().toUpperCase();
        const http = /^(POST|PUT|PATCH|DELETE)$/.test(upper) ? { risk: upper === 'DELETE' ? ('high' as const) : ('medium' as const) } : undefined;
        const op = http ?? judgeOperation(c, category ? 'category' : operation ? 'operation' : generic ? 'generic' : 'method', false);
        if (op) {
          hit = { kind: 'write', risk: op.risk, soft: false, why: `input "${name}" offers "${c.slice(0, 30)}"` };
          break;
        }
      }
    } else if (
      prop.type === 'boolean' &&
      ((prop as { default?: unknown }).default === true || (prop as { const?: unknown }).const === true) &&
      w.some((x) => SWITCH_WRITES.has(x))
    ) {
      // `delete_after_read: { type: boolean, default: true }`: the call writes unless told otherwise.
      hit = { kind: 'write', risk: 'medium', soft: false, why: `input "${name}" is on unless turned off` };
    } else if (w[0] === 'new' && w.length > 1 && NEW_VALUE.has(w[1] ?? '')) {
      hit = { kind: 'write', risk: 'medium', soft: false, why: `input "${name}" carries a new value` };
    } else if (['replacement', 'recipients', 'recipient', 'bcc', 'cc'].includes(w.join('_')) || (w.length === 1 && w[0] === 'overwrite')) {
      hit = { kind: 'write', risk: 'medium', soft: false, why: `input "${name}" carries content to write` };
    } else if (w.join('_') === 'dry_run' || w.join('') === 'dryrun') {
      // A doubt only: validators offer a dry run too (`validate_ci_lint`); a name or description that reads settles it.
      hit = { kind: 'doubt', risk: 'medium', why: `input "${name}" offers a dry run (the call may change something otherwise)` };
    } else {
      const where = outputLocation(name, desc);
      if (where === 'path') hit = { kind: 'write', risk: 'medium', soft: false, why: `input "${name}" names where the call writes a file` };
      else if (where === 'name') hit = { kind: 'doubt', risk: 'medium', why: `input "${name}" names a file the call may write` };
    }
    if (hit && (found === undefined || hit.kind === 'write')) found = hit;
  });
  // An addressee and a message to them, both required (`to` with `body`, `message` or `text`).
  if (found?.kind !== 'write' && sendsMessage(schema))
    return { kind: 'write', risk: 'high', soft: false, why: 'input has an addressee ("to") and a message to send them' };
  // What could not be read is not known to read.
  if (!complete && found?.kind !== 'write')
    return { kind: 'write', risk: 'medium', soft: false, why: `input schema too large or too recursive to read in full (over ${MAX_NODES} nodes)` };
  return found;
}

/** Judges an output schema: a field that counts what the call changed says write. */
export function judgeOutputSchema(schema: unknown): PhraseSignal | undefined {
  const s = asSchema(schema);
  for (const name of Object.keys(s?.properties ?? {}).slice(0, MAX_PROPERTIES))
    if (CHANGE_COUNTS.test(name)) return { kind: 'write', risk: 'medium', soft: false, why: `output "${name}" counts changes` };
  return undefined;
}
