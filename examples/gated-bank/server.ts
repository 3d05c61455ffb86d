/**
 * A small bank as an MCP server on stdio, gated by lookfirst inside the same process: `get_balance`
 * answers at once; every `transfer` waits for a person (the approval page, or a webhook receiver when
 * BANK_WEBHOOK_URL is set), shown as "Send 120.00 EUR from checking to DE89 3704 0044 0532 0130 00 (Alice)"
 * (the whole IBAN: a phone shows nothing else) at a risk set by the amount, runs once if approved, and is read back (did the balance move by the amount?). Everything lands in the
 * signed audit log; `lookfirst verify-log --config <dir>/lookfirst.yaml` checks it (the example writes that
 * small config into BANK_DIR on start, since verify-log and receipt verify read the log's place from a config).
 *
 * Run: npm run build && node --import tsx examples/gated-bank/server.ts (then connect an MCP client on stdio).
 * Environment: BANK_DIR (audit log, key, state; default examples/gated-bank/.data), BANK_WEBHOOK_URL and
 * BANK_WEBHOOK_SECRET_FILE (a webhook receiver instead of the page), BANK_WEB_PORT (the page's port).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createGatedServer, type GatedConfirmOptions } from 'lookfirst';
import { z } from 'zod';

const dir = process.env.BANK_DIR ?? join(fileURLToPath(new URL('.', import.meta.url)), '.data');

/** Balances in cents, by account; the ledger of executed transfers. */
const balances = new Map<string, number>([
  ['checking', 250_000],
  ['savings', 1_000_000],
]);
const ledger: { id: string; from: string; iban: string; name: string; cents: number }[] = [];

const webhook = process.env.BANK_WEBHOOK_URL;
const confirm: GatedConfirmOptions = webhook
  ? {
      elicitation: false,
      timeout_seconds: 60,
      webhook: { url: webhook, secret_file: process.env.BANK_WEBHOOK_SECRET_FILE ?? 'webhook.secret', allow_insecure_loopback: true, listen_port: 0 },
    }
  : { web: { enabled: true, port: Number(process.env.BANK_WEB_PORT ?? 8471) } };

const bank = await createGatedServer({
  name: 'bank',
  version: '1.0.0',
  audit: { log: join(dir, 'audit.jsonl'), key: join(dir, 'audit.key') },
  confirm,
  rules: { transfer: { action: 'confirm' } },
});

const money = (cents: number, currency: string) => `${(cents / 100).toFixed(2)} ${currency}`;
const account = z.enum(['checking', 'savings']);

bank.read(
  'get_balance',
  { description: 'The balance of one account, in EUR.', inputSchema: { account } },
  async ({ account }) => ({ account, balance: (balances.get(account) ?? 0) / 100, currency: 'EUR' }),
);

bank.write(
  'transfer',
  {
    description: 'Sends money from one of your accounts to an IBAN.',
    inputSchema: {
      from: account,
      to_iban: z.string().regex(/^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$/),
      to_name: z.string().min(1).max(70),
      amount: z.number().positive().max(100_000),
      currency: z.literal('EUR').default('EUR'),
    },
    // Over 1,000 EUR is high (a paired phone asks twice); over 100 medium.
    risk: ({ amount }) => (amount > 1000 ? 'high' : amount > 100 ? 'medium' : 'low'),
    // The whole IBAN, in groups of four: a paired phone shows only this text, and an IBAN cut to "DE89…"
    // would let an injected call send the money to any account with the same first four characters.
    preview: ({ amount, currency, to_iban, to_name, from }) =>
      `Send ${money(Math.round(amount * 100), currency)} from ${from} to ${to_iban.replace(/(.{4})(?=.)/g, '$1 ')} (${to_name})`,
    // The balance must have moved by exactly the amount, and the transfer must be in the ledger.
    readback: async ({ from, amount }, result) => {
      const done = result.structuredContent as { transfer_id?: string; balance_after?: number } | undefined;
      const entry = ledger.find((t) => t.id === done?.transfer_id);
      if (!entry || entry.cents !== Math.round(amount * 100)) return { outcome: 'failed', detail: 'the transfer is not in the ledger' };
      const now = (balances.get(from) ?? 0) / 100;
      return now === done?.balance_after ? 'ok' : { outcome: 'unclear', detail: `the balance is ${now}, expected ${done?.balance_after}` };
    },
  },
  async ({ from, to_iban, to_name, amount }) => {
    const cents = Math.round(amount * 100);
    const before = balances.get(from) ?? 0;
    if (before < cents) throw new Error(`insufficient funds in ${from}`);
    balances.set(from, before - cents);
    const id = `tx-${ledger.length + 1}`;
    ledger.push({ id, from, iban: to_iban, name: to_name, cents });
    return { transfer_id: id, balance_after: (before - cents) / 100 };
  },
);

// `lookfirst verify-log` and `lookfirst receipt verify` find the log and key through a lookfirst.yaml, and a
// lookfirst.yaml must name an upstream: this one names the bank itself. It is only for checking the
// evidence (the gate runs inside this process, not through `lookfirst serve`); an existing one is kept.
const checkConfig = join(dir, 'lookfirst.yaml');
if (!existsSync(checkConfig)) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    checkConfig,
    `# For checking the bank's evidence only: lookfirst verify-log --config ${JSON.stringify(checkConfig)}\n` +
      `upstreams:\n  bank:\n    command: ${JSON.stringify(process.execPath)}\n    args: ["--import", "tsx", ${JSON.stringify(fileURLToPath(import.meta.url))}]\n` +
      'audit:\n  log: audit.jsonl\n  key: audit.key\n',
  );
}
process.stderr.write(`bank: check the audit log with: npx lookfirst verify-log --config ${checkConfig}\n`);

await bank.connect(new StdioServerTransport());
const stop = () => void bank.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
