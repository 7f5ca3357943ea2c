// RBAC through the raw API: the access reviews (SubjectAccessReview, LocalSubjectAccessReview,
// SelfSubjectRulesReview) and their bad input, the public paths under RBAC, the decisions metric,
// AlwaysDeny, and a bootstrap role marked autoupdate=false surviving a restart.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

interface Review {
  status: Record<string, unknown>;
  message?: string;
}
interface Role {
  metadata: { annotations: Record<string, string> };
  rules: { verbs: string[]; nonResourceURLs: string[] }[];
}

const TOKENS = new Map([['alice-token', { name: 'alice', groups: ['system:authenticated'] }]]);

async function post(raw: RawClient, path: string, body: unknown, token?: string): Promise<{ status: number; body: Review }> {
  const r = await raw.request({
    method: 'POST',
    path,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: r.json() };
}

describe('RBAC API', () => {
  let server: TestServer;
  let admin: RawClient;
  let anon: RawClient;

  before(async () => {
    server = await startTestServer({ storage: 'memory', authorizationModes: ['RBAC'], tokens: TOKENS });
    admin = new RawClient(server.url, adminCredentials(server.dataDir));
    anon = new RawClient(server.url, { ca: adminCredentials(server.dataDir).ca });
  });
  after(async () => {
    admin?.close();
    anon?.close();
    await server?.stop();
  });

  it('SubjectAccessReview answers for another user, with the reason', async () => {
    const sar = (user: string, groups: string[]) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user, groups, resourceAttributes: { verb: 'list', resource: 'configmaps', namespace: 'default' } },
    });
    const yes = await post(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar('root', ['system:masters']));
    assert.equal(yes.status, 201);
    // system:masters is allowed before RBAC is asked, without a reason (upstream's privileged-group authorizer).
    assert.deepEqual(yes.body.status, { allowed: true });
    const no = await post(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', sar('alice', []));
    assert.equal(no.status, 201);
    assert.deepEqual(no.body.status, { allowed: false });
    const basic = await post(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: 'carol',
        groups: ['system:authenticated'],
        resourceAttributes: { verb: 'create', group: 'authorization.k8s.io', resource: 'selfsubjectrulesreviews' },
      },
    });
    assert.deepEqual(basic.body.status, {
      allowed: true,
      reason: 'RBAC: allowed by ClusterRoleBinding "system:basic-user" of ClusterRole "system:basic-user" to Group "system:authenticated"',
    });
  });

  it('refuses bad reviews with upstream Status errors', async () => {
    const bad = await post(admin, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {},
    });
    assert.equal(bad.status, 422);
    assert.equal(
      bad.body.message,
      'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]',
    );
    const local = await post(admin, '/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'LocalSubjectAccessReview',
      spec: { user: 'alice', resourceAttributes: { verb: 'get', resource: 'pods', namespace: 'other' } },
    });
    assert.equal(local.status, 400);
    assert.equal(local.body.message, 'spec.resourceAttributes.namespace must match namespace: default');
    const get = await admin.request({ path: '/apis/authorization.k8s.io/v1/subjectaccessreviews' });
    assert.equal(get.status, 405);
    const garbage = await admin.request({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews',
      headers: { 'content-type': 'application/json' },
      body: '{"spec":',
    });
    assert.equal(garbage.status, 400);
    const noNs = await post(admin, '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: {},
    });
    assert.equal(noNs.status, 400);
    assert.equal(noNs.body.message, 'no namespace on request');
  });

  it('keeps the public paths open to anyone and discovery to any authenticated user', async () => {
    for (const p of ['/healthz', '/livez', '/readyz', '/version']) assert.equal((await anon.request({ path: p })).status, 200, p);
    const apis = await anon.request({ path: '/apis', headers: { authorization: 'Bearer alice-token' } });
    assert.equal(apis.status, 200);
    const gv = await anon.request({ path: '/apis/rbac.authorization.k8s.io/v1', headers: { authorization: 'Bearer alice-token' } });
    assert.equal(gv.status, 200);
    const metrics = await anon.request({ path: '/metrics', headers: { authorization: 'Bearer alice-token' } });
    assert.equal(metrics.status, 403);
    assert.equal(metrics.json().message, 'forbidden: User "alice" cannot get path "/metrics"');
  });

  it('counts decisions in apiserver_authorization_decisions_total', async () => {
    const text = (await admin.request({ path: '/metrics' })).text();
    assert.match(text, /apiserver_authorization_decisions_total\{type="RBAC",name="rbac",decision="allowed"\} [1-9]/);
  });
});

describe('RBAC bootstrap policy across restarts', () => {
  it('leaves a default role marked autoupdate=false as the user left it', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'kplane-rbac-restart-'));
    try {
      let server = await startTestServer({ storage: 'sqlite', dataDir, authorizationModes: ['RBAC'] });
      let raw = new RawClient(server.url, adminCredentials(dataDir));
      const path = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:discovery';
      const role = (await raw.request({ path })).json<Role>();
      role.metadata.annotations['rbac.authorization.kubernetes.io/autoupdate'] = 'false';
      role.rules = [{ verbs: ['get'], nonResourceURLs: ['/version'] }];
      const put = await raw.request({ method: 'PUT', path, headers: { 'content-type': 'application/json' }, body: JSON.stringify(role) });
      assert.equal(put.status, 200);
      const view = '/apis/rbac.authorization.k8s.io/v1/clusterroles/system:public-info-viewer';
      const viewer = (await raw.request({ path: view })).json<Role>();
      viewer.rules = [{ verbs: ['get'], nonResourceURLs: ['/healthz'] }];
      assert.equal(
        (await raw.request({ method: 'PUT', path: view, headers: { 'content-type': 'application/json' }, body: JSON.stringify(viewer) })).status,
        200,
      );
      raw.close();
      await server.stop();
      server = await startTestServer({ storage: 'sqlite', dataDir, authorizationModes: ['RBAC'] });
      raw = new RawClient(server.url, adminCredentials(dataDir));
      assert.deepEqual((await raw.request({ path })).json<Role>().rules, [{ verbs: ['get'], nonResourceURLs: ['/version'] }]);
      // autoupdate=true: what the user removed is put back.
      const back = (await raw.request({ path: view })).json<Role>().rules as { nonResourceURLs: string[] }[];
      assert.ok(back.some((r) => r.nonResourceURLs.includes('/livez')));
      raw.close();
      await server.stop();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('AlwaysDeny', () => {
  it('refuses everyone but system:masters', async () => {
    const server = await startTestServer({ storage: 'memory', authorizationModes: ['AlwaysDeny'], tokens: TOKENS });
    const raw = new RawClient(server.url, { ca: adminCredentials(server.dataDir).ca });
    const admin = new RawClient(server.url, adminCredentials(server.dataDir));
    try {
      const r = await raw.request({ path: '/api/v1/namespaces/default/configmaps', headers: { authorization: 'Bearer alice-token' } });
      assert.equal(r.status, 403);
      assert.equal(
        r.json().message,
        'configmaps is forbidden: User "alice" cannot list resource "configmaps" in API group "" in the namespace "default": Everything is forbidden.',
      );
      assert.equal((await admin.request({ path: '/api/v1/namespaces/default/configmaps' })).status, 200);
    } finally {
      raw.close();
      admin.close();
      await server.stop();
    }
  });
});
