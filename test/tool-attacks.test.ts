/**
 * Tool definitions and calls that write, built by an attacker to be judged read-only (test/corpus/
 * tool-attacks.json, from the attack on the classifier of issue 13): every one must stay a mutation,
 * with its annotations (a lying `readOnlyHint: true` among them) applied as the gate applies them, and
 * its arguments, when the case has them, judged as a call.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { classifyCall, combine, judgeTool, namespacePrefixes, type ToolDefinitionLike } from '../src/policy/classify.js';
import type { ToolAnnotations } from '../src/types.js';
import { ROOT } from './helpers.js';

interface Case extends ToolDefinitionLike {
  class: string;
  siblings?: string[];
  args?: unknown;
  annotations?: ToolAnnotations;
}

const cases = JSON.parse(readFileSync(join(ROOT, 'test/corpus/tool-attacks.json'), 'utf8')) as Case[];
const classes = [...new Set(cases.map((c) => c.class))];

describe('tool definitions built to pass as reads', () => {
  for (const cls of classes)
    it(`holds every case of: ${cls}`, () => {
      for (const c of cases.filter((x) => x.class === cls)) {
        const prefixes = c.siblings ? namespacePrefixes([c.name, ...c.siblings]) : new Set<string>();
        const verdict =
          c.args !== undefined
            ? classifyCall(c.name, c.args, c.annotations, prefixes, undefined, c)
            : combine(judgeTool(c, prefixes), undefined, c.annotations);
        assert.equal(verdict.kind, 'mutation', `${c.name}: ${c.description ?? ''} ${JSON.stringify(c.args ?? '')} → ${verdict.reasons.join('; ')}`);
      }
    });
});
