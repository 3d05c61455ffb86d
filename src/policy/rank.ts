/** The order of risks, for "the strictest wins" everywhere in the classifier. Pure. */
import type { Risk } from '../types.js';

/** low < medium < high. */
export const RANK: Record<Risk, number> = { low: 0, medium: 1, high: 2 };

/** The higher of two risks. */
export const higher = (a: Risk, b: Risk): Risk => (RANK[a] >= RANK[b] ? a : b);
