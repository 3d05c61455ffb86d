import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { relaxToolSchemas, unmaskedPaths, withholdBinary } from './mcp.js';

describe('privacy/mcp', () => {
  describe('withholdBinary', () => {
    it('replaces images, audio and blobs by a note, keeping URIs, and leaves text alone', () => {
      const result = {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'file:///a.pdf', mimeType: 'application/pdf', blob: 'AAAA' } },
        ],
      };
      const out = withholdBinary(result) as typeof result;
      assert.deepEqual(out.content[0], { type: 'text', text: 'hello' });
      assert.match(JSON.stringify(out.content[1]), /an image \(image\/png\) was withheld/);
      assert.match(JSON.stringify(out.content[2]), /an audio \(audio\/wav\) was withheld/);
      const res = (out.content[3] as unknown as { resource: { uri: string; text: string; blob?: string } }).resource;
      assert.equal(res.uri, 'file:///a.pdf');
      assert.equal(res.blob, undefined);
      assert.match(res.text, /binary content \(application\/pdf\) was withheld/);
      assert.equal(result.content[1]?.type, 'image', 'the input is not mutated');
    });

    it('returns the same instance when there is nothing to withhold, and never echoes an odd MIME type', () => {
      const plain = { content: [{ type: 'text', text: 'x' }] };
      assert.equal(withholdBinary(plain), plain);
      assert.doesNotMatch(JSON.stringify(withholdBinary({ type: 'image', data: 'A', mimeType: 'x"><script>' })), /script/);
    });
  });

  describe('unmaskedPaths', () => {
    it('keeps tool names in tools/list and protocol identifiers everywhere, nothing else', () => {
      const list = unmaskedPaths('tools/list');
      assert.equal(list(['tools', 0, 'name']), true);
      assert.equal(list(['tools', 0, 'description']), false);
      assert.equal(list(['tools', 0, 'inputSchema', 'properties', 'name']), false);
      const call = unmaskedPaths('tools/call');
      assert.equal(call(['tools', 0, 'name']), false);
      assert.equal(call(['nextCursor']), true);
      assert.equal(call(['progressToken']), true);
    });
  });

  describe('relaxToolSchemas', () => {
    it('drops string shape and length constraints from input and output schemas, not properties named so', () => {
      const list = {
        tools: [
          {
            name: 't',
            inputSchema: { type: 'object', properties: { pattern: { type: 'string', pattern: '^a' } } },
            outputSchema: { type: 'object', properties: { iban: { type: 'string', format: 'iban', minLength: 15, maxLength: 34 } } },
          },
          { name: 'plain', inputSchema: { type: 'object' } },
        ],
      };
      const out = relaxToolSchemas(list) as typeof list;
      assert.deepEqual(out.tools[0]?.inputSchema, { type: 'object', properties: { pattern: { type: 'string' } } });
      assert.deepEqual(out.tools[0]?.outputSchema, { type: 'object', properties: { iban: { type: 'string' } } });
      assert.equal(out.tools[1], list.tools[1]);
      const same = { tools: [{ name: 'x', inputSchema: { type: 'object' } }] };
      assert.equal(relaxToolSchemas(same), same);
    });
  });
});
