// KEP-0007 step 2, the Feature API as users meet it: two API servers on one etcd with different
// --feature-gates announce kplane's features and report their uses (two uses, two values, uses
// disagree); kubectl 1.20 and 1.33 list and describe them; a third-party component under a
// ServiceAccount announces its own feature and reports its use through @kubernetes/client-node;
// bad input to the Feature and to its uses is answered with Status errors and field paths.
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { newKubeFeatureGate, APIServerIdentity, WatchList } from '../../src/featuregate/index.js';
import { startEtcd, type RunningEtcd } from '../support/etcd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { KUBECTLS, kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tools } from '../support/tools.js';

const FEATURES = '/apis/features.kplane.io/v1alpha1';
const gates = (watchList: boolean): ReturnType<typeof newKubeFeatureGate> => {
  const g = newKubeFeatureGate();
  g.setFromMap({ [APIServerIdentity]: false, [WatchList]: watchList });
  return g;
};

interface Use {
  component: string;
  identity: string;
  version?: string;
  value: string;
  reportTime?: string;
}
interface Feature {
  metadata: { name: string; namespace: string; managedFields?: { manager: string }[] };
  status?: { stability?: string; state?: string; uses?: Use[]; conditions?: { type: string; status: string }[] };
}

describe('the Feature API', { timeout: 300_000, concurrency: false }, () => {
  let etcd: RunningEtcd;
  let a: TestServer;
  let b: TestServer;
  let raw: RawClient;
  let dir: string;
  let admin: KubectlSession;

  const post = (path: string, body: string | object, method = 'POST') =>
    raw.request({ method, path, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  before(async () => {
    etcd = await startEtcd();
    // A misconfigured HA pair: the same storage, WatchList on one and off on the other.
    a = await startTestServer({ storage: { etcd: etcd.endpoint }, featureGates: gates(true), reportFeatures: true, authorizationModes: ['RBAC'] });
    b = await startTestServer({ storage: { etcd: etcd.endpoint }, featureGates: gates(false), reportFeatures: true, authorizationModes: ['RBAC'] });
    raw = new RawClient(a.url, adminCredentials(a.dataDir));
    dir = await mkdtemp(join(tmpdir(), 'kplane-features-'));
    admin = kubectlSession(tools.kubectl, a.kubeconfig, dir);
  });
  after(async () => {
    raw?.agent.destroy();
    await b?.stop();
    await a?.stop();
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('announces every feature once and shows each server’s use: two values, uses disagree', async () => {
    const watchList = await eventually(30_000, 'two uses of WatchList', async () => {
      const r = await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/WatchList` });
      if (r.status !== 200) return undefined;
      const f = r.json<Feature>();
      return (f.status?.uses?.length ?? 0) >= 2 ? f : undefined;
    });
    const uses = watchList.status!.uses!;
    assert.equal(uses.length, 2);
    assert.deepEqual(
      uses.map((u) => u.component),
      ['kube-apiserver', 'kube-apiserver'],
    );
    assert.deepEqual(uses.map((u) => u.value).sort(), ['Disabled', 'Enabled']);
    assert.notEqual(uses[0]!.identity, uses[1]!.identity);
    assert.match(uses[0]!.identity, /^apiserver-[a-z2-7]{26}_[0-9a-f-]{36}$/);
    assert.match(uses[0]!.version ?? '', /^v1\.33\.0\+kplane\./);
    assert.equal(watchList.status!.stability, 'Beta');
    assert.equal(watchList.status!.conditions?.find((c) => c.type === 'UsesAgree')?.status, 'False');
    // No managedFields entry per reporter: only the announcer's create and status writes.
    const managers = (watchList.metadata.managedFields ?? []).map((m) => m.manager);
    assert.ok(
      managers.every((m) => m === 'kube-apiserver'),
      managers.join(','),
    );
    assert.ok(managers.length <= 2, managers.join(','));
    const list = (await raw.request({ path: `${FEATURES}/features` })).json<{ items: Feature[] }>();
    const names = list.items.map((f) => f.metadata.name);
    for (const n of ['APIResponseCompression', 'APIServerIdentity', 'ConsistentListFromCache', 'WatchList']) assert.ok(names.includes(n), n);
    assert.ok(!names.includes('AllAlpha') && !names.includes('AllBeta'));
    const compression = list.items.find((f) => f.metadata.name === 'APIResponseCompression')!;
    await eventually(30_000, 'both uses of APIResponseCompression', async () => {
      const f = (await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/APIResponseCompression` })).json<Feature>();
      return f.status?.uses?.length === 2 ? true : undefined;
    });
    assert.equal(compression.metadata.namespace, 'kube-system');
  });

  it('48 components reporting on one Feature at once: each answered 201, none refused by a conflict', async () => {
    // Reports of one object are folded together while a write of it is in flight; one write each
    // would make them race on the object and the losers run out of retries (409).
    const path = `${FEATURES}/namespaces/kube-system/features/KplaneCELCostLimits/uses`;
    const burst = new RawClient(a.url, adminCredentials(a.dataDir), { maxSockets: 48 }); // all 48 in flight at once
    const answers = await Promise.all(
      Array.from({ length: 48 }, (_, i) =>
        burst.request({
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ component: `burst-${i}`, identity: `burst-${i}-0`, version: '1.0.0', value: 'Enabled' }),
        }),
      ),
    ).finally(() => burst.agent.destroy());
    assert.deepEqual(
      answers.map((r) => r.status),
      answers.map(() => 201),
      answers.find((r) => r.status !== 201)?.text(),
    );
    const f = (await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/KplaneCELCostLimits` })).json<Feature>();
    assert.equal(f.status!.uses!.filter((u) => u.component.startsWith('burst-')).length, 48);
    assert.equal(f.metadata.managedFields?.some((m) => m.manager.startsWith('burst')) ?? false, false);
  });

  it('reporting again changes nothing (200, same resourceVersion), a new value replaces the entry', async () => {
    const before = (await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/WatchList` })).json<
      Feature & { metadata: { resourceVersion: string } }
    >();
    const mine = before.status!.uses![0]!;
    const again = await post(`${FEATURES}/namespaces/kube-system/features/WatchList/uses`, {
      component: mine.component,
      identity: mine.identity,
      version: mine.version,
      value: mine.value,
    });
    assert.equal(again.status, 200, again.text());
    assert.equal(again.json<Use>().reportTime, mine.reportTime);
    const after = (await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/WatchList` })).json<
      Feature & { metadata: { resourceVersion: string } }
    >();
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    const fresh = await post(`${FEATURES}/namespaces/kube-system/features/WatchList/uses`, {
      apiVersion: 'features.kplane.io/v1alpha1',
      kind: 'FeatureUse',
      component: 'test-probe',
      identity: 'probe-0',
      value: 'Enabled',
    });
    assert.equal(fresh.status, 201, fresh.text());
    const put = await post(
      `${FEATURES}/namespaces/kube-system/features/WatchList/uses`,
      { component: 'test-probe', identity: 'probe-0', value: 'Disabled' },
      'PUT',
    );
    assert.equal(put.status, 200, put.text());
    const f = (await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/WatchList` })).json<Feature>();
    assert.deepEqual(
      f.status!.uses!.filter((u) => u.component === 'test-probe').map((u) => u.value),
      ['Disabled'],
    );
  });

  for (const kubectl of KUBECTLS) {
    it(`kubectl ${kubectl.name}: get features -A and describe feature show states and uses`, async () => {
      const k = kubectlSession(kubectl.bin, a.kubeconfig, join(dir, kubectl.name));
      const table = await k.ok(['get', 'features', '-A']);
      const lines = table.trim().split('\n');
      assert.match(lines[0]!, /^NAMESPACE\s+NAME\s+STATE\s+INTENDED\s+SOURCE\s+STABILITY\s+USES AGREE\s+AGE$/);
      const row = lines.find((l) => /^kube-system\s+WatchList\s/.test(l));
      assert.ok(row, table);
      assert.match(row, /^kube-system\s+WatchList\s+(On|Off)\s+(Enabled|Disabled)\s+CommandLine\s+Beta\s+False\s+\S+$/);
      assert.match(table, /kube-system\s+APIServerIdentity\s+(On|Off)\s+(Enabled|Disabled)\s+CommandLine\s+Beta\s+True\s/);
      const described = await k.ok(['describe', 'feature', '-n', 'kube-system', 'WatchList']);
      assert.match(described, /Kind:\s+Feature/);
      assert.match(described, /Uses:/);
      assert.equal((described.match(/Component:\s+kube-apiserver/g) ?? []).length, 2, described);
      assert.match(described, /Value:\s+Enabled/);
      assert.match(described, /Value:\s+Disabled/);
      assert.match(described, /Type:\s+UsesAgree/);
      const short = await k.ok(['get', 'feat', '-n', 'kube-system', 'WatchList', '-o', 'jsonpath={.status.stability}']);
      assert.equal(short, 'Beta');
    });
  }

  it('OpenAPI v2 and v3 and discovery describe Feature and its subresources', async () => {
    const disc = (await raw.request({ path: FEATURES })).json<{
      resources: { name: string; kind: string; verbs: string[]; namespaced: boolean; shortNames?: string[] }[];
    }>();
    const byName = new Map(disc.resources.map((r) => [r.name, r]));
    assert.equal(byName.get('features')?.kind, 'Feature');
    assert.deepEqual(byName.get('features')?.shortNames, ['feat']);
    assert.equal(byName.get('features/status')?.kind, 'Feature');
    assert.equal(byName.get('features/uses')?.kind, 'FeatureUse');
    assert.deepEqual(byName.get('features/uses')?.verbs, ['create', 'update']);
    const v3 = (await raw.request({ path: '/openapi/v3/apis/features.kplane.io/v1alpha1' })).json<{
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    }>();
    assert.ok(v3.paths['/apis/features.kplane.io/v1alpha1/namespaces/{namespace}/features/{name}/uses']?.['post']);
    assert.ok(v3.components.schemas['io.kplane.features.v1alpha1.FeatureUse']?.properties?.['identity']);
    assert.ok(v3.components.schemas['io.kplane.features.v1alpha1.FeatureStatus']?.properties?.['uses']);
    const v2 = (await raw.request({ path: '/openapi/v2', headers: { accept: 'application/json' } })).json<{
      definitions: Record<string, { 'x-kubernetes-group-version-kind'?: unknown[] }>;
      paths: Record<string, unknown>;
    }>();
    assert.deepEqual(v2.definitions['io.kplane.features.v1alpha1.Feature']?.['x-kubernetes-group-version-kind'], [
      { group: 'features.kplane.io', kind: 'Feature', version: 'v1alpha1' },
    ]);
    assert.ok(v2.paths['/apis/features.kplane.io/v1alpha1/namespaces/{namespace}/features/{name}/status']);
    const explained = await admin.ok(['explain', 'features.status.transition.tasks']);
    assert.match(explained, /progress/);
  });

  it('a third-party component under a ServiceAccount announces its feature and reports its use with client-node', async () => {
    await admin.ok(['create', 'namespace', 'acme']);
    await admin.ok(['create', 'serviceaccount', 'operator', '-n', 'acme']);
    // The reporter role in the component's own class (namespace) only.
    await admin.ok([
      'create',
      'rolebinding',
      'operator-features',
      '-n',
      'acme',
      '--clusterrole=system:kplane:feature-reporter',
      '--serviceaccount=acme:operator',
    ]);
    const token = (await admin.ok(['create', 'token', 'operator', '-n', 'acme'])).trim();
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'a', server: a.url, caData: Buffer.from(adminCredentials(a.dataDir).ca).toString('base64') }],
      users: [{ name: 'operator', token }],
      contexts: [{ name: 'a', cluster: 'a', user: 'operator', namespace: 'acme' }],
      currentContext: 'a',
    });
    const custom = kc.makeApiClient(k8s.CustomObjectsApi);
    await custom.createNamespacedCustomObject({
      group: 'features.kplane.io',
      version: 'v1alpha1',
      namespace: 'acme',
      plural: 'features',
      body: { apiVersion: 'features.kplane.io/v1alpha1', kind: 'Feature', metadata: { name: 'FancyReconcile' } },
    });
    const send = async (method: string, path: string, body: object): Promise<{ status: number; body: string }> => {
      const opts: import('node:https').RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const text = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = httpsRequest(
          new URL(a.url + path),
          { ...opts, method, headers: { ...(opts.headers ?? {}), 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
          (res) => {
            let out = '';
            res.setEncoding('utf8');
            res.on('data', (d: string) => (out += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out }));
          },
        );
        req.on('error', reject);
        req.end(text);
      });
    };
    const use = {
      apiVersion: 'features.kplane.io/v1alpha1',
      kind: 'FeatureUse',
      component: 'acme-operator',
      identity: 'acme-operator-7d9f',
      version: '2.1.0',
      value: 'Enabled',
    };
    const posted = await send('POST', `${FEATURES}/namespaces/acme/features/FancyReconcile/uses`, use);
    assert.equal(posted.status, 201, posted.body);
    const feature = (await custom.getNamespacedCustomObject({
      group: 'features.kplane.io',
      version: 'v1alpha1',
      namespace: 'acme',
      plural: 'features',
      name: 'FancyReconcile',
    })) as Feature;
    assert.deepEqual(
      feature.status?.uses?.map((u) => [u.component, u.identity, u.version, u.value]),
      [['acme-operator', 'acme-operator-7d9f', '2.1.0', 'Enabled']],
    );
    // Reporting is not the server flow's status, nor another class's uses.
    const status = await send('PUT', `${FEATURES}/namespaces/acme/features/FancyReconcile/status`, { ...feature, status: { state: 'On' } });
    assert.equal(status.status, 403, status.body);
    assert.match(status.body, /cannot update resource \\"features\/status\\" in API group \\"features.kplane.io\\" in the namespace \\"acme\\"/);
    const other = await send('POST', `${FEATURES}/namespaces/kube-system/features/WatchList/uses`, use);
    assert.equal(other.status, 403, other.body);
    // Admins read and change features; view and admin aggregate kplane's roles.
    type Role = { metadata: { labels: Record<string, string> }; rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    const role = async (name: string): Promise<Role> => JSON.parse(await admin.ok(['get', 'clusterrole', name, '-o', 'json'])) as Role;
    const viewRole = await role('system:kplane:aggregate-features-to-view');
    assert.equal(viewRole.metadata.labels['rbac.authorization.k8s.io/aggregate-to-view'], 'true');
    // Read-only: view sees features and their status, and may change nothing.
    assert.deepEqual(
      viewRole.rules.flatMap((r) => r.verbs),
      ['get', 'list', 'watch'],
    );
    const adminRole = await role('system:kplane:aggregate-features-to-admin');
    assert.equal(adminRole.metadata.labels['rbac.authorization.k8s.io/aggregate-to-admin'], 'true');
    // update (spec.desired turns a dynamic feature cluster-wide) stays cluster-admin's.
    assert.ok(
      adminRole.rules.some((r) => r.apiGroups.includes('features.kplane.io') && r.resources.includes('features') && r.verbs.includes('create')),
      JSON.stringify(adminRole.rules),
    );
    assert.ok(!adminRole.rules.some((r) => r.verbs.includes('update') || r.verbs.includes('patch')), JSON.stringify(adminRole.rules));
  });

  it('bad input to uses and to the Feature: Status errors with field paths, never a crash', async () => {
    const uses = `${FEATURES}/namespaces/kube-system/features/WatchList/uses`;
    const garbage = await post(uses, '{"component": ');
    assert.equal(garbage.status, 400, garbage.text());
    assert.equal(garbage.json()['kind'], 'Status');
    const notObject = await post(uses, '[1,2]');
    assert.equal(notObject.status, 400, notObject.text());
    const wrongType = await post(uses, { component: 'x', identity: 'y', value: true });
    assert.equal(wrongType.status, 400, wrongType.text());
    assert.match(wrongType.json<{ message: string }>().message, /json: cannot unmarshal bool into Go struct field FeatureUse.value of type string/);
    const missing = await post(uses, { value: 'Maybe', version: 'x'.repeat(65) });
    assert.equal(missing.status, 422, missing.text());
    const st = missing.json<{ reason: string; details: { kind: string; causes: { field: string; message: string }[] } }>();
    assert.equal(st.reason, 'Invalid');
    assert.equal(st.details.kind, 'FeatureUse');
    assert.deepEqual(
      st.details.causes.map((c) => c.field),
      ['component', 'identity', 'version', 'value'],
    );
    assert.match(missing.json<{ message: string }>().message, /value: Unsupported value: "Maybe": supported values: "Enabled", "Disabled"/);
    const wrongKind = await post(uses, { apiVersion: 'v1', kind: 'ConfigMap', component: 'x', identity: 'y', value: 'Enabled' });
    assert.equal(wrongKind.status, 400, wrongKind.text());
    const absent = await post(`${FEATURES}/namespaces/kube-system/features/NoSuchFeature/uses`, { component: 'x', identity: 'y', value: 'Enabled' });
    assert.equal(absent.status, 404, absent.text());
    assert.match(absent.json<{ message: string }>().message, /features.features.kplane.io "NoSuchFeature" not found/);
    const del = await raw.request({ method: 'DELETE', path: uses });
    assert.equal(del.status, 405, del.text());

    const badSpec = await post(`${FEATURES}/namespaces/kube-system/features`, {
      apiVersion: 'features.kplane.io/v1alpha1',
      kind: 'Feature',
      metadata: { name: 'Odd' },
      spec: { desired: 'Sometimes' },
    });
    assert.equal(badSpec.status, 422, badSpec.text());
    assert.match(badSpec.json<{ message: string }>().message, /spec.desired: Unsupported value: "Sometimes": supported values: "Enabled", "Disabled"/);
    const badName = await post(`${FEATURES}/namespaces/kube-system/features`, {
      apiVersion: 'features.kplane.io/v1alpha1',
      kind: 'Feature',
      metadata: { name: '..' },
    });
    assert.equal(badName.status, 422, badName.text());
    assert.match(badName.json<{ message: string }>().message, /metadata.name: Invalid value: "..": may not be '..'/);
    const current = (await raw.request({ path: `${FEATURES}/namespaces/kube-system/features/WatchList` })).json<Feature>();
    const badStatus = await post(
      `${FEATURES}/namespaces/kube-system/features/WatchList/status`,
      { ...current, status: { state: 'Sideways', uses: [{ component: 'x' }] } },
      'PUT',
    );
    assert.equal(badStatus.status, 422, badStatus.text());
    const causes = badStatus.json<{ details: { causes: { field: string }[] } }>().details.causes.map((c) => c.field);
    assert.deepEqual(causes, ['status.state', 'status.uses[0].identity', 'status.uses[0].value']);
    // status is not written through the object itself.
    const put = await post(`${FEATURES}/namespaces/kube-system/features/WatchList`, { ...current, status: { state: 'On', uses: [] } }, 'PUT');
    assert.equal(put.status, 200, put.text());
    assert.deepEqual(put.json<Feature>().status, current.status);
  });
});
