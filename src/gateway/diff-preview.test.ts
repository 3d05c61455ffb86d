import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyEdits } from './diff-preview.js';

/** The real server's edit function (server-filesystem's lib), applied to a real file. */
async function serverEdit(text: string, edits: { oldText: string; newText: string }[]): Promise<string | Error> {
  // A path held in a variable: the package ships no types, and the test needs only this one function.
  const module: string = '@modelcontextprotocol/server-filesystem/dist/lib.js';
  const lib = (await import(module)) as { applyFileEdits: (path: string, edits: unknown, dryRun: boolean) => Promise<string> };
  // One folder per call, removed at once: the property tests call this hundreds of times per run.
  const dir = mkdtempSync(join(tmpdir(), 'lf-edit-'));
  const file = join(dir, 'f.txt');
  writeFileSync(file, text);
  try {
    await lib.applyFileEdits(file, edits, false);
    return readFileSync(file, 'utf8');
  } catch (err) {
    return err as Error;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('edits previewed as server-filesystem applies them', () => {
  it('normalises CRLF first, so the edit lands where the server puts it, and says the endings change', async () => {
    const text = 'allow_root = no\r\nport = 22\n# example (ignored):\nallow_root = no\nport = 22\n';
    const edits = [{ oldText: 'allow_root = no\nport = 22', newText: 'allow_root = yes\nport = 22' }];
    const r = applyEdits(text, edits);
    assert.ok(r.ok);
    assert.equal(r.text, await serverEdit(text, edits));
    assert.match(r.notes[0] ?? '', /CRLF line endings/);
  });

  it('matches line by line with whitespace ignored when there is no exact match, as the server does', async () => {
    const text = 'def check(user):\n    if user.is_admin:\n        return True\n    return False\n';
    const edits = [
      { oldText: 'return False', newText: 'return True' },
      { oldText: 'if user.is_admin:\n  return True', newText: 'if True:\n  return True' },
    ];
    const r = applyEdits(text, edits);
    assert.ok(r.ok);
    assert.equal(r.text, await serverEdit(text, edits));
    assert.match(r.notes[0] ?? '', /edit 2 is not in the file exactly: the server applies it to line 2/);
  });

  it('gives the same text as the server, or fails where it fails, for any file and edits', async () => {
    const line = fc.stringMatching(/^[ \t]{0,3}[ab= ]{0,4}[ \t]{0,2}$/);
    const textArb = fc.array(line, { maxLength: 6 }).chain((lines) => fc.constantFrom('\n', '\r\n').map((eol) => lines.join(eol)));
    const editArb = fc.record({
      oldText: fc.array(line, { minLength: 1, maxLength: 3 }).map((l) => l.join('\n')),
      newText: fc.array(line, { maxLength: 3 }).map((l) => l.join('\n')),
    });
    await fc.assert(
      fc.asyncProperty(textArb, fc.array(editArb, { minLength: 1, maxLength: 3 }), async (text, edits) => {
        const ours = applyEdits(text, edits);
        const theirs = await serverEdit(text, edits);
        if (theirs instanceof Error) assert.equal(ours.ok, false, `server failed (${theirs.message}), preview did not`);
        else {
          assert.ok(ours.ok, `preview failed where the server edited: ${JSON.stringify(theirs)}`);
          assert.equal(ours.text, theirs);
        }
      }),
      { numRuns: 300 },
    );
  });
});
