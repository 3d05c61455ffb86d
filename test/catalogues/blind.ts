/**
 * Prints a catalogue without its annotations, for labelling tools blind to them (LABELLING.md):
 * `node --import tsx test/catalogues/blind.ts test/catalogues/dev/SLUG.json`.
 */
import { readFileSync } from 'node:fs';

interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema?: { properties?: Record<string, { type?: unknown; description?: string; enum?: unknown[] }> };
  outputSchema?: { properties?: Record<string, unknown> };
}

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node --import tsx test/catalogues/blind.ts CATALOGUE.json\n');
  process.exit(2);
}
// Piped into `head`: stop quietly when the reader goes away.
process.stdout.on('error', (err: NodeJS.ErrnoException) => process.exit(err.code === 'EPIPE' ? 0 : 1));
const cat = JSON.parse(readFileSync(file, 'utf8')) as { slug: string; package?: string; tools: Tool[] };
console.log(`# ${cat.slug} (${cat.package ?? '?'}): ${cat.tools.length} tools\n`);
for (const t of cat.tools) {
  console.log(`## ${t.name}${t.title ? ` (title: ${t.title})` : ''}`);
  if (t.description) console.log(t.description.trim());
  for (const [k, p] of Object.entries(t.inputSchema?.properties ?? {})) {
    const e = p.enum ? ` enum ${JSON.stringify(p.enum).slice(0, 200)}` : '';
    console.log(`  - arg ${k}: ${JSON.stringify(p.type ?? '')}${e}${p.description ? ` — ${p.description.replace(/\s+/g, ' ').slice(0, 300)}` : ''}`);
  }
  const out = Object.keys(t.outputSchema?.properties ?? {});
  if (out.length) console.log(`  - returns: ${out.join(', ')}`);
  console.log();
}
