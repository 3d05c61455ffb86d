/**
 * `lookfirst unwrap CLIENT`: puts back the client's file that `lookfirst wrap` saved (wrap.ts), byte for
 * byte, or only its servers block when the client changed the rest of its file since; refuses when the
 * servers changed too, unless told `--force`. `--dry-run` shows the masked diff and writes nothing.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createTwoFilesPatch } from 'diff';
import { LookfirstError } from '../../errors.js';
import { maskCodex } from '../../wrap/codex.js';
import { maskJson, restoreServersJson, serversJson } from '../../wrap/json.js';
import { CLIENT_KINDS, type ClientKind } from '../../wrap/types.js';
import { cliName } from '../output.js';
import { backupOf, clientFileOf, clientOf, noteOf, sha256, type WrapNote } from './wrap.js';
import { mustBeWritable, writeAtomic, writeNewCopy } from './wrap-files.js';

/** Options of `lookfirst unwrap`. */
export interface UnwrapOptions {
  configFile?: string;
  scope?: string;
  force?: boolean;
  /** Print the diff unwrap would make (masked, as wrap's) and write nothing. */
  dryRun?: boolean;
  json?: boolean;
}

/**
 * Runs `lookfirst unwrap`: puts back the bytes wrap saved. lookfirst.yaml is left as it is (its audit
 * log is evidence, and another client may share it).
 * @throws LookfirstError WRAP_REFUSED when there is no backup, the backup changed, or the file changed
 *   since wrap (without --force).
 */
export function unwrapCommand(clientArg: string, o: UnwrapOptions): number {
  const client = clientOf(clientArg);
  const file = clientFileOf(client, o);
  const backup = backupOf(file);
  if (!existsSync(backup) || !existsSync(noteOf(file)))
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file}: no ${existsSync(backup) ? 'note' : 'backup'} from lookfirst wrap beside it (${existsSync(backup) ? noteOf(file) : backup}), so there is nothing to restore. Edit the file by hand; nothing was changed.`,
    );
  const note = readNote(file, backup);
  if (note.client !== client)
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${file} was wrapped as ${note.client}, not ${client}: run \`${cliName()} unwrap ${note.client} --config-file ${file}\`; nothing was changed.`,
    );
  let original: Buffer;
  try {
    original = readFileSync(backup);
  } catch (err) {
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${backup} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}): make it a readable file, then run this again; nothing was changed.`,
    );
  }
  if (sha256(original) !== note.original_sha256)
    throw new LookfirstError(
      'WRAP_REFUSED',
      `${backup} is not the file wrap saved (its hash differs); nothing was changed. Restore the client's file by hand.`,
    );
  const current = existsSync(file) ? readFileSync(file) : undefined;
  if (current !== undefined && !o.dryRun) mustBeWritable(file, "the client's config");
  let edited: string | undefined;
  let restored: Buffer | string = original;
  let how: 'byte-exact' | 'servers-only' = 'byte-exact';
  if (current !== undefined && sha256(current) !== note.wrapped_sha256) {
    // The client may rewrite the rest of its file (Claude Code keeps its state in ~/.claude.json): when the
    // servers are still as wrap left them, put back only the original servers block and keep the rest.
    const serversUntouched =
      note.wrapped_servers_sha256 !== undefined && safeServersHash(client, current.toString('utf8'), file) === note.wrapped_servers_sha256;
    if (serversUntouched && !o.force) {
      restored = restoreServersJson(client, current.toString('utf8'), original.toString('utf8'), file);
      how = 'servers-only';
    } else if (!o.force) {
      throw new LookfirstError(
        'WRAP_REFUSED',
        `${file} changed since \`lookfirst wrap\`, its servers too: restoring the backup would lose those edits, so nothing was changed. Compare with \`diff ${backup} ${file}\`; then either carry your edits over by hand and delete ${backup} and ${noteOf(file)}, or run \`${cliName()} unwrap ${client} --config-file ${file} --force\` (your edited file is kept as ${file}.lookfirst-edited).`,
      );
    } else if (!o.dryRun) {
      // Never over an edited copy kept by an earlier unwrap --force: that is the user's work too.
      edited = writeNewCopy(file, '.lookfirst-edited', current, statSync(file).mode & 0o777);
    } else edited = `${file}.lookfirst-edited`;
  }
  if (o.dryRun) {
    const diff = createTwoFilesPatch(
      file,
      file,
      maskedClientText(client, current?.toString('utf8') ?? '', file),
      maskedClientText(client, restored.toString(), file),
    );
    const out = { client, file, restored: how, edited_copy: edited ?? null, gate_config: note.gate_config, dry_run: true, diff };
    if (o.json) process.stdout.write(`${JSON.stringify(out)}\n`);
    else
      process.stdout.write(
        `${diff}\nwould ${how === 'byte-exact' ? `restore ${file} byte for byte from its backup` : `restore the servers of ${file} from its backup and keep the rest of the file`}${edited ? ` (your edited version would be kept as ${edited}, or the first free .N after it)` : ''}\n(dry run: nothing was written; env and header values are shown as ***)\n`,
      );
    return 0;
  }
  writeAtomic(file, restored, current === undefined ? statSync(backup).mode & 0o777 : undefined);
  rmSync(noteOf(file));
  rmSync(backup);
  const out = { client, file, restored: how, edited_copy: edited ?? null, gate_config: note.gate_config };
  if (o.json) process.stdout.write(`${JSON.stringify(out)}\n`);
  else
    process.stdout.write(
      `${how === 'byte-exact' ? `restored ${file} byte for byte from its backup` : `restored the servers of ${file} from its backup; the rest of the file, changed since wrap, is kept`}${edited ? ` (your edited version: ${edited})` : ''}\n${note.gate_config} is left as it is (its upstreams and audit log stay); restart the client\n`,
    );
  return 0;
}

