import { test } from 'node:test';
import assert from 'node:assert/strict';
import { notFound, unauthorized } from './errors.js';

test('a Status serialises its fields in metav1.Status order (message, reason, details, code), as kube-apiserver writes it', () => {
  assert.equal(
    JSON.stringify(unauthorized().status),
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}',
  );
  assert.equal(
    JSON.stringify(notFound({ group: '', resource: 'configmaps' }, 'x').status),
    '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}',
  );
});
