/**
 * `lookfirst/verify`: check an audit log without the gateway. Pure functions only.
 */
export { verifyLog, type HeadInput, type Problem, type ProblemKind, type VerifyReport } from './verify.js';
export { parseVerifierKey, openNote, parseCheckpoint, type NoteVerifier } from '../note.js';
export { merkleRoot, leafHash, nodeHash, CompactTree } from '../merkle.js';
