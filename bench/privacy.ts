/**
 * `npm run bench` (part): the privacy filter's detection quality and speed.
 * - Per detector, over test/privacy-corpus/*.json: precision and recall of the findings (a finding counts
 *   when its span and label are exactly a known positive), and the number of known positives missed (0 is
 *   the bar; test/privacy-corpus.test.ts enforces it).
 * - MB/s of maskText on ~5 MB of mixed text (prose, code, logs, with private values sprinkled in), and of
 *   maskJson on a ~5 MB JSON result of many small strings; MB counts UTF-16 code units as bytes (the texts
 *   are ASCII but for a few values). Median of a few rounds, one core, a trivial in-memory Issuer.
 * Nothing here asserts: figures are for people. The issue's goal is ≥ 50 MB/s.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileDetector, type DetectOptions, type Finding } from '../src/privacy/detect.js';
import { type Issuer, maskJson, maskText } from '../src/privacy/mask.js';
import { PATHOLOGICAL } from '../test/privacy-corpus/pathological.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DIR = join(ROOT, 'test/privacy-corpus');

interface CorpusFile {
  positives: { text: string; expect: { value: string; label: string }[] }[];
  negatives: string[];
}

// ── Quality ───────────────────────────────────────────────────────────────────────────────────────────
const config = JSON.parse(readFileSync(join(DIR, 'config.json'), 'utf8')) as DetectOptions;
const detector = compileDetector(config);
console.log('privacy detection over test/privacy-corpus (exact span and label):');
console.log('  detector    positives  found  false+  missed  precision  recall');
for (const f of readdirSync(DIR).filter((x) => x.endsWith('.json') && x !== 'config.json')) {
  const file = JSON.parse(readFileSync(join(DIR, f), 'utf8')) as CorpusFile;
  let known = 0;
  let hit = 0;
  let falsePos = 0;
  const score = (text: string, expect: { value: string; label: string }[]) => {
    const want = new Set(expect.map((e) => `${text.indexOf(e.value)}:${text.indexOf(e.value) + e.value.length}:${e.label}`));
    known += want.size;
    for (const x of detector.find(text)) {
      if (want.has(`${x.start}:${x.end}:${x.label}`)) hit++;
      else falsePos++;
    }
  };
  for (const p of file.positives) score(p.text, p.expect);
  for (const n of file.negatives) score(n, []);
  const precision = hit + falsePos === 0 ? 1 : hit / (hit + falsePos);
  const recall = known === 0 ? 1 : hit / known;
  console.log(
    `  ${f.replace('.json', '').padEnd(10)} ${String(known).padStart(9)} ${String(hit).padStart(6)} ${String(falsePos).padStart(7)} ${String(known - hit).padStart(7)}` +
      `  ${precision.toFixed(3).padStart(9)}  ${recall.toFixed(3).padStart(6)}`,
  );
}

// ── Speed ─────────────────────────────────────────────────────────────────────────────────────────────
let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return Math.floor(seed / 65536) % n;
};
const pick = <T>(xs: readonly T[]) => xs[rand(xs.length)]!;
const PRIVATE = [
  'DE89 3704 0044 0532 0130 00',
  '4111 1111 1111 1111',
  'jane.doe@example.com',
  '+49 30 1234567',
  `ghp_FAKE${'a1B2c3D4'.repeat(4)}`,
  'password=hunter2',
  'AKIAFAKE1234567890AB',
];
const PROSE = [
  'The quick brown fox jumps over the lazy dog while the committee reviews the quarterly report.',
  'Please find attached the minutes of yesterday’s meeting; the next one is on Tuesday at 10:30.',
  'Our results improved by 12.5% compared with 2023, mostly thanks to the new onboarding flow.',
  'If the token budget is exceeded, the request is truncated and a warning is logged for the author.',
];
const CODE = [
  'export function parseConfig(path: string): Config {',
  '  const raw = readFileSync(path, "utf8"); // read once',
  '  for (let i = 0; i < items.length; i++) total += items[i].price * items[i].qty;',
  '  if (!user || user.id === undefined) throw new Error("no user for " + requestId);',
  '  return { ...defaults, ...JSON.parse(raw), version: "1.13.16" };',
];
const LOGS = [
  '2024-01-15T10:30:00.123Z INFO  [http] GET /api/v1/orders/100042357 200 12ms',
  '2024-01-15T10:30:01.456Z WARN  [db] slow query took 1532ms rows=1200 pool=4/20',
  '2024-01-15T10:30:02.789Z DEBUG [cache] hit key=user:98765 ttl=3600 size=2048',
  '192.168.1.20 - - [15/Jan/2024:10:30:03 +0000] "POST /login HTTP/1.1" 302 0 "-" "Mozilla/5.0"',
  'commit 3f786850e387550fdab836ed7e6dc881de23001b uuid=550e8400-e29b-41d4-a716-446655440000',
];
const lines: string[] = [];
let sprinkled = 0;
let size = 0;
while (size < 5_000_000) {
  const kind = rand(3);
  let line = pick(kind === 0 ? PROSE : kind === 1 ? CODE : LOGS);
  if (rand(50) === 0) {
    line += ` ${pick(PRIVATE)}`;
    sprinkled++;
  }
  lines.push(line);
  size += line.length + 1;
}
const text = lines.join('\n');
const json = {
  items: Array.from({ length: 60_000 }, (_, i) => ({
    id: `item-${i}`,
    title: pick(PROSE).slice(0, 40),
    created: '2024-01-15T10:30:00Z',
    tags: ['alpha', 'beta'],
    owner: rand(100) === 0 ? pick(PRIVATE) : `user${i % 977}`,
    qty: i % 13,
  })),
};
const jsonBytes = JSON.stringify(json).length;

const ids = new Map<string, string>();
const issuer: Issuer = {
  issue(value: string, f: Finding) {
    let p = ids.get(value);
    if (p === undefined) {
      p = `[[${f.label}_${ids.size.toString(16).padStart(32, '0')}]]`;
      ids.set(value, p);
    }
    return p;
  },
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const rate = (bytes: number, f: () => unknown) => {
  f();
  const mbs: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    f();
    mbs.push(bytes / 1e6 / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  return median(mbs);
};
const plain = compileDetector();
// What is found in the generated text: the sprinkled values (only the value of `password=hunter2`), and anything else.
const expectedValues = new Set(PRIVATE.map((p) => p.replace('password=', '')));
const inText = plain.find(text);
const sprinkledFound = inText.filter((f) => expectedValues.has(text.slice(f.start, f.end))).length;
const others = inText.filter((f) => !expectedValues.has(text.slice(f.start, f.end))).map((f) => `${f.label} ${JSON.stringify(text.slice(f.start, f.end))}`);
console.log(
  `in the generated mixed text: ${sprinkledFound} of ${sprinkled} sprinkled values found, ${others.length} other findings${others.length ? ` (${[...new Set(others)].slice(0, 5).join(', ')})` : ''}`,
);
const masked = maskText(text, plain, issuer);
console.log(`privacy masking speed (one core, median of ${ROUNDS}):`);
console.log(
  `  maskText on ${(text.length / 1e6).toFixed(1)} MB mixed text (${plain.find(text).length} findings): ${rate(text.length, () => maskText(text, plain, issuer)).toFixed(0)} MB/s`,
);
console.log(
  `  maskJson on ${(jsonBytes / 1e6).toFixed(1)} MB JSON (${JSON.stringify(maskJson(json, plain, issuer)).length - jsonBytes} chars changed in length): ${rate(jsonBytes, () => maskJson(json, plain, issuer)).toFixed(0)} MB/s`,
);
console.log(`  maskText on already-masked text: ${rate(masked.length, () => maskText(masked, plain, issuer)).toFixed(0)} MB/s`);

// ── Worst cases ───────────────────────────────────────────────────────────────────────────────────────
// Numeric dumps (long runs of digits and separators, the costliest ordinary input) and hostile texts made
// to slow the scans down (each about 1 MB): figures to check that no input is much slower than linear.
const MB = 1_000_000;
const worst: Record<string, string> = {
  'integers, space-separated': Array.from({ length: MB / 6 }, (_, i) => String((i * 7919) % 100000)).join(' '),
  'TSV of ids, counts, amounts, dates': Array.from(
    { length: MB / 25 },
    (_, i) => `${i}\t${(i * 31) % 977}\t${(i * 1.37).toFixed(2)}\t2024-01-${String((i % 28) + 1).padStart(2, '0')}`,
  ).join('\n'),
  'floats, space-separated': Array.from({ length: MB / 10 }, (_, i) => (Math.sin(i) * 1000).toFixed(4)).join(' '),
  '"4111 " repeated': '4111 '.repeat(MB / 5),
  '"password:a " repeated': 'password:a '.repeat(MB / 11),
  '"[[a_a_a_a_a_a_a_a_a_" repeated': '[[a_a_a_a_a_a_a_a_a_'.repeat(MB / 20),
  'PEM headers without END': '-----BEGIN PRIVATE KEY-----\n'.repeat(MB / 28),
  'JWT headers joined by dots': 'eyJhbGciOiJIUzI1NiJ9.'.repeat(MB / 21),
  '"a@" repeated': 'a@'.repeat(MB / 2),
  'IBAN start and zero-width runs': `DE89${'\u200B'.repeat(100)}`.repeat(MB / 104),
};
console.log('worst cases (one call each, MB/s):');
for (const [name, t] of Object.entries(worst)) {
  const t0 = process.hrtime.bigint();
  const n = plain.find(t).length;
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  console.log(`  ${name.padEnd(36)} ${(t.length / 1e6 / s).toFixed(0).padStart(5)} MB/s  (${n} findings)`);
}

// ── Pathological inputs ───────────────────────────────────────────────────────────────────────────────
// test/privacy-corpus/pathological.ts: ~100 KB each, made to make a backtracking or re-reading scan
// quadratic. Best of 3 calls each (after one warm-up call), the slowest printed first; the bar is ≥ 5 MB/s.
const patho = compileDetector({ names: ['Jane Doe'] });
const pathoRates = Object.entries(PATHOLOGICAL).map(([name, t]) => {
  patho.find(t);
  let best = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 3; r++) {
    const t0 = process.hrtime.bigint();
    patho.find(t);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return [name, t.length / 1e6 / best] as const;
});
pathoRates.sort((a, b) => a[1] - b[1]);
console.log(`pathological inputs (${pathoRates.length}, ~100 KB each, MB/s, slowest first):`);
for (const [name, mbs] of pathoRates) console.log(`  ${name.padEnd(40)} ${mbs.toFixed(1).padStart(7)} MB/s`);
console.log(`  worst case: ${pathoRates[0]![0]} at ${pathoRates[0]![1].toFixed(1)} MB/s`);
