/**
 * Real audit logs for the verifier's tests: written by the gate's own AuditLog (worker, chain, head),
 * under a fresh key or a key shared with another log, plus heads signed at any size as the writer signs
 * them (a head that lags, or an older head put back).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex } from '../src/audit/canonical.js';
import { GENESIS_PREV } from '../src/audit/entry.js';
import { generateAuditKey, loadSigner, loadVerifier } from '../src/audit/keys.js';
import { CompactTree, leafHash } from '../src/audit/merkle.js';
import { formatCheckpoint, signNote } from '../src/audit/note.js';
import type { HeadInput } from '../src/audit/verify/verify.js';
import { AuditLog, CHAIN_EXTENSION } from '../src/audit/writer.js';
import { tempDir } from './temp.js';

/** A log on disk: its lines (without newlines), its head sidecar, and its key pair. */
export type MadeLog = Awaited<ReturnType<typeof makeLog>>;

/**
 * Writes a real log of `n` decision entries and returns its lines, head and verifier.
 * @param opts.keyOf another made log whose key pair to sign with (two logs under one key).
 * @param opts.tag text in each entry's reason, so two logs under one key differ.
 */
export async function makeLog(n: number, opts: { keyOf?: { keyPath: string; pubPath: string }; tag?: string } = {}) {
  const dir = tempDir('lf-verify-');
  const keyPath = opts.keyOf?.keyPath ?? join(dir, 'audit.key');
  const pubPath = opts.keyOf?.pubPath ?? join(dir, 'audit.pub');
  if (!opts.keyOf) generateAuditKey(keyPath, pubPath);
  const logPath = join(dir, 'audit.jsonl');
  let t = 1_700_000_000_000;
  const signer = loadSigner(keyPath, 'x.yaml');
  const log = await AuditLog.open({ logPath, signer, clock: { nowMs: () => t++ }, warn: () => {} });
  for (let i = 0; i < n; i++) await log.appendDurable({ event: 'decision', call_id: `c${i}`, tool: 't', action: 'confirm', reason: `${opts.tag ?? 'r'}${i}` });
  await log.close();
  const text = readFileSync(logPath, 'utf8');
  const heads: HeadInput[] = [{ label: 'head sidecar', note: readFileSync(`${logPath}.head`, 'utf8') }];
  return { lines: text.slice(0, -1).split('\n'), heads, verifier: loadVerifier(pubPath), signer, dir, logPath, keyPath, pubPath };
}

/** The log's text from its lines. */
export const textOf = (lines: string[]): string => (lines.length === 0 ? '' : `${lines.join('\n')}\n`);

/** A head over the first `size` lines, signed as the writer signs it (a lagging or older head). */
export function headAt(made: MadeLog, lines: string[], size: number): HeadInput {
  const tree = new CompactTree();
  for (const l of lines.slice(0, size)) tree.appendLeafHash(leafHash(Buffer.from(l, 'utf8')));
  const tip = size === 0 ? GENESIS_PREV : sha256Hex(lines[size - 1]!);
  const text = formatCheckpoint({ origin: made.signer.name, size, root: tree.root(), extensions: [`${CHAIN_EXTENSION} ${tip}`] });
  return { label: `head at ${size}`, note: signNote(text, made.signer) };
}
