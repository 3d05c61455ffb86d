/**
 * Canonical encodings of the log's signatures and hashes. Decoders such as `Buffer.from(s, 'base64')`
 * forgive a great deal (missing or extra padding, set unused low bits, URL-safe letters, spaces), so a
 * line whose signature text was changed in such a way still verifies: its bytes differ from what the gate
 * wrote, and nothing names it. Here every encoding is decoded, encoded again, and accepted only when the
 * text comes back unchanged. Pure: no I/O.
 * @see https://www.rfc-editor.org/rfc/rfc4648#section-4 (base64, padded; section 3.5 on canonical encoding)
 */

/**
 * Decodes base64 only when the text is the one canonical encoding of its bytes (RFC 4648 section 4 alphabet,
 * padded, unused bits zero).
 * @returns the bytes, or `undefined` for any other text.
 */
export function decodeBase64Canonical(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes UTF-8 strictly.
 * @returns the text, or `undefined` when the bytes are not valid UTF-8 (a lenient decoder would replace
 *   them with U+FFFD, and two different lines would read the same).
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * Text from the evidence (a signer's name, a malformed line) made safe to print: anything but printable
 * ASCII becomes a visible `\u{…}` code, so a crafted head cannot move the cursor, recolour or hide text
 * in a terminal, and it is cut to `maxChars`.
 */
export function printable(text: string, maxChars = 80): string {
  const shown = text.replace(/[^\x21-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return shown.length > maxChars ? `${shown.slice(0, maxChars)}…` : shown;
}
