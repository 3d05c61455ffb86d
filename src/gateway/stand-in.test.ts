import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { placeholderFor } from './stand-in.js';

describe('stand-in structured content for a dry-run answer', () => {
  it('fills the required fields the schema asks for, strings with the notice', () => {
    // server-filesystem's write_file declares { content: string }.
    const schema = { type: 'object', properties: { content: { type: 'string' } }, required: ['content'] };
    assert.deepEqual(placeholderFor(schema, 'DRY RUN'), { content: 'DRY RUN' });
  });

  it('uses minimums and empty arrays, leaves optional fields out, and never uses a default', () => {
    const schema = {
      type: 'object',
      properties: {
        count: { type: 'integer', minimum: 1 },
        ok: { type: 'boolean', default: true },
        items: { type: 'array', items: { type: 'string' } },
        nested: { type: 'object', properties: { id: { type: 'string', default: 'Deleted 4 files' } }, required: ['id'] },
        optional: { type: 'string' },
      },
      required: ['count', 'ok', 'items', 'nested'],
      additionalProperties: false,
    };
    assert.deepEqual(placeholderFor(schema, 'n'), { count: 1, ok: false, items: [], nested: { id: 'n' } });
  });

  it('gives none where the schema would make it claim something (const, enum)', () => {
    const obj = (p: Record<string, unknown>) => ({ type: 'object', properties: { x: p }, required: ['x'] });
    assert.equal(placeholderFor(obj({ const: true }), 'n'), undefined);
    assert.equal(placeholderFor(obj({ type: 'string', enum: ['completed', 'failed'] }), 'n'), undefined);
  });

  it('gives none for a schema with a regular expression, whose check an upstream could make take hours', () => {
    const obj = (p: Record<string, unknown>) => ({ type: 'object', properties: { msg: p }, required: ['msg'] });
    assert.equal(placeholderFor(obj({ type: 'string', pattern: '^(.+)+!$' }), 'n'), undefined);
    assert.equal(placeholderFor(obj({ type: 'string', format: 'email' }), 'n'), undefined);
    assert.equal(placeholderFor({ type: 'object', patternProperties: { '^(a+)+$': { type: 'string' } } }, 'n'), undefined);
  });

  it('gives none when the smallest value does not pass the schema', () => {
    assert.equal(placeholderFor({ type: 'object', properties: { id: { type: 'string', pattern: '^[0-9]+$' } }, required: ['id'] }, 'DRY RUN'), undefined);
    assert.equal(placeholderFor({ type: 'object', properties: { xs: { type: 'array', minItems: 1 } }, required: ['xs'] }, 'x'), undefined);
    assert.equal(placeholderFor({ type: 'string' }, 'x'), undefined);
    // A schema that does not compile gets none either.
    assert.equal(placeholderFor({ type: 'object', required: 'not-a-list', properties: 3 }, 'x'), undefined);
  });

  it('gives none, quickly, for a schema built to make it work hard (a property required many times over, nested)', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 8; i++) schema = { type: 'object', properties: { a: schema }, required: Array(40).fill('a') };
    // Duplicates count once: the honest reading of this schema is one nested object, 8 deep.
    assert.deepEqual(JSON.stringify(placeholderFor(schema, 'x')), `${'{"a":'.repeat(8)}"x"${'}'.repeat(8)}`);
    let wide: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 2; i++) {
      const props = Object.fromEntries(Array.from({ length: 40 }, (_, k) => [`p${k}`, wide]));
      wide = { type: 'object', properties: props, required: Object.keys(props) };
    }
    // 1,641 values from a 40 KB schema: over the budget of 1,000.
    assert.equal(placeholderFor(wide, 'x'), undefined);
  });
});
