// Cases ported from apiextensions-apiserver pkg/apiserver/validation/validation_test.go
// (TestValidateCustomResource) plus kube-openapi behaviours kube-apiserver exposes for CRs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString } from '../../apimachinery/errors.js';
import { newStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';
import { decodeObjectMeta, validateEmbeddedResources, validateObject } from './validate.js';

const S = (p: JSONSchemaProps) => newStructural(p);
const msgs = (obj: unknown, p: JSONSchemaProps, fieldPath?: string): string[] => validateObject(obj, S(p), fieldPath ? { fieldPath } : {}).map(issueString);
const field = (f: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { field: f } });
const sameSet = (a: string[], b: string[]) => assert.deepEqual([...a].sort(), [...b].sort());

describe('validateObject: types and nullable (upstream table)', () => {
  const notNullable = field({ type: 'object' });
  for (const [v, t] of [
    ['foo', 'string'],
    [42, 'integer'],
    [true, 'boolean'],
    [1.2, 'number'],
    [[], 'array'],
    [null, 'null'],
  ] as const) {
    it(`!nullable object rejects ${t}`, () => {
      assert.deepEqual(msgs({ field: v }, notNullable), [`field: Invalid value: "${t}": field in body must be of type object: "${t}"`]);
    });
  }
  it('nullable object accepts null and objects', () => {
    const s = field({ type: 'object', nullable: true });
    assert.deepEqual(msgs({ field: null }, s), []);
    assert.deepEqual(msgs({ field: {} }, s), []);
    assert.deepEqual(msgs({ field: 42 }, s), ['field: Invalid value: "integer": field in body must be of type object: "integer"']);
  });
  it('nullable without type accepts anything', () => {
    const s = field({ nullable: true, 'x-kubernetes-preserve-unknown-fields': true });
    for (const v of [null, 1, 'x', [], {}]) assert.deepEqual(msgs({ field: v }, s), []);
  });
  it('x-kubernetes-int-or-string', () => {
    const s = field({ 'x-kubernetes-int-or-string': true });
    assert.deepEqual(msgs({ field: 42 }, s), []);
    assert.deepEqual(msgs({ field: 'foo' }, s), []);
    for (const [v, t] of [
      [null, 'null'],
      [true, 'boolean'],
      [1.2, 'number'],
      [{}, 'object'],
      [[], 'array'],
    ] as const) {
      assert.deepEqual(msgs({ field: v }, s), [`field: Invalid value: "${t}": field in body must be of type integer,string: "${t}"`]);
    }
  });
  it('nullable, int-or-string and user-provided anyOf', () => {
    const s = field({ nullable: true, 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
    for (const v of [null, 42, 'foo']) assert.deepEqual(msgs({ field: v }, s), []);
    sameSet(msgs({ field: true }, s), [
      '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"',
      'field: Invalid value: "boolean": field in body must be of type integer: "boolean"',
    ]);
    sameSet(msgs({ field: 1.2 }, s), [
      '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "number": field in body must be of type integer,string: "number"',
      'field: Invalid value: "number": field in body must be of type integer: "number"',
      '<nil>: Invalid value: "": Checked value must be of type integer (default format) in field',
    ]);
  });
  it('nullable, int-or-string and user-provided allOf', () => {
    const s = field({ nullable: true, 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }] });
    assert.deepEqual(msgs({ field: 42 }, s), []);
    sameSet(msgs({ field: {} }, s), [
      '<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated',
      '<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)',
      'field: Invalid value: "object": field in body must be of type integer,string: "object"',
      'field: Invalid value: "object": field in body must be of type integer: "object"',
    ]);
  });
});

