/**
 * `lookfirst/verify`: check an audit log without the gateway. Pure functions only.
 */

export { CompactTree, leafHash, merkleRoot, nodeHash } from '../merkle.js';
export { type NoteVerifier, openNote, parseCheckpoint, parseVerifierKey } from '../note.js';
export { type HeadInput, type Problem, type ProblemKind, type VerifyReport, verifyLog } from './verify.js';
