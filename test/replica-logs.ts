/**
 * Folders of audit logs as several gate replicas leave them (decision 0015), written by the real AuditLog:
 * `<name>.jsonl` with its `.head`, and the replica's public key as `<name>.jsonl.pub`; the private keys
 * stay outside the folder, as they stay on each replica's host. For test/verify-log-dir.test.ts and
 * test/timeline-cli.test.ts (run `npm run build` first: they run the built CLI).
 */
import { join } from 'node:path';
import type { AuditFields } from '../src/audit/entry.js';
import { generateAuditKey, loadSigner } from '../src/audit/keys.js';
import { AuditLog } from '../src/audit/writer.js';
import { tmp } from './helpers.js';

/** One entry to write: when (ms) and what. */
export type Timed = [ts: number, fields: AuditFields];

/**
 * Writes a log named `name` into `dir` (created by the caller), one durable append per entry.
 * @returns the log's path.
 */
export async function writeReplicaLog(dir: string, name: string, entries: Timed[]): Promise<string> {
  const keys = tmp('lf-replica-key-');
  generateAuditKey(join(keys, 'audit.key'), join(dir, `${name}.jsonl.pub`));
  const logPath = join(dir, `${name}.jsonl`);
  let now = 0;
  const log = await AuditLog.open({ logPath, signer: loadSigner(join(keys, 'audit.key'), ''), clock: { nowMs: () => now }, warn: () => {} });
  for (const [ts, fields] of entries) {
    now = ts;
    await log.appendDurable(fields);
  }
  await log.close();
  return logPath;
}

const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);

/**
 * Two replicas, one story: replica a receives call c1 and asks a person; the client's retry lands on
 * replica b, where it is approved and executed. Each log also holds its own read.
 */
export async function twoReplicas(dir: string): Promise<{ a: string; b: string; t0: number }> {
  const call = { call_id: 'c1', tool: 'fs/write_file' };
  const a = await writeReplicaLog(dir, 'replica-a', [
    [T0, { event: 'gate_started', version: '0.1.0', pid: 11, upstreams: 'fs', replica: 'host-a-1111' }],
    [T0 + 100, { event: 'call_received', ...call, upstream: 'fs', upstream_tool: 'write_file', args_sha256: 'ab'.repeat(32), client: 'agent' }],
    [T0 + 101, { event: 'decision', ...call, action: 'confirm', reason: 'writes a file' }],
    [T0 + 400, { event: 'read', tool: 'fs/read_file', upstream: 'fs', upstream_tool: 'read_file', reason: 'read-only', outcome: 'ok' }],
  ]);
  const b = await writeReplicaLog(dir, 'replica-b', [
    [T0 + 50, { event: 'gate_started', version: '0.1.0', pid: 22, upstreams: 'fs', replica: 'host-b-2222' }],
    [T0 + 200, { event: 'call_retried', ...call }],
    [T0 + 300, { event: 'approval', ...call, approved: true, channel: 'web', actor: 'ana' }],
    [T0 + 301, { event: 'executed', ...call, outcome: 'ok' }],
    [T0 + 350, { event: 'read', tool: 'fs/list', upstream: 'fs', upstream_tool: 'list', reason: 'read-only', outcome: 'ok' }],
  ]);
  return { a, b, t0: T0 };
}
