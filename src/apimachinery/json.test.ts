import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { StatusError, isStatusError } from './errors.js';
import { copyNumberTexts, describeJsonSyntaxError, hasNumberTexts, numberTextAt, numberTextsIn, parseJson } from './json.js';
import { stringifyJSON } from '../golang/json-int64.js';

const messageOf = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    assert.ok(isStatusError(e), `expected StatusError, got ${String(e)}`);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    return e.status.message!;
  }
  assert.fail('expected an error');
};

test('parses valid JSON from strings and bytes', () => {
  assert.deepEqual(parseJson('{"a":[1,{"b":null}]}'), { value: { a: [1, { b: null }] }, duplicateFields: [] });
  assert.deepEqual(parseJson(new TextEncoder().encode('{"x":"é"}')).value, { x: 'é' });
});

test('duplicate keys are reported with their full path; the last value wins', () => {
  const r = parseJson('{"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"n":1},{"n":2,"n":3}]},"spec":{}}');
  assert.deepEqual(r.duplicateFields, ['metadata.name', 'spec.containers[1].n', 'spec']);
  assert.deepEqual((r.value as { metadata: unknown }).metadata, { name: 'b' });
  // Escaped keys are compared decoded; strings containing brackets and escaped quotes are skipped correctly.
  assert.deepEqual(parseJson('{"a\\u0062":1,"ab":2,"s":"x\\"{[,","t":"\\\\"}').duplicateFields, ['ab']);
});

test('duplicates are found whatever the keys and strings hold (the key-count shortcut falls back to the scan)', () => {
  assert.deepEqual(parseJson('{"a:b":1,"c":"x:y","d":{"e":"\\":"}}').duplicateFields, []);
  assert.deepEqual(parseJson('{"__proto__":1,"__proto__":2}').duplicateFields, ['__proto__']);
  assert.deepEqual(parseJson('{"a":{"b":1,"c":2},"a":{"b":1}}').duplicateFields, ['a']);
  assert.deepEqual(parseJson('[{"1":1,"0":0,"1":2},{"x":[]}]').duplicateFields, ['[0].1']);
  fc.assert(
    fc.property(fc.json(), (j) => {
      assert.deepEqual(parseJson(j).duplicateFields, []);
    }),
  );
});

test('strict mode fails on duplicates with upstream wording', () => {
  assert.equal(
    messageOf(() => parseJson('{"a":1,"a":2}', { strict: true })),
    'strict decoding error: duplicate field "a"',
  );
});

test('nesting deeper than the limit is a 400, not a stack overflow', () => {
  const deep = '['.repeat(10001) + ']'.repeat(10001);
  assert.match(
    messageOf(() => parseJson(deep)),
    /exceeded max depth of 10000 at line 1, column 10001/,
  );
  assert.doesNotThrow(() => parseJson('['.repeat(10000) + ']'.repeat(10000)));
  const huge = '{"a":'.repeat(200000) + '1' + '}'.repeat(200000);
  assert.match(
    messageOf(() => parseJson(huge)),
    /exceeded max depth/,
  );
  assert.match(
    messageOf(() => parseJson('['.repeat(200000))),
    /exceeded max depth/,
  );
});

