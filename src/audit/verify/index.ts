/**
 * `lookfirst/verify`: check an audit log without the gateway. Pure functions only.
 */

export { CompactTree, leafHash, merkleRoot, nodeHash } from '../merkle.js';
export { type NoteVerifier, openNote, parseCheckpoint, parseVerifierKey } from '../note.js';
export { type AppendCheck, type AppendProblem, type AppendState, checkBeforeAppend } from './append-check.js';
export { decodeBase64Canonical, decodeUtf8Strict } from './encoding.js';
export { type HeadInput, MAX_PROBLEMS, type Problem, type ProblemKind, type VerifyReport, verifyLog } from './verify.js';
