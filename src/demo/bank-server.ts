/**
 * A small fake bank, an MCP server on stdio for `lookfirst demo` and the tests: balance and transactions
 * (read-only) and transfer (destructive), with honest annotations. State lives in a JSON file so every
 * run of the demo starts from the same balance and a transfer can be checked afterwards.
 * Usage: node bank-server.js <state.json>
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

interface BankState {
  balance: number;
  currency: string;
  transactions: { id: number; to: string; amount: number; memo: string }[];
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: bank-server <state.json>\n');
  process.exit(1);
}
const load = (): BankState => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as BankState) : { balance: 1250, currency: 'EUR', transactions: [] });
const save = (s: BankState) => writeFileSync(file, JSON.stringify(s, null, 2));

const server = new McpServer({ name: 'demo-bank', version: '1.0.0' });

server.registerTool(
  'get_balance',
  { title: 'Get balance', description: 'Current account balance', annotations: { readOnlyHint: true, openWorldHint: false } },
  async () => {
    const s = load();
    return { content: [{ type: 'text', text: `Balance: ${s.balance.toFixed(2)} ${s.currency}` }] };
  },
);

server.registerTool(
  'list_transactions',
  { title: 'List transactions', description: 'Past transfers, newest first', annotations: { readOnlyHint: true, openWorldHint: false } },
  async () => {
    const s = load();
    return { content: [{ type: 'text', text: JSON.stringify([...s.transactions].reverse()) }] };
  },
);

server.registerTool(
  'transfer',
  {
    title: 'Transfer money',
    description: 'Send money from the account to an IBAN',
    inputSchema: {
      to: z.string().describe('IBAN of the recipient'),
      amount: z.number().positive(),
      currency: z.literal('EUR').default('EUR').describe('The account is in EUR'),
      memo: z.string().default(''),
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  },
  async ({ to, amount, memo }) => {
    const s = load();
    if (amount > s.balance) return { content: [{ type: 'text', text: `Insufficient funds: balance ${s.balance}` }], isError: true };
    s.balance = Math.round((s.balance - amount) * 100) / 100;
    const id = s.transactions.length + 1;
    s.transactions.push({ id, to, amount, memo });
    save(s);
    return {
      content: [{ type: 'text', text: `Transferred ${amount.toFixed(2)} ${s.currency} to ${to} (transaction ${id}). New balance ${s.balance.toFixed(2)}.` }],
    };
  },
);

await server.connect(new StdioServerTransport());