test('malformed JSON gets Go encoding/json messages with a location', () => {
  const cases: [string, string][] = [
    ['', 'unexpected end of JSON input'],
    ['{', 'unexpected end of JSON input'],
    ['{"a":}', "invalid character '}' looking for beginning of value at line 1, column 6 (offset 5)"],
    ['{"a" 1}', "invalid character '1' after object key at line 1, column 6 (offset 5)"],
    ['{"a":1 "b":2}', `invalid character '"' after object key:value pair at line 1, column 8 (offset 7)`],
    ['{"a":1,}', "invalid character '}' looking for beginning of object key string at line 1, column 8 (offset 7)"],
    ['[1 2]', "invalid character '2' after array element at line 1, column 4 (offset 3)"],
    ['{}\n x', "invalid character 'x' after top-level value at line 2, column 2 (offset 4)"],
    ['tru', 'unexpected end of JSON input'],
    ['trux', "invalid character 'x' in literal true (expecting 'e') at line 1, column 4 (offset 3)"],
    ['"a\\x"', "invalid character 'x' in string escape code at line 1, column 4 (offset 3)"],
    ['01', "invalid character '1' after top-level value at line 1, column 2 (offset 1)"],
    ['1.', 'unexpected end of JSON input'],
    ['1.e', "invalid character 'e' after decimal point in numeric literal at line 1, column 3 (offset 2)"],
    ['-', 'unexpected end of JSON input'],
    ["{'a':1}", "invalid character '\\'' looking for beginning of object key string at line 1, column 2 (offset 1)"],
    ['"\u0001"', "invalid character '\\u0001' in string literal at line 1, column 2 (offset 1)"],
  ];
  for (const [input, want] of cases) {
    assert.equal(describeJsonSyntaxError(input), want, JSON.stringify(input));
    assert.equal(
      messageOf(() => parseJson(input)),
      `couldn't get version/kind; json parse error: ${want}`,
    );
  }
  assert.equal(
    messageOf(() => parseJson('{', { messagePrefix: '' })),
    'unexpected end of JSON input',
  );
});

test('property: never throws anything but StatusError', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string(),
        fc.string({ unit: 'binary' }),
        fc.json().map((j) => j.slice(0, Math.max(0, j.length - 1))),
      ),
      (s) => {
        try {
          parseJson(s);
        } catch (e) {
          assert.ok(e instanceof StatusError);
        }
      },
    ),
    { numRuns: 2000 },
  );
});

/** The value with its bigints as the doubles JSON.parse makes of them. */
const asDoubles = (v: unknown): unknown =>
  typeof v === 'bigint'
    ? Number(v)
    : Array.isArray(v)
      ? v.map(asDoubles)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asDoubles(x)]))
        : v;

test('property: agrees with JSON.parse on valid JSON, but for integers past 2^53 (bigints)', () => {
  fc.assert(
    fc.property(fc.json({ maxDepth: 6 }), (s) => {
      const r = parseJson(s);
      assert.deepEqual(asDoubles(r.value), JSON.parse(s));
    }),
    { numRuns: 1000 },
  );
});

test('exact integers: int64 integers past 2^53 are bigints, with their paths; others stay numbers', () => {
  const v = parseJson(
    '{"spec":{"a":9007199254740993,"b":[1,9007199254740992,-9007199254740993,1152921504606846976,92233720368547758070,1.5e300,9007199254740993.0,9007199254740993e0],"c":"9007199254740993"},"x\\"y":{"z":12345678901234567}}',
  ).value as { spec: { a: unknown; b: unknown[]; c: unknown }; 'x"y': { z: unknown } };
  assert.equal(v.spec.a, 9007199254740993n);
  // 2^53 is a double, but Go keeps it as int64: a bigint too (written back the same).
  assert.deepEqual(v.spec.b, [
    1,
    9007199254740992n,
    -9007199254740993n,
    1152921504606846976n,
    Number('92233720368547758070'),
    1.5e300,
    9007199254740992,
    9007199254740992,
  ]);
  assert.equal(v.spec.c, '9007199254740993');
  assert.equal(v['x"y'].z, 12345678901234567n);
  // int64's ends; 2^63 is past int64 (a float64 in Go too).
  assert.deepEqual(parseJson('[-9223372036854775808,9223372036854775807,9223372036854775808,-9223372036854775809]').value, [
    -9223372036854775808n,
    9223372036854775807n,
    2 ** 63,
    -(2 ** 63),
  ]);
  assert.deepEqual(parseJson('{"a":"12345678901234567890","b":9007199254740991}').value, { a: '12345678901234567890', b: 9007199254740991 });
  // Duplicate keys: the last occurrence wins, bigint or not.
  assert.deepEqual(parseJson('{"a":9223372036854775807,"a":9223372036854775806,"b":9223372036854775807,"b":1,"c":1,"c":9223372036854775807}').value, {
    a: 9223372036854775806n,
    b: 1,
    c: 9223372036854775807n,
  });
  assert.deepEqual(parseJson('{"a":{"x":9223372036854775807},"a":{"x":9223372036854775808}}').value, { a: { x: 9223372036854775808 } });
  // The same with number texts off (bodies of kinds without the typed check).
  assert.deepEqual(parseJson('{"a":[9223372036854775807,1.0]}', { numberTexts: false }).value, { a: [9223372036854775807n, 1] });
});

