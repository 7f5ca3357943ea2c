import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestInfo } from '../requestinfo.js';
import { forbiddenError } from './authorization.js';

const alice = { name: 'alice', groups: [] };

describe('authorization filter', () => {
  it('words a refusal as responsewriters.Forbidden does', () => {
    const ns = forbiddenError(alice, parseRequestInfo('GET', '/api/v1/namespaces/default/pods/web', new URLSearchParams()), '');
    assert.equal(ns.code, 403);
    assert.equal(ns.status.reason, 'Forbidden');
    assert.equal(ns.message, 'pods "web" is forbidden: User "alice" cannot get resource "pods" in API group "" in the namespace "default"');
    const cluster = forbiddenError(alice, parseRequestInfo('GET', '/apis/apps/v1/deployments', new URLSearchParams()), 'no RBAC policy matched');
    assert.equal(
      cluster.message,
      'deployments.apps is forbidden: User "alice" cannot list resource "deployments" in API group "apps" at the cluster scope: no RBAC policy matched',
    );
    const sub = forbiddenError(alice, parseRequestInfo('PUT', '/apis/apps/v1/namespaces/x/deployments/d/scale', new URLSearchParams()), '');
    assert.match(sub.message, /cannot update resource "deployments\/scale" in API group "apps" in the namespace "x"$/);
    const path = forbiddenError(alice, parseRequestInfo('GET', '/metrics', new URLSearchParams()), '');
    assert.equal(path.message, 'forbidden: User "alice" cannot get path "/metrics"');
    assert.deepEqual(path.status.details, {});
  });
});
