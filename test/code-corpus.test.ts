/**
 * The corpus of code in arguments (test/corpus, with its sources): every read passes and every write is
 * held, judged through the whole classifier as a read-named tool would see it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { classifyCall } from '../src/policy/classify.js';
import { toolCodeHints } from '../src/policy/code/index.js';
import { ROOT } from './helpers.js';

interface Case {
  text: string;
  expect: 'read' | 'write';
  source: string;
  field?: string;
}

const corpus = (name: string): Case[] => JSON.parse(readFileSync(join(ROOT, 'test/corpus', `${name}.json`), 'utf8')) as Case[];

/** The corpus file, the read-named tool it is sent to (as real servers describe theirs), and its field. */
const SUITES: [string, Record<string, unknown>, string][] = [
  ['sql', { name: 'read_query', description: 'Execute a SELECT query on the database' }, 'sql'],
  ['sql-postgres', { name: 'query', description: 'Run a read-only SQL query against PostgreSQL' }, 'sql'],
  ['graphql', { name: 'graphql_query', description: 'Run a GraphQL query against the API' }, 'query'],
  ['cypher', { name: 'read_neo4j_cypher', description: 'Execute a read Cypher query on the neo4j database' }, 'query'],
  ['shell', { name: 'get_output', description: 'Returns what a command prints' }, 'command'],
];

describe('the code corpus', () => {
  for (const [file, definition, field] of SUITES) {
    const cases = corpus(file);
    const hints = toolCodeHints(definition);
    const tool = definition.name as string;
    it(`${file}: ${cases.filter((c) => c.expect === 'read').length} reads pass and ${cases.filter((c) => c.expect === 'write').length} writes are held`, () => {
      const wrong: string[] = [];
      for (const c of cases) {
        const verdict = classifyCall(tool, { [c.field ?? field]: c.text }, { readOnlyHint: true }, new Set(), hints);
        const got = verdict.kind === 'read-only' ? 'read' : 'write';
        if (got !== c.expect) wrong.push(`${c.expect} judged ${got} (${c.source}): ${c.text}\n    ${verdict.reasons.join('; ')}`);
      }
      assert.deepEqual(wrong, []);
    });
  }

  it("the review's SQL in a plain `query` field of a read-named tool, with no hint, is held", () => {
    for (const q of [
      'TRUNCATE users',
      'DROP USER bob',
      'GRANT admin TO mallory',
      "COPY users TO '/tmp/x'",
      'ALTER ROLE app SUPERUSER',
      'SELECT "dblink_exec"(1)',
      'SELECT nextval/**/(1)',
    ])
      assert.equal(classifyCall('search_records', { query: q }, { readOnlyHint: true }).kind, 'mutation', q);
  });
});
