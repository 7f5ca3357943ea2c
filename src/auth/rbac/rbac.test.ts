// The RBAC authorizer against upstream's cases: rule matching (*, resource/subresource,
// */subresource, resourceNames, nonResourceURLs with a trailing *), subjects (User, Group,
// ServiceAccount with and without a namespace), reasons, escalation checks and their message.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuthorizationAttributes } from '../authorizer.js';
import { RbacAuthorizer } from './authorizer.js';
import { RbacCache } from './cache.js';
import { confirmNoEscalation } from './escalation.js';
import { covers, ruleAllows } from './evaluation.js';
import { reconcileClusterRole } from './reconcile.js';
import { RbacRuleResolver } from './resolver.js';
import type { PolicyRule } from './types.js';

const res = (verb: string, resource: string, extra: Partial<AuthorizationAttributes> = {}): AuthorizationAttributes => ({
  isResourceRequest: true,
  path: '',
  verb,
  apiGroup: '',
  apiVersion: 'v1',
  namespace: 'ns',
  resource,
  subresource: '',
  name: '',
  ...extra,
});
const url = (verb: string, path: string): AuthorizationAttributes => ({ ...res(verb, ''), isResourceRequest: false, path, namespace: '' });

describe('rule evaluation', () => {
  it('matches verbs, groups, resources, subresources and names as upstream', () => {
    const r: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods', 'pods/log'], resourceNames: ['a'] };
    assert.ok(ruleAllows(res('get', 'pods', { name: 'a' }), r));
    assert.ok(!ruleAllows(res('get', 'pods', { name: 'b' }), r));
    assert.ok(!ruleAllows(res('list', 'pods'), r), 'a list has no name: resourceNames do not match it');
    assert.ok(ruleAllows(res('get', 'pods', { subresource: 'log', name: 'a' }), r));
    assert.ok(!ruleAllows(res('get', 'pods', { subresource: 'exec', name: 'a' }), r));
    assert.ok(ruleAllows(res('update', 'deployments', { subresource: 'scale', apiGroup: 'apps' }), { verbs: ['*'], apiGroups: ['*'], resources: ['*/scale'] }));
    assert.ok(!ruleAllows(res('update', 'deployments', { apiGroup: 'apps' }), { verbs: ['*'], apiGroups: ['*'], resources: ['*/scale'] }));
    assert.ok(!ruleAllows(res('get', 'pods', { apiGroup: 'apps' }), { verbs: ['get'], apiGroups: [''], resources: ['pods'] }));
  });

  it('matches non-resource URLs exactly or by a trailing *', () => {
    const r: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    assert.ok(ruleAllows(url('get', '/healthz'), r));
    assert.ok(!ruleAllows(url('get', '/healthz/etcd'), r));
    assert.ok(ruleAllows(url('get', '/apis/apps/v1'), r));
    assert.ok(!ruleAllows(url('post', '/apis/apps'), r));
    assert.ok(!ruleAllows(res('get', 'pods'), r), 'a URL rule never grants a resource');
  });

  it('covers: broken down, */subresource and resourceNames as upstream', () => {
    assert.ok(
      covers([{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'], resourceNames: ['x'] }])
        .covered,
    );
    const partial = covers(
      [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
      [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods', 'pods/log'] }],
    );
    assert.deepEqual(partial.missing, [
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods/log'], verbs: ['list'] },
    ]);
    assert.ok(covers([{ verbs: ['get'], apiGroups: [''], resources: ['*/log'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods/log'] }]).covered);
    assert.ok(
      !covers([{ verbs: ['get'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] }], [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }])
        .covered,
    );
    assert.ok(covers([{ verbs: ['get'], nonResourceURLs: ['/apis/*'] }], [{ verbs: ['get'], nonResourceURLs: ['/apis/apps'] }]).covered);
  });
});

function fixture(): { cache: RbacCache; authorizer: RbacAuthorizer; resolver: RbacRuleResolver } {
  const cache = new RbacCache();
  cache.upsert('ClusterRole', { metadata: { name: 'reader' }, rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] }] });
  cache.upsert('Role', { metadata: { name: 'sec', namespace: 'a' }, rules: [{ verbs: ['get'], apiGroups: [''], resources: ['secrets'] }] });
  cache.upsert('ClusterRoleBinding', {
    metadata: { name: 'devs-read' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'reader' },
    subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'devs' }],
  });
  cache.upsert('RoleBinding', {
    metadata: { name: 'sa-sec', namespace: 'a' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'sec' },
    subjects: [{ kind: 'ServiceAccount', name: 'ci' }],
  });
  cache.upsert('RoleBinding', {
    metadata: { name: 'dangling', namespace: 'a' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'gone' },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'alice' }],
  });
  const resolver = new RbacRuleResolver(cache);
  return { cache, resolver, authorizer: new RbacAuthorizer(resolver) };
}

describe('RBAC authorizer', () => {
  it('allows through a group ClusterRoleBinding and names it in the reason', () => {
    const { authorizer } = fixture();
    const r = authorizer.authorize({ name: 'alice', groups: ['devs'] }, res('list', 'configmaps', { namespace: 'b' }));
    assert.deepEqual(r, { decision: 'allow', reason: 'RBAC: allowed by ClusterRoleBinding "devs-read" of ClusterRole "reader" to Group "devs"' });
  });

  it('a ServiceAccount subject without a namespace is the binding namespace account', () => {
    const { authorizer } = fixture();
    const sa = { name: 'system:serviceaccount:a:ci', groups: ['system:serviceaccounts'] };
    assert.equal(authorizer.authorize(sa, res('get', 'secrets', { namespace: 'a' })).decision, 'allow');
    assert.equal(authorizer.authorize(sa, res('get', 'secrets', { namespace: 'b' })).decision, 'no-opinion');
    assert.equal(authorizer.authorize({ name: 'system:serviceaccount:b:ci', groups: [] }, res('get', 'secrets', { namespace: 'a' })).decision, 'no-opinion');
  });

  it('reports a binding to a missing role as the reason of a denial', () => {
    const { authorizer } = fixture();
    assert.deepEqual(authorizer.authorize({ name: 'alice', groups: [] }, res('get', 'secrets', { namespace: 'a' })), {
      decision: 'no-opinion',
      reason: 'RBAC: role.rbac.authorization.k8s.io "gone" not found',
    });
  });

  it('sees deletions and replaced bindings', () => {
    const { cache, authorizer } = fixture();
    const alice = { name: 'alice', groups: ['devs'] };
    cache.upsert('ClusterRoleBinding', {
      metadata: { name: 'devs-read' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'reader' },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: 'ops' }],
    });
    assert.equal(authorizer.authorize(alice, res('list', 'configmaps')).decision, 'no-opinion');
    cache.replace('ClusterRoleBinding', []);
    assert.equal(authorizer.authorize({ name: 'bob', groups: ['ops'] }, res('list', 'configmaps')).decision, 'no-opinion');
  });
});

