/**
 * The privacy filter's known-answer corpus (test/privacy-corpus/*.json): every positive is found with its
 * exact span and label and nothing else; no negative yields a finding. The detector is compiled with
 * test/privacy-corpus/config.json (names and patterns) and the default phone regions. The corpus lists its
 * sources in each file's `about`; its tokens are fake (they carry FAKE or a random body) but shape-valid.
 * bench/privacy.ts reads the same files for per-detector precision and recall.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { compileDetector, type DetectOptions } from '../src/privacy/detect.js';
import { ROOT } from './helpers.js';
import { PATHOLOGICAL } from './privacy-corpus/pathological.js';

interface CorpusFile {
  about: string;
  positives: { text: string; expect: { value: string; label: string }[] }[];
  negatives: string[];
}

const DIR = join(ROOT, 'test/privacy-corpus');
const config = JSON.parse(readFileSync(join(DIR, 'config.json'), 'utf8')) as DetectOptions;
const detector = compileDetector(config);
const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.json') && f !== 'config.json')
  .map((f) => [f.replace(/\.json$/, ''), JSON.parse(readFileSync(join(DIR, f), 'utf8')) as CorpusFile] as const);

/** The expected findings of a positive, located by the first occurrence of each value. */
function expected(p: CorpusFile['positives'][number]) {
  return p.expect
    .map((e) => ({ start: p.text.indexOf(e.value), end: p.text.indexOf(e.value) + e.value.length, label: e.label }))
    .sort((a, b) => a.start - b.start);
}

describe('the privacy corpus', () => {
  it('holds at least 150 examples', () => {
    assert.ok(files.reduce((n, [, f]) => n + f.positives.length + f.negatives.length, 0) >= 150);
  });
  for (const [name, file] of files) {
    describe(`${name}: ${file.about}`, () => {
      it('finds every positive with its exact span and label, and nothing else', () => {
        const wrong: string[] = [];
        for (const p of file.positives) {
          const found = detector.find(p.text).map(({ start, end, label }) => ({ start, end, label }));
          const show = (fs: { start: number; end: number; label: string }[]) =>
            fs.map((f) => `${f.label} ${JSON.stringify(p.text.slice(f.start, f.end))}`).join(', ');
          if (JSON.stringify(found) !== JSON.stringify(expected(p)))
            wrong.push(`${JSON.stringify(p.text)}: found [${show(found)}], expected [${show(expected(p))}]`);
        }
        assert.deepEqual(wrong, []);
      });
      it('finds nothing in any negative', () => {
        const wrong = file.negatives.flatMap((n) => detector.find(n).map((f) => `${JSON.stringify(n)}: ${f.label} ${JSON.stringify(n.slice(f.start, f.end))}`));
        assert.deepEqual(wrong, []);
      });
    });
  }
});

// Speed on these is measured in bench/privacy.ts (no timing thresholds in tests); here, what is found.
describe('pathological inputs (about 100 KB each)', () => {
  const detector = compileDetector({ names: ['Jane Doe'] });
  for (const [name, text] of Object.entries(PATHOLOGICAL)) {
    it(`${name}: findings sorted, disjoint, inside the text, never inside a placeholder`, () => {
      const found = detector.find(text);
      let at = 0;
      for (const f of found) {
        assert.ok(f.start >= at && f.end > f.start && f.end <= text.length, `${f.start}-${f.end}`);
        at = f.end;
      }
    });
  }
  it('finds the value behind the last key of the attack, and nothing in runs of separators or digits', () => {
    const attack = PATHOLOGICAL['pwd: keys then spaces (the attack)']!;
    const found = detector.find(attack);
    assert.ok(found.length > 0);
    for (const name of [
      'spaces then a digit',
      'colons',
      'equals',
      'digits and spaces',
      'digits and dots',
      '"4111 " repeated',
      '[[ repeated',
      'zero-width spaces',
      'backslashes',
    ])
      assert.deepEqual(detector.find(PATHOLOGICAL[name]!), [], name);
    assert.equal(detector.find(PATHOLOGICAL['a name repeated']!).length, 0);
    assert.ok(detector.find(PATHOLOGICAL['password= keys']!).length > 0);
  });
});