describe('validateObject: value validations', () => {
  it('required fields, nested', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      required: ['field'],
      properties: { field: { type: 'object', required: ['nested'], properties: { nested: { type: 'string' } } } },
    };
    assert.deepEqual(msgs({ test: 'a' }, s), ['field: Required value']);
    assert.deepEqual(msgs({ field: {} }, s), ['field.nested: Required value']);
  });
  it('enum: type errors and unsupported values (upstream table)', () => {
    const s = field({
      type: 'object',
      required: ['nestedint', 'nestedstring'],
      properties: { nestedint: { type: 'integer', enum: [1, 2] }, nestedstring: { type: 'string', enum: ['a', 'b'] } },
    });
    assert.deepEqual(msgs({ field: {} }, s), ['field.nestedint: Required value', 'field.nestedstring: Required value']);
    assert.deepEqual(msgs({ field: { nestedint: 'x', nestedstring: true } }, s), [
      'field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"',
      'field.nestedint: Unsupported value: "x": supported values: "1", "2"',
      'field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"',
      'field.nestedstring: Unsupported value: true: supported values: "a", "b"',
    ]);
  });
  it('maxProperties / maxItems / maxLength', () => {
    assert.deepEqual(msgs({ fieldX: { a: true, b: true, c: true } }, { type: 'object', properties: { fieldX: { type: 'object', maxProperties: 2 } } }), [
      'fieldX: Too many: 3: must have at most 2 items',
    ]);
    assert.deepEqual(msgs({ fieldX: ['a', 'b', 'c'] }, { type: 'object', properties: { fieldX: { type: 'array', maxItems: 2, items: { type: 'string' } } } }), [
      'fieldX: Too many: 3: must have at most 2 items',
    ]);
    assert.deepEqual(msgs({ fieldX: 'abc' }, { type: 'object', properties: { fieldX: { type: 'string', maxLength: 2 } } }), [
      'fieldX: Too long: may not be more than 2 bytes',
    ]);
  });
  it('minProperties / minItems / minLength', () => {
    assert.deepEqual(msgs({ x: {} }, { type: 'object', properties: { x: { type: 'object', minProperties: 1 } } }), [
      'x: Invalid value: 0: x in body should have at least 1 properties',
    ]);
    assert.deepEqual(msgs({ x: [] }, { type: 'object', properties: { x: { type: 'array', minItems: 1, items: { type: 'string' } } } }), [
      'x: Invalid value: 0: x in body should have at least 1 items',
    ]);
    assert.deepEqual(msgs({ x: 'ab' }, { type: 'object', properties: { x: { type: 'string', minLength: 3 } } }), [
      'x: Invalid value: "ab": x in body should be at least 3 chars long',
    ]);
  });
  it('string lengths count runes, not UTF-16 units', () => {
    assert.deepEqual(msgs({ x: '😀😀' }, { type: 'object', properties: { x: { type: 'string', maxLength: 2 } } }), []);
  });
  it('numeric bounds: minimum, exclusive, maximum', () => {
    const s = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            replicas: { type: 'integer', minimum: 1, maximum: 10 },
            ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1.5, exclusiveMaximum: true },
          },
        },
      },
    } satisfies JSONSchemaProps;
    assert.deepEqual(msgs({ spec: { replicas: 0 } }, s), ['spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1']);
    assert.deepEqual(msgs({ spec: { replicas: 11 } }, s), ['spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10']);
    assert.deepEqual(msgs({ spec: { ratio: 1.5 } }, s), ['spec.ratio: Invalid value: 1.5: spec.ratio in body should be less than 1.5']);
    assert.deepEqual(msgs({ spec: { ratio: -0.5 } }, s), ['spec.ratio: Invalid value: -0.5: spec.ratio in body should be greater than 0']);
  });
  it('type error on the brief example', () => {
    assert.deepEqual(
      msgs({ spec: { replicas: 'string' } }, { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } } }),
      ['spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"'],
    );
  });
  it('multipleOf, integer and float', () => {
    const s: JSONSchemaProps = { type: 'object', properties: { i: { type: 'integer', multipleOf: 3 }, f: { type: 'number', multipleOf: 0.5 } } };
    assert.deepEqual(msgs({ i: 7, f: 1.5 }, s), ['i: Invalid value: 7: i in body should be a multiple of 3']);
    assert.deepEqual(msgs({ f: 1.25 }, s), ['f: Invalid value: 1.25: f in body should be a multiple of 0.5']);
  });
  it('int32 format range', () => {
    assert.deepEqual(msgs({ x: 2 ** 31 }, { type: 'object', properties: { x: { type: 'integer', format: 'int32' } } }), [
      '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in x',
    ]);
  });
  it('pattern', () => {
    assert.deepEqual(msgs({ name: 'ABC' }, { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$' } } }), [
      'name: Invalid value: "ABC": name in body should match \'^[a-z]+$\'',
    ]);
    assert.deepEqual(msgs({ name: 'abc' }, { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$' } } }), []);
  });
  it('invalid pattern is reported at validation time', () => {
    const [m] = msgs({ field: 'foo' }, field({ type: 'string', pattern: '+' }));
    assert.equal(
      m,
      'field: Invalid value: "foo": field in body should match \'+, but pattern is invalid: error parsing regexp: missing argument to repetition operator: `+`\'',
    );
  });
  it('pattern is RE2: inline flags, Unicode classes, x{…}, Q…E', () => {
    const cases: [string, string, boolean][] = [
      ['^(?i)(abort|warn)?$', 'WARN', true],
      ['^((?i)january|february)$', 'JANUARY', true],
      ['^((?i)january|february)$', 'FEBRUARY', true],
      ['^((?i)jan)uary$', 'JANUARY', false],
      ['^\\p{Greek}+$', 'αβγ', true],
      ['^\\pL+$', 'héllo', true],
      ['^\\x{41}$', 'A', true],
      ['^\\Qa.b\\E$', 'a.b', true],
      ['^\\Qa.b\\E$', 'axb', false],
    ];
    for (const [pattern, value, ok] of cases) {
      const got = msgs({ field: value }, field({ type: 'string', pattern }));
      assert.deepEqual(got, ok ? [] : [`field: Invalid value: "${value}": field in body should match '${pattern}'`], `${pattern} on ${value}`);
    }
  });
  it('oneOf and not', () => {
    const s = field({ type: 'integer', oneOf: [{ minimum: 0 }, { maximum: 10 }], not: { enum: [5] } });
    assert.deepEqual(msgs({ field: 20 }, s), []);
    assert.deepEqual(msgs({ field: 3 }, s), ['<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives']);
    assert.ok(msgs({ field: 5 }, s).includes('<nil>: Invalid value: "": "field" must not validate the schema (not)'));
  });
  it('additionalProperties schema and map paths', () => {
    const s: JSONSchemaProps = { type: 'object', properties: { labels: { type: 'object', additionalProperties: { type: 'string' } } } };
    assert.deepEqual(msgs({ labels: { a: 'x', b: 1 } }, s), ['labels.b: Invalid value: "integer": labels.b in body must be of type string: "integer"']);
  });
  it('additionalProperties: false forbids keys', () => {
    assert.deepEqual(msgs({ m: { a: 1 } }, { type: 'object', properties: { m: { type: 'object', additionalProperties: false } } }), [
      'm: Invalid value: "a": m.a in body is a forbidden property',
    ]);
  });
  it('array item paths', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: { items: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } },
        },
      },
    };
    assert.deepEqual(msgs({ spec: { items: [{ name: 'a' }, { name: 'b' }, { name: 3 }, {}] } }, s), [
      'spec.items[2].name: Invalid value: "integer": spec.items[2].name in body must be of type string: "integer"',
      'spec.items[3].name: Required value',
    ]);
  });
  it('status fieldPath prefixes paths', () => {
    assert.deepEqual(msgs({ n: 'x' }, { type: 'object', properties: { n: { type: 'integer' } } }, 'status'), [
      'status.n: Invalid value: "string": n in body must be of type integer: "string"',
    ]);
  });
});

