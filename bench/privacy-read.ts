/**
 * `npm run bench`: what the privacy filter costs on a large read, end to end. The same 5 MB text file
 * (prose, code and logs, with a private value every ~2 KB: IBANs, cards, e-mails, phones, keys) is read
 * through `lookfirst serve` in front of a real @modelcontextprotocol/server-filesystem, once with
 * `privacy:` on and once with it off, in interleaved rounds; and directly, as a floor. Prints the median
 * latency (ms) per path and the ratio on/off. Goal (issue 15): filter on within 1.2x of filter off.
 * Nothing here asserts: figures are for people.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { generateAuditKey } from '../src/audit/keys.js';
import { benchDir } from './temp.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const READS = Number(process.env.BENCH_READS ?? 4);
const SIZE = 5 * 1024 * 1024;

/** About 5 MB of ordinary text with a private value every ~2 KB, so the filter has real work. */
function mixedText(): string {
  const filler = [
    'The quarterly report was reviewed by the finance team and approved for release on Monday.\n',
    'function total(items) { return items.reduce((sum, i) => sum + i.price * i.qty, 0); }\n',
    '2026-11-30T12:00:01.123Z INFO request id=7f3c2a order=48213-99 status=200 took=12ms\n',
    'Shipping address confirmed; the parcel left the warehouse at 14:05 with tracking 1Z999AA10123456784.\n',
  ];
  const secrets = [
    'IBAN DE89 3704 0044 0532 0130 00',
    'card 4111 1111 1111 1111',
    'mail jane.doe@example.org',
    'tel +44 20 7946 0958',
    `token ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`,
  ];
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < SIZE; i++) {
    const line = i % 22 === 21 ? `${secrets[((i / 22) % secrets.length) | 0]} on line ${i}\n` : (filler[i % filler.length] as string);
    parts.push(line);
    size += line.length;
  }
  return parts.join('');
}

const dir = benchDir('lookfirst-bench-privacy-');
const data = join(dir, 'data');
mkdirSync(data);
const file = join(data, 'five-mb.txt');
writeFileSync(file, mixedText());
const upstream = `upstreams:\n  files:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([FS_SERVER, data])}\n`;
for (const [name, extra] of [
  ['off', ''],
  ['on', 'privacy:\n  ttl_seconds: 600\n'],
] as const) {
  mkdirSync(join(dir, name));
  writeFileSync(join(dir, name, 'lookfirst.yaml'), `${upstream}${extra}`);
  generateAuditKey(join(dir, name, 'audit.key'), join(dir, name, 'audit.pub'));
}

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args,
      stderr: process.env.BENCH_DEBUG ? 'inherit' : 'ignore',
      maxBufferSize: 64 * 1024 * 1024,
    } as never),
  );
  return client;
}

const gate = (name: string) => [join(ROOT, 'dist/cli/main.js'), 'serve', '--config', join(dir, name, 'lookfirst.yaml')];
const clients: Record<string, Client> = {
  direct: await connect([FS_SERVER, data]),
  'gate, filter off': await connect(gate('off')),
  'gate, filter on': await connect(gate('on')),
};
const read = (c: Client) =>
  c.request({ method: 'tools/call', params: { name: 'read_text_file', arguments: { path: file } } }, ResultSchema, { timeout: 120_000 });

// Warm up each path, and check that the filter really masks (the figures mean nothing otherwise).
for (const c of Object.values(clients)) await read(c);
const masked = JSON.stringify(await read(clients['gate, filter on'] as Client));
if (masked.includes('DE89 3704') || !/\[\[IBAN_[0-9a-f]{32}\]\]/.test(masked)) throw new Error('the filter-on gate did not mask the file');

const times: Record<string, number[]> = Object.fromEntries(Object.keys(clients).map((k) => [k, []]));
const names = Object.keys(clients);
for (let round = 0; round < ROUNDS; round++) {
  for (let k = 0; k < names.length; k++) {
    const name = names[(round + k) % names.length] as string;
    for (let i = 0; i < READS; i++) {
      const t0 = performance.now();
      await read(clients[name] as Client);
      times[name]?.push(performance.now() - t0);
    }
  }
  process.stderr.write(`privacy read bench: round ${round + 1}/${ROUNDS}\r`);
}
process.stderr.write('\n');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
};
const m = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
console.log(`\nprivacy filter on a ${(SIZE / 1024 / 1024).toFixed(0)} MB file read (server-filesystem read_text_file, ${ROUNDS * READS} reads per path)`);
for (const [k, v] of Object.entries(m)) console.log(`  ${k.padEnd(18)} median ${v.toFixed(1)} ms`);
const ratio = (m['gate, filter on'] as number) / (m['gate, filter off'] as number);
console.log(`  filter on / filter off: ${ratio.toFixed(2)}x (goal ≤ 1.2x)`);

for (const c of Object.values(clients)) await c.close();
rmSync(dir, { recursive: true, force: true });