test('exact integers (property): a parse and stringifyJSON give every int64 back as written', () => {
  const INT64 = { min: -(2n ** 63n), max: 2n ** 63n - 1n };
  fc.assert(
    fc.property(
      fc.oneof(fc.bigInt(INT64), fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), fc.bigInt({ min: 2n ** 53n - 50n, max: 2n ** 53n + 50n })),
      fc.jsonValue(),
      (x, other) => {
        const text = `{"a":${JSON.stringify(other)},"b":[${x}],"c":"${x}"}`;
        const v = parseJson(text).value as { b: unknown[]; c: string };
        assert.equal(typeof v.b[0], x >= -(2n ** 53n) + 1n && x <= 2n ** 53n - 1n ? 'number' : 'bigint');
        assert.equal(BigInt(v.b[0] as number | bigint), x);
        assert.match(stringifyJSON(v), new RegExp(`"b":\\[${x}\\],"c":"${x}"`));
      },
    ),
    { numRuns: 2000 },
  );
});

test('number texts: parseJson records how a number was written when String(value) would not give it back', () => {
  const v = parseJson('{"a":1.0,"b":[7,1e3,-0.5,2.5],"c":{"d":12345678901234567.0,"e":-0,"f":1.5,"g":"1.0"},"h":9007199254740993}').value as {
    a: number;
    b: number[];
    c: Record<string, unknown>;
    h: bigint;
  };
  assert.equal(hasNumberTexts(v), true);
  assert.deepEqual(numberTextAt(v, 'a', 1), { literal: '1.0' });
  assert.equal(numberTextAt(v.b, 0, 7), undefined, '7 is written as String(7)');
  assert.equal(numberTextAt(v.b, 1, 1000)?.literal, '1e3');
  assert.equal(numberTextAt(v.b, 2, -0.5), undefined);
  assert.equal(numberTextAt(v.c, 'd', 12345678901234568)?.literal, '12345678901234567.0');
  assert.equal(numberTextAt(v.c, 'e', -0), undefined, '-0 is told by its value');
  assert.equal(numberTextAt(v.c, 'f', 1.5), undefined);
  // An int64 past 2^53 is a bigint, written back as it was: no text.
  assert.equal(v.h, 9007199254740993n);
  assert.equal(numberTextsIn(v)?.has('h'), false);
  assert.deepEqual([...numberTextsIn(v.b)!.keys()], [1]);
  // A record holds only while the value is the one parsed.
  v.a = 2;
  assert.equal(numberTextAt(v, 'a', 2), undefined);
});

test('number texts: none for bodies whose numbers need none (the common path), and none astray with duplicate keys or escaped keys', () => {
  for (const body of ['{"a":1,"b":[-2,3000000000],"c":"1.0e3","d":true,"e":null}', '[1,2,3]', '5', '1.5', '"x"'])
    assert.equal(hasNumberTexts(parseJson(body).value), false, body);
  const dup = parseJson('{"x":{"n":1.0,"m":2.0},"x":{"n":1}}').value as { x: Record<string, number> };
  assert.equal(numberTextAt(dup.x, 'n', 1)?.literal, undefined, 'the last value was written 1');
  const esc = parseJson('{"a\\u0062":[1.0],"c":5}').value as Record<string, unknown>;
  assert.equal(numberTextAt(esc['ab'] as number[], 0, 1)?.literal, '1.0');
});

