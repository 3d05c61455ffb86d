/**
 * Comments of a moved server entry, carried from the client's file into lookfirst.yaml: JSON with
 * comments (`// …`, `/* … *\/`) and TOML (`# …`) become plain lines a YAML comment can hold. Pure.
 */

/** Characters a YAML comment line cannot hold (they would end it or hide text), shown as `\uXXXX`. */
const NOT_IN_COMMENT = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * A comment as written in the client's file (`// …`, `/* … *\/`, `# …`) as the lines of text it holds:
 * markers and a block's leading `*` taken off, blank lines dropped, characters a YAML comment cannot hold
 * (line breaks, bidi controls) made visible, so a comment cannot forge a line of lookfirst.yaml.
 */
export function commentLines(raw: string): string[] {
  const text = raw.trim();
  const body = text.startsWith('/*') ? text.slice(2, text.endsWith('*/') ? -2 : undefined) : text.replace(/^(?:\/\/|#)/, '');
  return body
    .split(/\r\n|\r|\n|\u2028|\u2029/)
    .map((l) => l.replace(/^\s*\*(?!\/)/, '').trim())
    .filter((l) => l !== '')
    .map((l) => l.replace(NOT_IN_COMMENT, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}
