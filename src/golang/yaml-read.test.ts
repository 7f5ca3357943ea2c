import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { goMarshal } from './json.js';
import { formatFloat32, goQuote } from './strconv.js';
import { plainTag, readGoYAML, resolvePlain, toJSONValue, yamlToJSON as readYAMLToJSON, type JSONTarget } from './yaml-read.js';

// Where the readers this module replaces (bundle/goyaml.ts, template/godecode.ts, declcfg/load.ts)
// disagreed with each other or with Go. Every expectation was printed by go.yaml.in/yaml/v2 v2.4.4 and
// sigs.k8s.io/yaml v1.6.0 (YAMLToJSON, and Unmarshal/UnmarshalStrict into a struct with an `image`
// string field) built with Go 1.19.
const yamlToJSON = (doc: string): string => goMarshal(toJSONValue(readGoYAML(doc), { int: (v) => v }));
const IMAGE: JSONTarget = {
  kind: 'struct',
  fields: [
    { name: 'image', type: { kind: 'string' } },
    { name: 'flag', type: { kind: 'bool' } },
  ],
};
const image = (doc: string): unknown => (toJSONValue(readGoYAML(doc), { target: IMAGE }) as { image?: unknown }).image;

describe('golang/yaml-read: go-yaml v2 and sigs.k8s.io/yaml as Go runs them', () => {
  it('resolves scalars as resolve.go does', () => {
    assert.equal(yamlToJSON('a: 1e400\n'), '{"a":"1e400"}'); // ParseFloat's range error: a string, not +Inf
    assert.equal(yamlToJSON('a: .5_0\n'), '{"a":0.5}'); // ParseFloat takes underscores between digits
    assert.equal(yamlToJSON('a: 1_0e1_0\n'), '{"a":100000000000}');
    assert.equal(yamlToJSON('a: +0x8000000000000000\n'), '{"a":"+0x8000000000000000"}'); // ParseUint takes no sign
    assert.equal(yamlToJSON('a: 0x8000000000000000\n'), '{"a":9223372036854775808}');
    assert.equal(yamlToJSON('a: 0b-101\n'), '{"a":-5}'); // the "0b" fallback parses what follows the prefix, sign included
    assert.equal(yamlToJSON('a: -0.0\n'), '{"a":-0}');
    assert.equal(yamlToJSON('a: 2001-02-30\n'), '{"a":"2001-02-30"}');
    assert.equal(plainTag('2001-02-03'), 'timestamp');
    assert.equal(plainTag('2001-02-30'), 'str');
    assert.equal(resolvePlain('18446744073709551615'), 18446744073709551615n);
  });

  it('honours tags as decoder.scalar does', () => {
    assert.equal(
      yamlToJSON('a: !foo 1\nb: ! 1\nc: !!int "2"\nd: !!float 1\ne: !!binary aGVsbG8=\nf: !!timestamp 2001-01-01\ng: !!str\n'),
      '{"a":"1","b":"1","c":2,"d":1,"e":"hello","f":"2001-01-01","g":""}',
    );
    assert.throws(() => readGoYAML('a: !!int 1.5\n'), { message: 'yaml: cannot decode !!float `1.5` as a !!int' });
    assert.throws(() => readGoYAML('a: !!bool 1\n'), { message: 'yaml: cannot decode !!int `1` as a !!bool' });
    assert.throws(() => readGoYAML('a: !!float 1e400\n'), { message: 'yaml: cannot decode !!str `1e400` as a !!float' });
    assert.throws(() => readGoYAML('a: !!timestamp x\n'), { message: 'yaml: cannot decode !!str `x` as a !!timestamp' });
  });

  it('applies merge keys in order, overwriting keys already set (earlier maps of a list win)', () => {
    assert.equal(yamlToJSON('a: 1\n<<: {a: 2}\n'), '{"a":2}');
    assert.equal(yamlToJSON('<<: {a: 2}\na: 1\n'), '{"a":1}');
    assert.equal(yamlToJSON('<<: [{a: 1}, {a: 2, b: 3}]\n'), '{"a":1,"b":3}');
    assert.equal(yamlToJSON('"<<": {a: 1}\n'), '{"\\u003c\\u003c":{"a":1}}');
    assert.equal(yamlToJSON('!!merge <<: {a: 1}\n'), '{"a":1}');
    assert.throws(() => readGoYAML('<<: [1]\n'), { message: 'yaml: map merge requires map or sequence of maps as the value' });
  });

  it('strict mode reports keys set twice, merged ones too, by the line of the value', () => {
    const strict = (doc: string): unknown => readGoYAML(doc, { strict: true });
    assert.throws(() => strict('a: 1\n<<: {a: 2}\n'), { message: 'yaml: unmarshal errors:\n  line 2: key "a" already set in map' });
    assert.throws(() => strict('b: &b {image: x}\n<<: *b\nimage: y\n'), { message: 'yaml: unmarshal errors:\n  line 3: key "image" already set in map' });
    assert.throws(() => strict('<<: [{a: 1}, {a: 2, b: 3}]\n'), { message: 'yaml: unmarshal errors:\n  line 1: key "a" already set in map' });
    assert.throws(() => strict('a: 1\n<<:\n  x: 0\n  a: 2\n'), { message: 'yaml: unmarshal errors:\n  line 4: key "a" already set in map' });
    assert.throws(() => strict('<<: [{a: 1}, &m {b: 2, <<: {c: 3}}]\n<<: *m\n'), {
      message: 'yaml: unmarshal errors:\n  line 1: key "b" already set in map\n  line 1: key "c" already set in map',
    });
    assert.equal(yamlToJSON('<<: [{a: 1}, &m {b: 2, <<: {c: 3}}]\n<<: *m\n'), '{"a":1,"b":2,"c":3}');
    assert.equal(yamlToJSON('b: &b\n  x: 0\n  image: x\nc:\n  <<: *b\n  image: y\n'), '{"b":{"image":"x","x":0},"c":{"image":true,"x":0}}');
    assert.doesNotThrow(() => strict('1: a\n1.0: b\n')); // an int and a float are different keys
    assert.equal(yamlToJSON('1: a\n1.0: b\n'), '{"1":"b"}');
  });

  it('turns keys into strings as convertToJSONableObject does', () => {
    assert.equal(yamlToJSON('1e6: x\n3.14159265358979: y\n9007199254740993: z\n'), '{"1e+06":"x","3.1415927":true,"9007199254740993":"z"}');
    assert.throws(() => toJSONValue(readGoYAML('~: c\n')), { message: 'unsupported map key of type: %!s(<nil>), key: <nil>, value: "c"' });
    assert.throws(() => toJSONValue(readGoYAML('18446744073709551615: x\n')), {
      message: 'unsupported map key of type: uint64, key: 0xffffffffffffffff, value: "x"',
    });
    assert.throws(() => readGoYAML('? [a]\n: x\n'), { message: 'yaml: invalid map key: []interface {}{"a"}' });
  });

  it('gives a string field the scalar as Go formats it (ints exactly, floats as float32 %g)', () => {
    assert.equal(image('image: 1e8\n'), '1e+08');
    assert.equal(image('image: 1.0e6\n'), '1e+06');
    assert.equal(image('image: 16777217.0\n'), '1.6777216e+07');
    assert.equal(image('image: 1.0\n'), '1');
    assert.equal(image('image: 12345678901234567890\n'), '12345678901234567890');
    assert.equal(image('image: 1e400\n'), '1e400');
    assert.equal(image('image: -0b11\n'), '-3');
    assert.equal(formatFloat32(16777217), '1.6777216e+07');
  });

  it('quotes as strconv.Quote: what IsPrint rejects is escaped', () => {
    assert.deepEqual(['\u00a0', '\u200b', '\u00ad', '\ufffd', '\u3000', '\u{e0001}', '\u0378', 'é😀'].map(goQuote), [
      '"\\u00a0"',
      '"\\u200b"',
      '"\\u00ad"',
      '"\ufffd"',
      '"\\u3000"',
      '"\\U000e0001"',
      '"\\u0378"',
      '"é😀"',
    ]);
  });
});

