/** The package version, read once from package.json (dist/ and src/ both sit two levels below it). */
import { readFileSync } from 'node:fs';

/** lookfirst's version string, e.g. `0.1.0`. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
