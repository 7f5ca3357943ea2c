import assert from 'node:assert/strict';
import { test } from 'node:test';
import { builtinDefinitions } from '../../registry/builtin.js';
import { builtinResources } from '../../registry/builtin.js';
import { buildOpenAPIV2Service, negotiateOpenAPIV2, negotiateOpenAPIV3 } from './serve.js';

test('v2 negotiation', () => {
  assert.equal(negotiateOpenAPIV2(undefined)?.kind, 'json');
  assert.equal(negotiateOpenAPIV2('*/*')?.kind, 'json');
  assert.equal(negotiateOpenAPIV2('application/json')?.kind, 'json');
  // What kubectl 1.20 sends.
  assert.deepEqual(negotiateOpenAPIV2('application/com.github.proto-openapi.spec.v2@v1.0+protobuf'), {
    kind: 'protobuf',
    contentType: 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf',
  });
  assert.equal(negotiateOpenAPIV2('application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json;q=0.9')?.kind, 'protobuf');
  assert.equal(negotiateOpenAPIV2('application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf')?.kind, 'protobuf');
  assert.equal(negotiateOpenAPIV2('text/html'), undefined);
});

test('v3 negotiation', () => {
  assert.equal(negotiateOpenAPIV3('application/json')?.contentType, 'application/json');
  assert.equal(negotiateOpenAPIV3('application/json, */*')?.kind, 'json');
  assert.equal(negotiateOpenAPIV3('application/com.github.proto-openapi.spec.v3.v1.0+protobuf'), undefined);
});

test('v2 service bytes', () => {
  const s = buildOpenAPIV2Service({ resources: builtinResources, definitions: builtinDefinitions, version: { gitVersion: 'v1' } });
  assert.equal((JSON.parse(s.json.toString()) as { swagger: string }).swagger, '2.0');
  assert.ok(s.protobuf.length > 1000);
  assert.match(s.etag, /^[0-9A-F]{128}$/);
});
