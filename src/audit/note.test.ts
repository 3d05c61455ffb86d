import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import {
  formatCheckpoint,
  formatVerifierKey,
  keyIdOf,
  openNote,
  parseCheckpoint,
  parseSignerKey,
  parseVerifierKey,
  rawPublicKey,
  signatureLine,
  signNote,
} from './note.js';

const v = JSON.parse(readFileSync(new URL('../../test/vectors/signed-note-vectors.json', import.meta.url), 'utf8'));

describe('C2SP signed note', () => {
  it('reproduces the Go sumdb/note signature line byte for byte', () => {
    const signer = parseSignerKey(v.goSumdbNote.signerKey);
    assert.equal(signatureLine(v.goSumdbNote.text, signer), v.goSumdbNote.signatureLine);
  });

  it('derives the published verifier key from the signer key', () => {
    const signer = parseSignerKey(v.goSumdbNote.signerKey);
    assert.equal(formatVerifierKey(signer.name, signer.key), v.goSumdbNote.verifierKey);
  });

  it('opens the C2SP spec example with its verifier key', () => {
    const verifier = parseVerifierKey(v.c2spSignedNote.verifierKey);
    assert.equal(keyIdOf(verifier.name, rawPublicKey(verifier.key)).toString('hex'), '530d903a');
    const note = `${v.c2spSignedNote.text}\n${v.c2spSignedNote.signatureLine}\n`;
    assert.deepEqual(openNote(note, verifier), { ok: true, text: v.c2spSignedNote.text });
  });

  describe('when the note is altered', () => {
    const verifier = parseVerifierKey(v.goSumdbNote.verifierKey);
    const note = `${v.goSumdbNote.text}\n${v.goSumdbNote.signatureLine}\n`;
    it('accepts the original', () => assert.equal(openNote(note, verifier).ok, true));
    it('rejects a changed text', () => assert.equal(openNote(note.replace('answer', 'Answer'), verifier).ok, false));
    it('rejects a note signed by another key of the same name', () => {
      const { privateKey } = generateKeyPairSync('ed25519');
      const forged = signNote(v.goSumdbNote.text, { name: verifier.name, keyId: verifier.keyId, key: privateKey });
      const r = openNote(forged, verifier);
      assert.equal(r.ok, false);
    });
    it('rejects a verifier key whose id does not match', () => {
      assert.throws(() => parseVerifierKey(v.goSumdbNote.verifierKey.replace('c74f20a3', 'c74f20a4')), /key id/);
    });
  });
});

describe('tlog checkpoint', () => {
  it('round-trips with extension lines', () => {
    const cp = { origin: 'lookfirst/abc', size: 8, root: Buffer.alloc(32, 7), extensions: ['lookfirst-chain 00ff'] };
    assert.deepEqual(parseCheckpoint(formatCheckpoint(cp)), cp);
  });
  it('parses the C2SP cosignature example checkpoint body', () => {
    const cp = parseCheckpoint(v.c2spCosignatureV1Example.checkpointText);
    assert.equal(cp?.origin, 'example.com/behind-the-sofa');
    assert.equal(cp?.size, 20852163);
  });
  it('rejects a size with a leading zero and a short root', () => {
    assert.equal(parseCheckpoint(`o\n08\n${Buffer.alloc(32).toString('base64')}\n`), undefined);
    assert.equal(parseCheckpoint(`o\n8\n${Buffer.alloc(31).toString('base64')}\n`), undefined);
  });
});