describe('escalation', () => {
  it('refuses rules the user does not hold, with upstream message', () => {
    const { resolver } = fixture();
    const why = confirmNoEscalation(resolver, { name: 'alice', groups: ['devs'] }, 'b', [
      { verbs: ['get', 'list'], apiGroups: [''], resources: ['configmaps'] },
      { verbs: ['get', 'delete'], apiGroups: [''], resources: ['secrets'] },
    ]);
    assert.equal(
      why,
      'user "alice" (groups=["devs"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    );
    assert.equal(
      confirmNoEscalation(resolver, { name: 'alice', groups: ['devs'] }, 'b', [{ verbs: ['get'], apiGroups: [''], resources: ['configmaps'] }]),
      undefined,
    );
  });
});

describe('bootstrap reconciliation', () => {
  it('adds missing rules and labels, keeps what a user added', () => {
    const existing = {
      metadata: { name: 'r', labels: { mine: 'x' } },
      rules: [{ verbs: ['get'], apiGroups: ['example.com'], resources: ['things'] }],
    };
    const expected = {
      metadata: { name: 'r', labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
      rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }],
    };
    const out = reconcileClusterRole(existing, expected)!;
    assert.deepEqual(out.metadata?.labels, { 'kubernetes.io/bootstrapping': 'rbac-defaults', mine: 'x' });
    assert.deepEqual(out.rules, [
      { verbs: ['get'], apiGroups: ['example.com'], resources: ['things'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'] },
    ]);
    assert.equal(reconcileClusterRole(out, expected), undefined);
  });
});
