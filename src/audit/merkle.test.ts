import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CompactTree, EMPTY_ROOT, leafHash, merkleRoot } from './merkle.js';

const kat = JSON.parse(readFileSync(new URL('../../test/vectors/rfc6962-known-answers.json', import.meta.url), 'utf8')) as {
  leafInputsHex: string[];
  rootsBySizeHex: Record<string, string>;
};

describe('RFC 6962 Merkle tree hash', () => {
  const leaves = kat.leafInputsHex.map((h) => Buffer.from(h, 'hex'));

  it('matches the published roots for every size from 0 to 8', () => {
    for (let size = 0; size <= 8; size++) {
      assert.equal(merkleRoot(leaves.slice(0, size)).toString('hex'), kat.rootsBySizeHex[String(size)], `size ${size}`);
    }
  });

  it('gives the same root incrementally as in one pass', () => {
    const tree = new CompactTree();
    assert.deepEqual(tree.root(), EMPTY_ROOT);
    leaves.forEach((leaf, i) => {
      tree.appendLeafHash(leafHash(leaf));
      assert.equal(tree.size, i + 1);
      assert.equal(tree.root().toString('hex'), kat.rootsBySizeHex[String(i + 1)]);
    });
  });

  it('changes the root when any leaf changes', () => {
    const base = merkleRoot(leaves);
    for (let i = 0; i < leaves.length; i++) {
      const changed = leaves.map((l, j) => (j === i ? Buffer.concat([l, Buffer.from([1])]) : l));
      assert.notDeepEqual(merkleRoot(changed), base, `leaf ${i}`);
    }
  });
});
