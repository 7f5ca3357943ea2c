import { test } from 'node:test';
import assert from 'node:assert/strict';
import { strictDecodingError } from './json.js';
import { refTo, type Definitions } from './schema.js';
import { findUnknownFields, pruneUnknownFields, unknownFieldMessages } from './unknown-fields.js';

const defs: Definitions = {
  ObjectMeta: {
    type: 'object',
    properties: { name: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  Container: { type: 'object', properties: { name: { type: 'string' }, image: { type: 'string' } } },
  Pod: {
    type: 'object',
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: refTo('ObjectMeta'),
      spec: {
        type: 'object',
        properties: {
          containers: { type: 'array', items: refTo('Container') },
          raw: { type: 'object' },
          open: { type: 'object', properties: { known: { type: 'string' } }, 'x-kubernetes-preserve-unknown-fields': true },
          template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object', properties: {} } } },
          port: { 'x-kubernetes-int-or-string': true },
        },
      },
    },
  },
};

test('reports unknown fields with dotted paths and list indices', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'a', labelz: { x: 'y' }, labels: { any: 'thing' } },
    spec: {
      foo: 1,
      containers: [
        { name: 'c', image: 'i' },
        { name: 'd', imagePullPolicyx: 'Always' },
      ],
      raw: { anything: { goes: true } },
      open: { known: 'k', extra: 1 },
      template: { apiVersion: 'v1', kind: 'X', metadata: {}, spec: { bad: 1 }, nope: 2 },
      port: 'http',
    },
  };
  const paths = findUnknownFields(pod, refTo('Pod'), defs);
  assert.deepEqual(paths, ['metadata.labelz', 'spec.foo', 'spec.containers[1].imagePullPolicyx', 'spec.template.spec.bad', 'spec.template.nope']);
  assert.deepEqual(unknownFieldMessages(paths.slice(0, 2)), ['unknown field "metadata.labelz"', 'unknown field "spec.foo"']);
  assert.equal(strictDecodingError(unknownFieldMessages(['spec.foo'])).status.message, 'strict decoding error: unknown field "spec.foo"');
});

test('unresolvable schemas and nulls accept anything', () => {
  assert.deepEqual(findUnknownFields({ a: 1 }, refTo('Missing'), defs), []);
  assert.deepEqual(findUnknownFields({ metadata: null }, refTo('Pod'), defs), []);
  assert.deepEqual(findUnknownFields({ a: 1 }, undefined, defs), []);
});

test('pruneUnknownFields removes what findUnknownFields reports and keeps the rest', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    foo: 1,
    metadata: { name: 'p', labelz: { a: 'b' }, labels: { x: 'y' } },
    spec: {
      containers: [{ name: 'c', image: 'i', bogus: true }],
      raw: { anything: 1 },
      open: { known: 'k', extra: { deep: 1 } },
    },
  };
  const paths = findUnknownFields(pod, refTo('Pod'), defs);
  assert.deepEqual(pruneUnknownFields(pod, refTo('Pod'), defs), paths);
  assert.deepEqual(paths, ['foo', 'metadata.labelz', 'spec.containers[0].bogus']);
  assert.deepEqual(pod, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', labels: { x: 'y' } },
    spec: { containers: [{ name: 'c', image: 'i' }], raw: { anything: 1 }, open: { known: 'k', extra: { deep: 1 } } },
  });
  assert.deepEqual(findUnknownFields(pod, refTo('Pod'), defs), []);
});
