import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBlockYAML, UNSUPPORTED } from './yaml-block.js';
import { resolvePlain, yamlToJSON } from './yaml-read.js';
import { jsonToYAML } from './yaml-write.js';

// The block-style reader must agree with the full YAML parser wherever it does not give up.
function both(doc: string): { fast: unknown; full: unknown } {
  let full: unknown;
  try {
    full = yamlToJSON(doc, { fast: false });
  } catch (e) {
    full = `error: ${(e as Error).message}`;
  }
  return { fast: parseBlockYAML(doc, resolvePlain), full };
}

describe('fast block YAML reader', () => {
  const handled = [
    'a: |\n  line1\n\n  line2\n\nb: x\n',
    'a: |+\n  keep\n\n\nb: 1\n',
    'key: value # comment\n# full comment\nother: "quoted # not comment" # c\n',
    'multi: this is\n  a plain\n\n  scalar\nnext: 1\n',
    "s: 'it''s\n  folded'\n",
    'd: "a\\\n  b\n\n  c"\n',
    '- a\n- b: 1\n  c: 2\n- - nested\n  - n2\n',
    'a:\n  b:\n    c: d\n  e: f\ng: h\n',
    'a: b\n  c\n',
    'list:\n  -   spaced: 1\n      more: 2\n',
    'x: |2\n   indented\n  base\n',
    '"quoted key": 1\n\'single\': 2\n',
    'a:\n- x\nb: 2\n',
    'a: -1\nb: -x\nc: ":x"\nd: yes\ne: 0o17\nf: 1_000\ng: 2021-01-01\nh: 08\n',
    'empty:\nalso: ~\nlist: []\nmap: {}\n',
    '---\nschema: olm.package\nname: x # trailing\n',
  ];
  for (const doc of handled) {
    it(`reads ${JSON.stringify(doc).slice(0, 40)} as the full parser does`, () => {
      const { fast, full } = both(doc);
      assert.notEqual(fast, UNSUPPORTED);
      assert.deepEqual(fast, full);
    });
  }

  it('gives up on what it does not handle', () => {
    for (const doc of ['x: >\n  folded\n', 'x: &a 1\ny: *a\n', 'x: {a: 1}\n', 'a: 1\n b: 2\n', 'a: "x" y\n', 'a:\tb\n', '<<: {a: 1}\n']) {
      assert.equal(parseBlockYAML(doc, resolvePlain), UNSUPPORTED, doc);
    }
  });

  it('reads back whatever the YAML writer writes (random values, fixed seed)', () => {
    let seed = 7;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const pieces = [
      'a',
      ' ',
      '  ',
      ':',
      ': ',
      '#',
      ' #',
      '- ',
      "'",
      '"',
      '\\',
      '\n',
      '\n\n',
      'yes',
      'null',
      '1',
      '0.5',
      '1e3',
      '~',
      '{',
      '[',
      '|',
      '>',
      '&x',
      '*y',
      '!',
      '?',
      '%',
      '@',
      'é',
      '\u2028',
      '\u0085',
      '😀',
      '\x01',
      '\t',
      '2021-01-01',
      '---',
      '<<',
      'long text '.repeat(12),
    ];
    const str = (): string => {
      let s = '';
      for (let k = rnd(6); k > 0; k--) s += pieces[rnd(pieces.length)];
      return s;
    };
    const value = (d: number): unknown => {
      const t = rnd(d > 2 ? 3 : 5);
      if (t === 0 || t === 2) return str();
      if (t === 1) return rnd(3) === 0 ? rnd(1000) / 7 : rnd(2) === 0 ? null : rnd(2) === 0;
      if (t === 3) return Array.from({ length: rnd(4) }, () => value(d + 1));
      return Object.fromEntries(Array.from({ length: rnd(4) }, () => [str(), value(d + 1)]));
    };
    for (let i = 0; i < 400; i++) {
      const v = { schema: 'x', v: value(0), w: value(1) };
      const doc = jsonToYAML(v);
      const { fast, full } = both(doc);
      if (/[\u0085\u2028\u2029]/.test(doc)) {
        // YAML 1.1 line breaks: go-yaml folds them, the full parser (YAML 1.2) does not; left to it
        assert.equal(fast, UNSUPPORTED);
        continue;
      }
      assert.notEqual(fast, UNSUPPORTED, doc);
      assert.deepEqual(fast, full, doc);
      // (NEL is folded on the way out, as go-yaml reads it from the JSON)
      if (!JSON.stringify(v).includes('\u0085')) assert.deepEqual(fast, JSON.parse(JSON.stringify(v)), doc);
    }
  });
});
