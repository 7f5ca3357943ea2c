// Cases from apiextensions-apiserver pkg/apiserver/schema (validation_test.go, convert_test.go) and
// pkg/apis/apiextensions/validation/validation_test.go (openAPIV3Schema rules).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issueString } from '../../apimachinery/errors.js';
import { newStructural, StructuralConversionError, validateOpenAPIV3Schema, validateStructural } from './structural.js';
import type { JSONSchemaProps } from './types.js';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const structural = (s: JSONSchemaProps): string[] => validateStructural(newStructural(s), P).map(issueString);
const crd = (s: JSONSchemaProps, opts = {}): string[] => validateOpenAPIV3Schema(s, P, opts).map(issueString);

describe('newStructural', () => {
  for (const [name, s, msg] of [
    ['$ref', { type: 'object', $ref: '#/x' }, "OpenAPIV3Schema '$ref' is not supported"],
    ['items array', { type: 'array', items: [{ type: 'string' }] }, "OpenAPIV3Schema 'items' must be a schema, but is an array"],
    [
      'preserve false',
      { type: 'object', 'x-kubernetes-preserve-unknown-fields': false },
      "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
    ],
    ['patternProperties', { type: 'object', patternProperties: { a: {} } }, "OpenAPIV3Schema 'patternProperties' is not supported"],
  ] as [string, JSONSchemaProps, string][]) {
    it(`rejects ${name}`, () =>
      assert.throws(
        () => newStructural(s),
        (e: unknown) => e instanceof StructuralConversionError && e.message === msg,
      ));
  }
  it('keeps properties, items, additionalProperties and extensions', () => {
    const s = newStructural({
      type: 'object',
      properties: {
        a: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        m: { type: 'object', additionalProperties: { type: 'integer' } },
      },
    });
    assert.equal(s.properties?.get('a')?.items?.type, 'string');
    assert.equal(s.properties?.get('a')?.xListType, 'set');
    assert.equal(s.properties?.get('m')?.additionalProperties?.structural?.type, 'integer');
    assert.equal(s.properties?.get('m')?.additionalProperties?.bool, true);
  });
  it('refuses schemas nested beyond the depth bound', () => {
    let s: JSONSchemaProps = { type: 'string' };
    for (let i = 0; i < 500; i++) s = { type: 'object', properties: { a: s } };
    assert.throws(() => newStructural(s), StructuralConversionError);
  });
});

describe('validateStructural', () => {
  it('type must not be empty for specified object fields', () => {
    assert.deepEqual(structural({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }), [
      `${P}.properties[spec].type: Required value: must not be empty for specified object fields`,
    ]);
  });
  it('type must not be empty at the root / for array items; items must be specified', () => {
    assert.deepEqual(structural({}), [`${P}.type: Required value: must not be empty at the root`]);
    assert.deepEqual(structural({ type: 'object', properties: { a: { type: 'array', items: {} }, b: { type: 'array' } } }), [
      `${P}.properties[a].items.type: Required value: must not be empty for specified array items`,
      `${P}.properties[b].items: Required value: must be specified`,
    ]);
  });
  it('root must be object without additionalProperties', () => {
    assert.deepEqual(structural({ type: 'object', additionalProperties: { type: 'string' } }), [
      `${P}.additionalProperties: Forbidden: must not be used at the root`,
    ]);
    assert.deepEqual(structural({ type: 'string' }), [`${P}.type: Invalid value: "string": must be object at the root`]);
  });
  it('value validations must not specify generics or extensions', () => {
    const out = structural({
      type: 'object',
      properties: { a: { type: 'string' } },
      anyOf: [{ type: 'object', default: 1, description: 'd', nullable: true, 'x-kubernetes-preserve-unknown-fields': true }],
      allOf: [{ properties: { a: { title: 't', 'x-kubernetes-list-type': 'set' } } }],
      oneOf: [{ 'x-kubernetes-validations': [{ rule: 'true' }] }],
    });
    assert.deepEqual(out, [
      `${P}.allOf[0].properties[a].title: Forbidden: must be empty to be structural`,
      `${P}.allOf[0].properties[a].x-kubernetes-list-type: Forbidden: must be undefined to be structural`,
      `${P}.anyOf[0].default: Forbidden: must be undefined to be structural`,
      `${P}.anyOf[0].description: Forbidden: must be empty to be structural`,
      `${P}.anyOf[0].nullable: Forbidden: must be false to be structural`,
      `${P}.anyOf[0].type: Forbidden: must be empty to be structural`,
      `${P}.anyOf[0].x-kubernetes-preserve-unknown-fields: Forbidden: must be false to be structural`,
      `${P}.oneOf[0].x-kubernetes-validations: Forbidden: must be empty to be structural`,
    ]);
  });
  it('metadata in a nested context', () => {
    assert.deepEqual(structural({ type: 'object', properties: { metadata: { type: 'object' } }, anyOf: [{ properties: { metadata: {} } }] }), [
      `${P}.anyOf[0].properties[metadata]: Forbidden: must not be specified in a nested context`,
    ]);
  });
  it('metadata at the root may only restrict name and generateName', () => {
    assert.deepEqual(
      structural({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 3 }, generateName: { type: 'string' } } } },
      }),
      [],
    );
    assert.deepEqual(structural({ type: 'object', properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } } }), [
      `${P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified`,
    ]);
    assert.deepEqual(structural({ type: 'object', properties: { metadata: { type: 'string' } } }), [
      `${P}.properties[metadata].type: Invalid value: "string": must be object`,
    ]);
  });
  it('kind and apiVersion must be strings where metadata applies', () => {
    assert.deepEqual(structural({ type: 'object', properties: { kind: { type: 'integer' }, apiVersion: { type: 'string' } } }), [
      `${P}.properties[kind].type: Invalid value: "integer": must be string`,
    ]);
  });
  it('int-or-string anyOf and allOf patterns are allowed', () => {
    assert.deepEqual(
      structural({ type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] } } }),
      [],
    );
    assert.deepEqual(
      structural({
        type: 'object',
        properties: { a: { 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }, { pattern: 'x' }] } },
      }),
      [],
    );
    assert.deepEqual(structural({ type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true, 'x-kubernetes-preserve-unknown-fields': true } } }), [
      `${P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true`,
    ]);
  });
  it('embedded resources must be objects with properties or preserve-unknown-fields', () => {
    assert.deepEqual(
      structural({
        type: 'object',
        properties: { e: { type: 'string', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
      }),
      [`${P}.properties[e].type: Invalid value: "string": must be object if x-kubernetes-embedded-resource is true`],
    );
    assert.deepEqual(structural({ type: 'object', properties: { e: { type: 'object', 'x-kubernetes-embedded-resource': true } } }), [
      `${P}.properties[e].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields`,
    ]);
  });
  it('completeness: value validations only on specified fields', () => {
    assert.deepEqual(structural({ type: 'object', properties: { a: { type: 'string' } }, anyOf: [{ properties: { b: { pattern: 'x' } } }] }), [
      `${P}.properties[b]: Required value: because it is defined in ${P}.anyOf[0].properties[b]`,
    ]);
  });
  it('invalid pattern', () => {
    // upstream's "invalid regex pattern" case, and the RE2 refusals real CRDs hit
    assert.deepEqual(structural({ type: 'object', properties: { foo: { type: 'string', pattern: '+' } } }), [
      `${P}.properties[foo].pattern: Invalid value: "+": must be a valid regular expression, but isn't: error parsing regexp: missing argument to repetition operator: \`+\``,
    ]);
    assert.deepEqual(structural({ type: 'object', properties: { a: { type: 'string', pattern: '^(?!x)' } } }), [
      `${P}.properties[a].pattern: Invalid value: "^(?!x)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: \`(?!\``,
    ]);
  });
  it('RE2 patterns that JavaScript would refuse are valid', () => {
    for (const pattern of ['^(?i)(abort|warn)?$', '^((?i)january|february)$', '^\\pL+$', '^\\Qa.b\\E$', '^[[:alpha:]]+\\z', '(?P<x>a)|(?P<x>b)'])
      assert.deepEqual(structural({ type: 'object', properties: { a: { type: 'string', pattern } } }), [], pattern);
  });
});

