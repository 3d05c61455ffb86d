/** The consent word lists by language tag; a new language is a file here and a line below. */
import { en } from './en.js';
import { hi } from './hi.js';
import type { ConsentWords } from './types.js';

export type { ConsentWords, WordMeaning } from './types.js';

/** Every language the consent parser understands, by BCP 47 primary tag. */
export const CONSENT_LANGUAGES: Readonly<Record<string, ConsentWords>> = { en, hi };