/**
 * A client file as a dry run shows it: env, header and address secrets masked (wrap/json.ts, wrap/codex.ts).
 * A file that no longer parses cannot be masked, so its text is not shown at all: it may hold secrets.
 */
function maskedClientText(client: ClientKind, text: string, file: string): string {
  if (text === '') return '';
  try {
    return client === 'codex' ? maskCodex(text, file) : maskJson(client, text, file);
  } catch {
    return `(${file} does not parse, so it is not shown: it may hold secrets that cannot be masked)\n`;
  }
}

/**
 * The note wrap left beside the client's file, checked for every field unwrap relies on (fail closed:
 * a note that is not wrap's, damaged or hand-edited, restores nothing).
 * @throws LookfirstError WRAP_REFUSED when it cannot be read, does not parse, or lacks a field.
 */
function readNote(file: string, backup: string): WrapNote {
  const refused = () =>
    new LookfirstError('WRAP_REFUSED', `${noteOf(file)} is not the note wrap wrote; nothing was changed. The original is ${backup}: copy it back by hand.`);
  let note: unknown;
  try {
    note = JSON.parse(readFileSync(noteOf(file), 'utf8'));
  } catch {
    throw refused();
  }
  if (typeof note !== 'object' || note === null || Array.isArray(note)) throw refused();
  const n = note as Record<string, unknown>;
  const hex = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);
  const kindOk = typeof n.client === 'string' && (CLIENT_KINDS as readonly string[]).includes(n.client);
  if (!kindOk || typeof n.gate_config !== 'string' || !hex(n.original_sha256) || !hex(n.wrapped_sha256)) throw refused();
  if (n.wrapped_servers_sha256 !== undefined && !hex(n.wrapped_servers_sha256)) throw refused();
  return note as WrapNote;
}

/** The servers fingerprint of a file that may no longer parse (then it matches nothing). */
function safeServersHash(client: ClientKind, text: string, file: string): string | undefined {
  try {
    return sha256(serversJson(client, text, file));
  } catch {
    return undefined;
  }
}
