import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { goPathMatch, IgnoreMatcher, parsePattern } from './indexignore.js';

describe('.indexignore patterns (go-git gitignore, as joelanford/ignore reads them)', () => {
  it('parses negation, directory-only and anchored patterns', () => {
    assert.deepEqual(parsePattern('!*.yaml', []), { domain: [], pattern: ['*.yaml'], inclusion: true, dirOnly: false, isGlob: false, source: '!*.yaml' });
    assert.deepEqual(parsePattern('sub/', ['a']).dirOnly, true);
    assert.deepEqual(parsePattern('/sub', []).pattern, ['', 'sub']);
  });
  it('filepath.Match: classes, escapes, malformed patterns', () => {
    assert.equal(goPathMatch('[a-c]*', 'b.json'), true);
    assert.equal(goPathMatch('[^a].json', 'a.json'), false);
    assert.equal(goPathMatch('\\*.yaml', '*.yaml'), true);
    assert.equal(goPathMatch('[', 'x'), undefined);
  });
  it('a simple name matches any component; the last matching pattern decides', () => {
    const m = new IgnoreMatcher();
    m.addFile('.indexignore', '*\n!*.yaml\nveneer.yaml\n');
    assert.equal(m.match('op/catalog.yaml'), false);
    assert.equal(m.match('op/veneer.yaml'), true);
    assert.equal(m.match('op/README.md'), true);
  });

  // Random pattern sets and paths, and go-git's answers for them (recorded from the reference).
  const cases = JSON.parse(readFileSync(join(fileURLToPath(import.meta.url), '..', 'testdata', 'go-indexignore-cases.json'), 'utf8')) as {
    files: Record<string, string>;
    order: string[];
    paths: string[];
    ignored: boolean[];
  }[];
  it(`${cases.length} recorded pattern sets give go-git's answers`, () => {
    for (const c of cases) {
      const m = new IgnoreMatcher();
      for (const p of c.order) m.addFile(p, c.files[p]!);
      c.paths.forEach((p, i) => assert.equal(m.match(p), c.ignored[i], `${JSON.stringify(c.files)} ${p}`));
    }
  });
});
