/**
 * `npm run bench` (part): what issue 16 adds to a gated write, measured against what a gated write already
 * pays, in the same run, on this machine's disk and a SQLite store:
 * - a signed receipt (sign with the audit key, write, fsync, rename) against one durable audit append
 *   (every gated write makes four: call_received, decision, execution_started, executed);
 * - a paired device's decision (verify the signed request, issue the card set, decide: every named check,
 *   the nonce consumed, the evidence written) against the approval page's decision (one compare-and-set).
 * Medians over N rounds; nothing asserts. Reads are untouched by all of it (bench/read-path.ts).
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { generateAuditKey, loadSigner } from '../src/audit/keys.js';
import { RECEIPT_TYPE, RECEIPT_VERSION, type ReceiptBody } from '../src/audit/receipt.js';
import { writeReceipt } from '../src/audit/receipts.js';
import { AuditLog } from '../src/audit/writer.js';
import { systemClock } from '../src/clock.js';
import { Cards } from '../src/confirm/devices/cards.js';
import { DeviceRegistry } from '../src/confirm/devices/registry.js';
import { signedHeaders, verifyDeviceRequest } from '../src/confirm/devices/signature.js';
import { heldCall } from '../src/confirm/devices/test-kit.js';
import { PendingApprovals } from '../src/confirm/pending.js';
import { createSqliteStore } from '../src/store/sqlite/sqlite.js';
import { benchDir } from './temp.js';

const N = Number(process.env.BENCH_ROUNDS_CONFIRM ?? 200);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const ms = (x: number) => `${x.toFixed(2)} ms`;

const dir = benchDir('lf-bench-confirm-');
try {
  // ── Receipts against durable appends ─────────────────────────────────────────────────────────────
  generateAuditKey(join(dir, 'audit.key'), join(dir, 'audit.pub'));
  const signer = loadSigner(join(dir, 'audit.key'), 'lookfirst keygen');
  const audit = await AuditLog.open({ logPath: join(dir, 'audit.jsonl'), signer, clock: systemClock, warn: () => {} });
  const appends: number[] = [];
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await audit.appendDurable({ event: 'execution_started', call_id: `c-${i}`, tool: 'write_file' });
    appends.push(performance.now() - t);
  }
  const receipts: number[] = [];
  for (let i = 0; i < N; i++) {
    const body: ReceiptBody = {
      v: RECEIPT_VERSION,
      type: RECEIPT_TYPE,
      id: `rc_${randomBytes(8).toString('hex')}`,
      call_id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      who: { channel: 'device', actor: 'device:owner/phone', trust: 'device-key' },
      what: { tool: 'write_file', upstream: 'files', args_sha256: 'a'.repeat(64), shown: 'write_file: writes 16 bytes to notes.md' },
      when: { confirmed: new Date().toISOString(), executed: new Date().toISOString() },
      how: { method: 'tap' },
      checks: ['device_paired', 'card_set_open', 'not_expired', 'words_choose_card', 'action_unchanged', 'nonce_consumed_once'].map((name) => ({
        name,
        ok: true,
      })),
      outcome: { executed: 'ok', readback: 'none' },
      audit: { seq: i, entry_sha256: 'b'.repeat(64), event: 'executed' },
      key: signer.name,
    } as ReceiptBody;
    const t = performance.now();
    writeReceipt(join(dir, 'receipts'), body, (bytes) => audit.signDetached(bytes).sig);
    receipts.push(performance.now() - t);
  }
  await audit.close();
  const a = median(appends);
  const r = median(receipts);
  console.log(
    `receipts (${N} each, medians): durable audit append ${ms(a)}; signed receipt (sign, write, fsync, rename) ${ms(r)}: ${(r / a).toFixed(2)}x one append`,
  );
  console.log(`  a gated write already makes 4 durable appends (${ms(4 * a)}); the receipt adds ${((100 * r) / (4 * a)).toFixed(0)}% to them`);

  // ── A device decision against a page decision ────────────────────────────────────────────────────
  const store = createSqliteStore(join(dir, 'state.db'));
  const pending = new PendingApprovals(systemClock, { store });
  await pending.ready;
  const registry = new DeviceRegistry({ store });
  const cards = new Cards({ store, pending, registry, defaultUser: 'owner' });
  const key = randomBytes(32).toString('base64url');
  const device = await registry.register({ user: 'owner', name: 'bench phone', key });
  const page: number[] = [];
  const phone: number[] = [];
  const signal = new AbortController().signal;
  for (let i = 0; i < N; i++) {
    const deadlineMs = Date.now() + 60_000;
    const onPage = heldCall(`page-${i}`, { deadlineMs, channels: ['web'] });
    const held = pending.hold(onPage, ['web'], signal);
    let t = performance.now();
    await pending.decide(onPage.call.callId, onPage.call.argsSha256, true, { channel: 'web', actor: 'web:bench', trust: 'self-declared' });
    page.push(performance.now() - t);
    await held.answer;
    const onPhone = heldCall(`phone-${i}`, { deadlineMs, channels: ['device'] });
    const heldPhone = pending.hold(onPhone, ['device'], signal);
    t = performance.now();
    const path = '/device/api/cards';
    const auth = await verifyDeviceRequest(
      { registry, store, clock: systemClock },
      { method: 'GET', path, headers: signedHeaders({ id: device.id, key }, 'GET', path, Date.now()), body: Buffer.alloc(0) },
    );
    if (!auth.ok) throw new Error(auth.reason);
    const set = await cards.issue(auth.device);
    const card = set.cards.find((c) => c.call_id === onPhone.call.callId);
    if (!card) throw new Error('no card');
    const d = await cards.decide(auth.device, { setId: set.set_id, callId: card.call_id, nonce: card.nonce, approve: true, how: { method: 'tap' } });
    phone.push(performance.now() - t);
    if (!d.ok) throw new Error(d.reason);
    await heldPhone.answer;
  }
  pending.close();
  await store.close();
  const p = median(page);
  const q = median(phone);
  console.log(
    `device decisions (${N}, SQLite store, medians): page decision ${ms(p)}; signed device request + card set + decision ${ms(q)}: ${(q / p).toFixed(2)}x`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
