/**
 * Writes schema/lookfirst.schema.json from the built zod schema (dist/config/json-schema.js), for editors
 * (yaml-language-server). Run by `npm run build` after tsc; src/config/json-schema.test.ts fails when the
 * committed file differs from what this writes, so a schema change cannot ship without its JSON Schema.
 */
import { writeFileSync } from 'node:fs';
import { renderConfigJsonSchema } from '../dist/config/json-schema.js';

writeFileSync(new URL('../schema/lookfirst.schema.json', import.meta.url), renderConfigJsonSchema());