describe('validateObject: formats', () => {
  const cases: [string, unknown, unknown][] = [
    ['date-time', '2024-01-02T03:04:05Z', '2024-01-02'],
    ['date', '2024-02-29', '2023-02-29'],
    ['uri', 'https://example.com/x', 'example.com'],
    ['email', 'a@b.c', 'not-an-email'],
    ['hostname', 'example.com', '-bad-.com'],
    ['ipv4', '10.0.0.1', '10.0.0.256'],
    ['ipv6', '::1', '10.0.0.1'],
    ['cidr', '10.0.0.0/8', '10.0.0.0/33'],
    ['mac', '01:23:45:67:89:ab', '01:23:45'],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', '123'],
    ['byte', 'aGVsbG8=', 'not base64!'],
    ['duration', '1h30m', 'soon'],
    ['k8s-short-name', 'abc', 'a-'],
    ['k8s-long-name', 'a.b', 'a.-'],
  ];
  for (const [format, good, bad] of cases) {
    it(`${format}`, () => {
      const s = { type: 'object', properties: { fieldX: { type: 'string', format } } } satisfies JSONSchemaProps;
      assert.deepEqual(msgs({ fieldX: good }, s), []);
      assert.deepEqual(msgs({ fieldX: bad }, s), [
        `fieldX: Invalid value: ${JSON.stringify(bad)}: fieldX in body must be of type ${format}: ${JSON.stringify(bad)}`,
      ]);
    });
  }
  it('unknown formats are dropped, not enforced', () => {
    assert.deepEqual(msgs({ x: 'whatever' }, { type: 'object', properties: { x: { type: 'string', format: 'no-such-format' } } }), []);
  });
});

