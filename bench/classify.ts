/**
 * `npm run bench` (part): what judging tool definitions costs when an upstream lists its tools, against
 * what the gate already does to every definition on that path: hashing its pinned part (gateway/pins.ts).
 *
 * Every tool of every captured catalogue (test/catalogues/*) is judged as the catalogue does it on a
 * listing (namespace prefixes, then `judgeTool` per definition), and hashed, in interleaved rounds.
 * Prints the median time per listing of the whole set and per tool (µs), and the ratio judge/hash. A
 * call never judges a definition again: its verdict is kept with the tool until the next listing.
 * Nothing here asserts: figures are for people.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { definitionSha } from '../src/gateway/pins.js';
import { judgeTool, namespacePrefixes, type ToolDefinitionLike } from '../src/policy/classify.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

const catalogues: ToolDefinitionLike[][] = [];
for (const set of readdirSync(join(ROOT, 'test/catalogues'), { withFileTypes: true }).filter((d) => d.isDirectory())) {
  const dir = join(ROOT, 'test/catalogues', set.name);
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json')))
    catalogues.push((JSON.parse(readFileSync(join(dir, f), 'utf8')) as { tools: ToolDefinitionLike[] }).tools);
}
const tools = catalogues.reduce((n, c) => n + c.length, 0);

const judge = () => {
  for (const c of catalogues) {
    const prefixes = namespacePrefixes(c.map((t) => t.name));
    for (const t of c) judgeTool(t, prefixes);
  }
};
const hash = () => {
  for (const c of catalogues) for (const t of c) definitionSha(t as unknown as Record<string, unknown>);
};
const time = (f: () => void) => {
  const t0 = process.hrtime.bigint();
  f();
  return Number(process.hrtime.bigint() - t0) / 1000;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

judge();
hash();
const judged: number[] = [];
const hashed: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2) {
    hashed.push(time(hash));
    judged.push(time(judge));
  } else {
    judged.push(time(judge));
    hashed.push(time(hash));
  }
}
const j = median(judged);
const h = median(hashed);
console.log(`classifying tool definitions: ${catalogues.length} catalogues, ${tools} tools`);
console.log(
  `judge ${Math.round(j)} µs a listing of all (${(j / tools).toFixed(1)} µs a tool) · hash ${Math.round(h)} µs (${(h / tools).toFixed(1)} µs a tool) · judge/hash ${(j / h).toFixed(2)}x`,
);
