import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { unmarshalYAMLInto, type GoType } from './godecode.js';

// golang/testdata/go-yaml-random.json also holds what sigs.k8s.io/yaml's Unmarshal (lax) and
// UnmarshalStrict (strict) made of each document for struct { Image string `json:"image"`; Flag bool `json:"flag"` }.
const T: GoType = {
  kind: 'struct',
  goName: 'main.T',
  short: 'T',
  fields: [
    { name: 'image', type: { kind: 'string', goName: 'string' } },
    { name: 'flag', type: { kind: 'bool' } },
  ],
};
type Outcome = string | { image: string; flag: boolean };
const { cases } = JSON.parse(readFileSync(new URL('../../golang/testdata/go-yaml-random.json', import.meta.url), 'utf8')) as {
  cases: { doc: string; lax: Outcome; strict: Outcome }[];
};

function decode(doc: string, strict: boolean): Outcome {
  try {
    const v = unmarshalYAMLInto(doc, T, { strictYAML: strict, disallowUnknownFields: strict }) ?? {};
    return { image: (v['image'] as string | undefined) ?? '', flag: (v['flag'] as boolean | undefined) ?? false };
  } catch (e) {
    return (e as Error).message;
  }
}

describe('template decoding of randomly made documents, as Go decoded them', () => {
  it(`${cases.length} documents, Unmarshal and UnmarshalStrict: the same fields or the same error`, () => {
    for (const c of cases) {
      assert.deepEqual(decode(c.doc, false), c.lax, JSON.stringify(c.doc));
      assert.deepEqual(decode(c.doc, true), c.strict, JSON.stringify(c.doc));
    }
  });
});