test('number texts (property): every record is the text of the value it stands for', () => {
  const literal = fc.oneof(
    fc.integer().map(String),
    fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
    fc.constantFrom('1.0', '1e3', '-0', '2E-2', '1.50', '12345678901234567', '9007199254740993', '1e400', '-1e-400'),
  );
  const doc: fc.Arbitrary<string> = fc.letrec<{ v: string }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      literal,
      fc.constantFrom('true', 'null', '"s"'),
      fc.array(tie('v'), { maxLength: 4 }).map((a) => `[${a.join(',')}]`),
      fc.dictionary(fc.string({ maxLength: 3 }), tie('v'), { maxKeys: 4 }).map(
        (o) =>
          `{${Object.entries(o)
            .map(([k, x]) => `${JSON.stringify(k)}:${x}`)
            .join(',')}}`,
      ),
    ),
  })).v;
  fc.assert(
    fc.property(doc, (text) => {
      const value = parseJson(text).value;
      const seen: string[] = [];
      const walk = (c: unknown): void => {
        if (c === null || typeof c !== 'object') return;
        const rec = c as Record<string | number, unknown>;
        for (const [k, t] of numberTextsIn(c) ?? []) {
          const x = rec[k];
          assert.equal(typeof x, 'number');
          assert.equal(Number(t.literal), x);
          assert.notEqual(String(x), t.literal);
          assert.ok(!/^-?[0-9]+$/.test(t.literal) || BigInt(t.literal) < -(2n ** 63n) || BigInt(t.literal) >= 2n ** 63n, 'int64s are bigints, without texts');
          seen.push(t.literal);
        }
        for (const k in rec) walk(rec[k]);
      };
      walk(value);
      // Every number whose text String(value) does not give back is recorded (no duplicate keys here).
      const hasDuplicates = parseJson(text).duplicateFields.length > 0;
      if (!hasDuplicates && value !== null && typeof value === 'object') {
        // The number literals of the text, strings (keys included) left out.
        const literals = text.replace(/"(?:[^"\\]|\\.)*"/g, '""').match(/-?[0-9][0-9.eE+-]*/g) ?? [];
        const int64 = (l: string): boolean => /^-?[0-9]+$/.test(l) && BigInt(l) >= -(2n ** 63n) && BigInt(l) < 2n ** 63n;
        const odd = literals.filter((l) => String(Number(l)) !== l && l !== '-0' && !int64(l));
        assert.deepEqual([...seen].sort(), [...odd].sort());
        assert.equal(hasNumberTexts(value), odd.length > 0);
      }
    }),
    { numRuns: 1000 },
  );
});

test('number texts follow a JSON merge patch into its result (copyNumberTexts)', async () => {
  const { mergePatch } = await import('./patch/merge-patch.js');
  const patch = parseJson('{"spec":{"n":1.0,"list":[2,3e0],"deep":{"m":-1.50}},"keep":7}').value;
  const result = copyNumberTexts(patch, mergePatch({ spec: { n: 5, other: 1, deep: { x: 1 } }, keep: 7 }, patch)) as {
    spec: { n: number; list: number[]; deep: { m: number } };
  };
  assert.equal(hasNumberTexts(result), true);
  assert.equal(numberTextAt(result.spec, 'n', 1)?.literal, '1.0');
  assert.equal(numberTextAt(result.spec.list, 1, 3)?.literal, '3e0');
  assert.equal(numberTextAt(result.spec.deep, 'm', -1.5)?.literal, '-1.50');
  assert.equal(hasNumberTexts(copyNumberTexts(JSON.parse('{"a":1.0}'), { a: 1 })), false, 'nothing recorded, nothing copied');
});