describe('golang/yaml-read: randomly made documents, as Go read them', () => {
  // testdata/go-yaml-random.json: numbers, booleans, timestamps, tags, flow collections and merges
  // in every combination a fixed-seed generator made, with Go's YAMLToJSON output or error.
  const { cases } = JSON.parse(readFileSync(new URL('./testdata/go-yaml-random.json', import.meta.url), 'utf8')) as {
    cases: { doc: string; json?: string; error?: string }[];
  };
  it(`${cases.length} documents: the same JSON text or the same error, by either reader`, () => {
    for (const c of cases) {
      for (const fast of [true, false]) {
        let got: string;
        try {
          got = goMarshal(readYAMLToJSON(c.doc, { fast, int: (v) => v }));
        } catch (e) {
          got = `error: ${(e as Error).message}`;
        }
        assert.equal(got, c.json ?? `error: ${c.error}`, `${JSON.stringify(c.doc)} (fast: ${fast})`);
      }
    }
  });
});

describe('golang/yaml-read: nesting too deep is refused before parsing', () => {
  // The yaml library recurses once per level; that deep, V8 could fail fatally (not a RangeError)
  // compiling a regular expression. A server took this body and crashed (test/e2e/bad-input.test.ts).
  it("refuses deep flow collections and '- - -' chains with go-yaml's message, and counts no quoted brackets", () => {
    for (const text of [
      '['.repeat(100_000),
      `a: ${'['.repeat(50_000)}${']'.repeat(50_000)}`,
      `${'{a: '.repeat(20_000)}1${'}'.repeat(20_000)}`,
      `${'- '.repeat(60_000)}x`,
    ])
      assert.throws(() => readGoYAML(text), { message: 'yaml: exceeded max depth of 10000' });
    assert.deepEqual(toJSONValue(readGoYAML(`a: "${'['.repeat(20_000)}"`)), { a: '['.repeat(20_000) });
  });
});
