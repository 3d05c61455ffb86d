/**
 * Pins: the audit entry bytes, the error codes and the exit codes that scripts and other tools depend on.
 * A change here is a format change: change it on purpose, with a new ENTRY_VERSION where bytes differ.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ENTRY_VERSION, encodeEntry, GENESIS_PREV, verifyEntrySignature } from '../src/audit/entry.js';
import { AUDIT_EVENTS, type AuditEvent, type AuditFieldsOf } from '../src/audit/events.js';
import { parseSignerKey, parseVerifierKey } from '../src/audit/note.js';
import { checkBeforeAppend } from '../src/audit/verify/append-check.js';
import { verifyLog } from '../src/audit/verify/verify.js';
import { VERIFY_EXIT } from '../src/cli/commands/verify-log.js';

const vectors = JSON.parse(readFileSync(new URL('./vectors/signed-note-vectors.json', import.meta.url), 'utf8'));
const verifyCases = JSON.parse(readFileSync(new URL('./vectors/verify-log-cases.json', import.meta.url), 'utf8')) as {
  verifierKey: string;
  cases: { name: string; how: string; log_base64: string; heads: string[]; verdict: string; problems: [string, number][] }[];
};

describe('audit entry format v1', () => {
  const signer = parseSignerKey(vectors.goSumdbNote.signerKey);

  it('encodes an entry to these exact bytes (canonical JSON, Ed25519 is deterministic)', () => {
    const line = encodeEntry(
      {
        event: 'decision',
        call_id: '00000000-0000-4000-8000-000000000000',
        tool: 'write_file',
        action: 'confirm',
        reason: 'annotations: destructiveHint true',
        rule: undefined,
      },
      0,
      1_800_000_000_000,
      GENESIS_PREV,
      signer.key,
    );
    assert.equal(ENTRY_VERSION, 1);
    const parsed = JSON.parse(line);
    assert.deepEqual(Object.keys(parsed), ['action', 'call_id', 'event', 'prev', 'reason', 'seq', 'sig', 'tool', 'ts', 'v']);
    assert.equal(
      line.replace(/"sig":"[^"]+"/, '"sig":"…"'),
      '{"action":"confirm","call_id":"00000000-0000-4000-8000-000000000000","event":"decision","prev":"0000000000000000000000000000000000000000000000000000000000000000","reason":"annotations: destructiveHint true","seq":0,"sig":"…","tool":"write_file","ts":1800000000000,"v":1}',
    );
    assert.equal(verifyEntrySignature(parsed, signer.key), true);
    assert.equal(
      line,
      encodeEntry(
        {
          event: 'decision',
          call_id: '00000000-0000-4000-8000-000000000000',
          tool: 'write_file',
          action: 'confirm',
          reason: 'annotations: destructiveHint true',
        },
        0,
        1_800_000_000_000,
        GENESIS_PREV,
        signer.key,
      ),
    );
  });

  it('fails verification when any field changes', () => {
    const line = encodeEntry({ event: 'read', tool: 't' }, 3, 5, 'a'.repeat(64), signer.key);
    for (const [k, v] of Object.entries({ event: 'write', tool: 'u', seq: 4, ts: 6, prev: 'b'.repeat(64), v: 2 })) {
      assert.equal(verifyEntrySignature({ ...JSON.parse(line), [k]: v }, signer.key), false, k);
    }
  });
});

/** SHA-256 of the example entries below, one per kind: a change here is a format change. */
const PINNED_EVENTS_SHA256 = '0fc8065658a3e6c64a98841c1ba267351295d4ff81b5f592925d84d2ed1c7440';

describe('exit codes', () => {
  it('are 0 intact, 1 no verdict, 2 tampered', () => {
    assert.deepEqual(VERIFY_EXIT, { intact: 0, unproven: 1, tampered: 2 });
  });
});

describe('verify-log known answers (test/vectors/verify-log-cases.json)', () => {
  const verifier = parseVerifierKey(verifyCases.verifierKey);
  const signer = parseSignerKey(vectors.goSumdbNote.signerKey);

  it('rebuilds the base log byte for byte from the entry format', () => {
    const base = Buffer.from(verifyCases.cases.find((c) => c.name === 'intact')!.log_base64, 'base64').toString('utf8');
    let prev = GENESIS_PREV;
    const lines = [0, 1, 2, 3, 4, 5].map((i) => {
      const line = encodeEntry({ event: 'decision', call_id: `c${i}`, action: 'confirm', reason: `r${i}` }, i, 1_800_000_000_000 + i, prev, signer.key);
      prev = createHash('sha256').update(line).digest('hex');
      return line;
    });
    assert.equal(base, `${lines.join('\n')}\n`);
  });

  for (const c of verifyCases.cases) {
    it(`gives "${c.verdict}" ${c.problems.length > 0 ? `naming ${c.problems.map(([k, l]) => `${k} at ${l}`).join(', ')} ` : ''}for: ${c.how}`, () => {
      const log = Buffer.from(c.log_base64, 'base64');
      const r = verifyLog(
        log,
        verifier,
        c.heads.map((note, i) => ({ label: `head ${i}`, note })),
      );
      assert.equal(r.verdict, c.verdict);
      assert.deepEqual(
        r.problems.map((p) => [p.kind, p.line]),
        c.problems,
      );
      // The gate's start-up check accepts exactly the intact cases that have a head.
      const start = checkBeforeAppend(log, c.heads[0], verifier);
      assert.equal(start.ok, c.verdict === 'intact', JSON.stringify(start));
    });
  }
});