describe('validateObject: embedded resources', () => {
  const s: JSONSchemaProps = {
    type: 'object',
    properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
  };
  it('requires apiVersion and kind, not metadata', () => {
    assert.deepEqual(msgs({ template: {} }, s), ['template.apiVersion: Required value', 'template.kind: Required value']);
  });
  it('checks TypeMeta values', () => {
    assert.deepEqual(msgs({ template: { apiVersion: 'a/b/c', kind: 'Foo_Bar' } }, s), [
      'template.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      "template.kind: Invalid value: \"Foo_Bar\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });
  it('validates embedded ObjectMeta', () => {
    const out = msgs({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a/b', labels: { 'bad key!': 'x' } } } }, s);
    assert.ok(out.includes('template.metadata.name: Invalid value: "a/b": may not contain \'/\''), out.join('\n'));
    assert.ok(
      out.some((m) => m.startsWith('template.metadata.labels: Invalid value: "bad key!"')),
      out.join('\n'),
    );
  });
  it('reports undecodable metadata', () => {
    assert.deepEqual(msgs({ template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 5 } } }, s), [
      'template.metadata: Invalid value: {"name":5}: json: cannot unmarshal number into Go struct field ObjectMeta.name of type string',
    ]);
  });
  it('isResourceRoot applies the checks to the object itself', () => {
    assert.deepEqual(validateEmbeddedResources({}, S({ type: 'object' }), '', true).map(issueString), ['apiVersion: Required value', 'kind: Required value']);
  });
});

describe('decodeObjectMeta: a Time field as metav1.Time.UnmarshalJSON parses it (time.Parse, RFC 3339)', () => {
  it("gives time.Parse's own error, quoted by time's quote()", () => {
    const L = '"2006-01-02T15:04:05Z07:00"';
    assert.equal(decodeObjectMeta({ creationTimestamp: 'x' }).error, `parsing time "x" as ${L}: cannot parse "x" as "2006"`);
    assert.equal(
      decodeObjectMeta({ creationTimestamp: '2024-01-01 00:00:00Z' }).error,
      `parsing time "2024-01-01 00:00:00Z" as ${L}: cannot parse " 00:00:00Z" as "T"`,
    );
    assert.equal(decodeObjectMeta({ deletionTimestamp: '2024-13-01T00:00:00Z' }).error, 'parsing time "2024-13-01T00:00:00Z": month out of range');
    assert.equal(decodeObjectMeta({ creationTimestamp: 'é' }).error, `parsing time "\\xc3\\xa9" as ${L}: cannot parse "\\xc3\\xa9" as "2006"`);
    assert.equal(decodeObjectMeta({ creationTimestamp: '2024-01-01T00:00:00+01:00' }).error, undefined);
  });
});