describe('validateOpenAPIV3Schema (CRD rules)', () => {
  it('x-kubernetes-preserve-unknown-fields: false', () => {
    assert.deepEqual(crd({ type: 'object', 'x-kubernetes-preserve-unknown-fields': false }), [
      `${P}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined`,
    ]);
  });
  it('uniqueItems, additionalProperties with properties, $ref, type null, nullable root', () => {
    assert.deepEqual(
      crd({
        type: 'object',
        nullable: true,
        properties: {
          a: { type: 'array', uniqueItems: true, items: { type: 'string' } },
          b: { type: 'object', properties: { x: { type: 'string' } }, additionalProperties: false },
          c: { type: 'null' },
          d: { $ref: '#/definitions/x' },
        },
      }),
      [
        `${P}.nullable: Forbidden: nullable cannot be true at the root`,
        `${P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic`,
        `${P}.properties[b].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive`,
        `${P}.properties[c].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string"`,
        `${P}.properties[c].type: Forbidden: type cannot be set to null, use nullable as an alternative`,
        `${P}.properties[d].$ref: Forbidden: $ref is not supported`,
      ],
    );
  });
  it('structural errors surface through the CRD flow', () => {
    assert.deepEqual(crd({ type: 'object', properties: { spec: { properties: { a: { type: 'string' } } } } }), [
      `${P}.properties[spec].type: Required value: must not be empty for specified object fields`,
    ]);
  });
  it('defaults are forbidden in top-level metadata', () => {
    assert.ok(
      crd({ type: 'object', properties: { metadata: { type: 'object', default: {} } } }).includes(
        `${P}.properties[metadata].default: Forbidden: must not be set in top-level metadata`,
      ),
    );
  });
  it('status subresource restricts the root', () => {
    assert.deepEqual(
      crd({ type: 'object', properties: { spec: { type: 'object' } }, anyOf: [{ required: ['spec'] }] }, { statusSubresource: true }).slice(0, 1),
      [
        `${P}: Invalid value: {"type":"object","properties":{"spec":{"type":"object"}},"anyOf":[{"required":["spec"]}]}: only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled`,
      ],
    );
  });
  it('x-kubernetes-validations shape', () => {
    assert.deepEqual(crd({ type: 'object', 'x-kubernetes-validations': [{ rule: ' ' }, { rule: 'a\nb' }, { rule: 'x', reason: 'Nope' }] }), [
      `${P}.x-kubernetes-validations[0].rule: Required value: rule is not specified`,
      `${P}.x-kubernetes-validations[1].message: Required value: message must be specified if rule contains line breaks`,
      `${P}.x-kubernetes-validations[2].reason: Unsupported value: "Nope": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`,
    ]);
  });
  it('a valid schema has no issues', () => {
    assert.deepEqual(
      crd({
        type: 'object',
        properties: {
          spec: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', pattern: '^[a-z]+$' },
              replicas: { type: 'integer', minimum: 0, default: 1 },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['port'],
                items: { type: 'object', required: ['port'], properties: { port: { type: 'integer' } } },
              },
              template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
          status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        },
      }),
      [],
    );
  });
});