describe('every audit event kind (audit/events.ts)', () => {
  const signer = parseSignerKey(vectors.goSumdbNote.signerKey);
  const call = { call_id: '00000000-0000-4000-8000-000000000000', tool: 'write_file' };
  // One example per kind, typed by the event map: a kind without an example does not compile.
  const EXAMPLES: { [K in AuditEvent]: AuditFieldsOf<K> } = {
    gate_started: { event: 'gate_started', version: '0.1.0', pid: 7, upstreams: 'files', dry_run: true },
    gate_stopped: { event: 'gate_stopped', reason: 'SIGTERM' },
    read: { event: 'read', tool: 'read_file', upstream: 'files', upstream_tool: 'read_file', reason: 'classifier: read-only', outcome: 'ok' },
    call_received: { event: 'call_received', ...call, upstream: 'files', upstream_tool: 'write_file', args_sha256: 'a'.repeat(64), client: 'c' },
    decision: { event: 'decision', ...call, action: 'confirm', reason: 'r', kind: 'mutation', risk: 'high' },
    approval: { event: 'approval', ...call, approved: true, channel: 'web', actor: 'web:alice', trust: 'self-declared' },
    approval_pending: { event: 'approval_pending', ...call, channels: 'web', until: '2027-01-01T00:00:00.000Z' },
    approval_lapsed: { event: 'approval_lapsed', ...call, actor: 'web:alice', reason: 'r' },
    call_retried: { event: 'call_retried', ...call },
    input_required: { event: 'input_required', ...call, until: '2027-01-01T00:00:00.000Z' },
    input_answered: { event: 'input_answered', ...call },
    input_refused: { event: 'input_refused', ...call, reason: 'r' },
    client_identity_changed: { event: 'client_identity_changed', from: 'a', to: 'b' },
    upstream_request: { event: 'upstream_request', upstream: 'files', method: 'sampling/createMessage', outcome: 'refused', reason: 'r' },
    definition_changed: { event: 'definition_changed', upstream: 'files', tool: 'write_file', how: 'changed', sha256: 'b'.repeat(64) },
    definition_accepted: { event: 'definition_accepted', ...call, upstream: 'files', sha256: 'b'.repeat(64), actor: 'web:alice' },
    dry_run_recorded: { event: 'dry_run_recorded', ...call, upstream: 'files', upstream_tool: 'write_file', args_sha256: 'a'.repeat(64), args: '{}' },
    executed: { event: 'executed', ...call, outcome: 'ok' },
    execution_failed: { event: 'execution_failed', ...call, outcome: 'unknown', reason: 'r' },
    readback: { event: 'readback', ...call, outcome: 'ok' },
    execution_started: { event: 'execution_started', ...call },
    execution_resolved: { event: 'execution_resolved', ...call },
    execution_blocked: { event: 'execution_blocked', ...call, reason: 'r' },
    execution_unblocked: { event: 'execution_unblocked', ...call, blocked_call: 'c', actor: 'web:alice' },
    cancelled: { event: 'cancelled', ...call, stage: 'before_execution' },
    web_refused: { event: 'web_refused', reason: 'r' },
    placeholder_refused: { event: 'placeholder_refused', call_id: 'c', tool: 't', upstream: 'u', args_sha256: 'h', unknown: 1, locked: false, reason: 'r' },
    placeholders_resolved: { event: 'placeholders_resolved', call_id: 'c', tool: 't', upstream: 'u', placeholders: 'IBAN_00' },
    receipt_issued: { event: 'receipt_issued', ...call, receipt_sha256: 'c'.repeat(64) },
    receipt_failed: { event: 'receipt_failed', ...call, reason: 'r' },
  };

  it('has a pinned example of every kind, encoded to these exact bytes', () => {
    assert.deepEqual(Object.keys(EXAMPLES).sort(), [...AUDIT_EVENTS].sort());
    let prev = GENESIS_PREV;
    const lines = AUDIT_EVENTS.map((k, i) => {
      const line = encodeEntry(EXAMPLES[k], i, 1_800_000_000_000 + i, prev, signer.key);
      prev = createHash('sha256').update(line).digest('hex');
      return line;
    });
    assert.equal(createHash('sha256').update(lines.join('\n')).digest('hex'), PINNED_EVENTS_SHA256, lines.join('\n'));
  });

  it('knows every kind the code writes', () => {
    const written = new Set<string>();
    const walk = (dir: string): void => {
      for (const f of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, f.name);
        if (f.isDirectory()) walk(p);
        else if (p.endsWith('.ts') && !p.endsWith('.test.ts'))
          for (const m of readFileSync(p, 'utf8').matchAll(/event: '([a-z_]+)'/g)) written.add(m[1] as string);
      }
    };
    walk(new URL('../src', import.meta.url).pathname);
    assert.deepEqual(
      [...written].filter((k) => !AUDIT_EVENTS.includes(k as AuditEvent)),
      [],
    );
  });
});
