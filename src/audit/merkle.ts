/**
 * RFC 6962 Merkle tree hashing (section 2.1): leaf = SHA-256(0x00 || data), node = SHA-256(0x01 || l || r),
 * empty tree = SHA-256(""). `CompactTree` keeps only the O(log n) roots of the perfect subtrees so the log
 * writer can append and refresh its checkpoint without holding every leaf.
 * @see https://www.rfc-editor.org/rfc/rfc6962#section-2.1
 */
import { createHash } from 'node:crypto';

const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/** RFC 6962 leaf hash of one entry's bytes (32 bytes). */
export function leafHash(data: Uint8Array): Buffer {
  return createHash('sha256').update(LEAF).update(data).digest();
}

/** RFC 6962 interior node hash (32 bytes). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  return createHash('sha256').update(NODE).update(left).update(right).digest();
}

/** Root of the empty tree: SHA-256 of the empty string. */
export const EMPTY_ROOT = createHash('sha256').digest();

/**
 * Incremental RFC 6962 tree: append leaf hashes, read the root at any size. Memory O(log n).
 */
export class CompactTree {
  /** Roots of the perfect subtrees, left to right, with their sizes (strictly decreasing powers of two). */
  private readonly stack: { size: number; hash: Buffer }[] = [];
  private count = 0;

  /** Number of leaves appended. */
  get size(): number {
    return this.count;
  }

  /** Appends one leaf hash (as produced by `leafHash`). */
  appendLeafHash(hash: Buffer): void {
    let item = { size: 1, hash };
    for (let top = this.stack.at(-1); top && top.size === item.size; top = this.stack.at(-1)) {
      this.stack.pop();
      item = { size: top.size * 2, hash: nodeHash(top.hash, item.hash) };
    }
    this.stack.push(item);
    this.count++;
  }

  /** The tree head (MTH) over all leaves appended so far (32 bytes). */
  root(): Buffer {
    const last = this.stack.at(-1);
    if (!last) return EMPTY_ROOT;
    let hash = last.hash;
    for (let i = this.stack.length - 2; i >= 0; i--) hash = nodeHash(this.stack[i]!.hash, hash);
    return hash;
  }
}

/** MTH of a list of entries (convenience over CompactTree). */
export function merkleRoot(entries: Iterable<Uint8Array>): Buffer {
  const tree = new CompactTree();
  for (const e of entries) tree.appendLeafHash(leafHash(e));
  return tree.root();
}
