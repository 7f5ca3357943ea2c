// API aggregation through real clients: a second kplane (serving wardle.example.com/v1alpha1
// flunders as a CRD) behind an APIService of the first. kubectl 1.20 and 1.33 and client-node use
// the group through the first server (discovery, get, apply, get -w, explain); the APIService is
// validated as upstream's; when the backend stops, the APIService turns Available=False with
// upstream's reason, its paths answer 503 and everything else keeps working.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { apiRegistration, defaultModules } from '../../src/controlplane/modules.js';
import { ensureFrontProxyPki } from '../../src/server/certs.js';
import { crdObject, waitServed } from '../support/crd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient, type KubeStatus } from '../support/https.js';
import { KUBECTLS, kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools } from '../support/tools.js';
import { Background } from '../support/background.js';

ensureTools();

const GROUP = 'wardle.example.com';
const VERSION = 'v1alpha1';
const NAME = `${VERSION}.${GROUP}`;
const APISERVICES = '/apis/apiregistration.k8s.io/v1/apiservices';

const apiService = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  apiVersion: 'apiregistration.k8s.io/v1',
  kind: 'APIService',
  metadata: { name: NAME },
  spec: {
    group: GROUP,
    version: VERSION,
    service: { namespace: 'wardle', name: 'api' },
    insecureSkipTLSVerify: true,
    groupPriorityMinimum: 1000,
    versionPriority: 15,
    ...extra,
  },
});

const flunder = (name: string, reference: string): string =>
  `apiVersion: ${GROUP}/${VERSION}\nkind: Flunder\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n  reference: ${reference}\n`;

describe('API aggregation: an APIService backed by another kplane', { concurrency: false, timeout: 240_000 }, () => {
  let frontDir = '';
  let dir = '';
  let backend: TestServer | undefined;
  let front: TestServer | undefined;
  let raw: RawClient;
  let backendRaw: RawClient;

  before(async () => {
    frontDir = await mkdtemp(join(tmpdir(), 'kplane-agg-front-'));
    dir = await mkdtemp(join(tmpdir(), 'kplane-agg-kubectl-'));
    // The front's front-proxy CA exists before either server, so that the backend can trust it.
    const frontProxy = await ensureFrontProxyPki(frontDir);
    // The backend trusts the front's front-proxy client for the X-Remote-* headers and decides with RBAC.
    backend = await startTestServer({
      storage: 'memory',
      requestHeader: { clientCA: frontProxy.caCertPem, allowedNames: ['front-proxy-client'] },
      authorizationModes: ['RBAC'],
    });
    backendRaw = new RawClient(backend.url, adminCredentials(backend.dataDir));
    const crd = crdObject({
      group: GROUP,
      version: VERSION,
      plural: 'flunders',
      singular: 'flunder',
      kind: 'Flunder',
      spec: {
        type: 'object',
        description: 'What a flunder refers to.',
        properties: { reference: { type: 'string', description: 'The name of another flunder.' } },
      },
    });
    const created = await backendRaw.request({
      method: 'POST',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      body: JSON.stringify(crd),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(created.status, 201, created.text());
    await waitServed(backendRaw, `/apis/${GROUP}/${VERSION}/flunders`);
    front = await startTestServer({
      storage: 'memory',
      dataDir: frontDir,
      apis: [...defaultModules(), apiRegistration()],
      aggregation: { serviceAddresses: [`wardle/api=127.0.0.1:${backend.cp.port}`], availabilityCheckIntervalMs: 500 },
    });
    raw = new RawClient(front.url, adminCredentials(front.dataDir));
  });

  after(async () => {
    raw?.close();
    backendRaw?.close();
    await front?.stop();
    await backend?.stop();
    if (frontDir) await rm(frontDir, { recursive: true, force: true });
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('refuses a garbage APIService with 422 and upstream field paths', async () => {
    const bad = {
      apiVersion: 'apiregistration.k8s.io/v1',
      kind: 'APIService',
      metadata: { name: 'v1.wrong.example.com' },
      spec: { group: 'Bad_Group', version: '1x', groupPriorityMinimum: 0, versionPriority: 5000, caBundle: 'Zm9v' },
    };
    const r = await raw.request({ method: 'POST', path: APISERVICES, body: JSON.stringify(bad), headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 422, r.text());
    const st = r.json<KubeStatus>();
    assert.equal(st.reason, 'Invalid');
    const fields = (st.details?.causes ?? []).map((c) => c.field);
    assert.deepEqual(fields, ['metadata.name', 'spec.group', 'spec.version', 'spec.groupPriorityMinimum', 'spec.versionPriority', 'spec.caBundle']);
    assert.match(st.message ?? '', /spec\.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000/);
    assert.match(st.message ?? '', /spec\.caBundle: Invalid value: "3 bytes": local APIServices may not have a caBundle/);
    assert.match(st.message ?? '', /metadata\.name: Invalid value: "v1\.wrong\.example\.com": must be `spec\.version\+"\."\+spec\.group`: "1x\.Bad_Group"/);

    const both = apiService({ caBundle: 'Zm9v' });
    const r2 = await raw.request({ method: 'POST', path: APISERVICES, body: JSON.stringify(both), headers: { 'content-type': 'application/json' } });
    assert.equal(r2.status, 422, r2.text());
    assert.match(r2.json<KubeStatus>().message ?? '', /spec\.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present/);
  });

  it('registers a local APIService for each group/version served here, Available as Local', async () => {
    const local = await eventually(10_000, 'v1.apps-like local APIServices', async () => {
      const r = await raw.request({ path: `${APISERVICES}/v1.rbac.authorization.k8s.io` });
      if (r.status !== 200) return undefined;
      const o = r.json<{ spec: Record<string, unknown>; status?: { conditions?: { type: string; status: string; reason?: string }[] } }>();
      return o.status?.conditions?.length ? o : undefined;
    });
    assert.deepEqual(local.spec, { group: 'rbac.authorization.k8s.io', version: 'v1', groupPriorityMinimum: 17000, versionPriority: 15 });
    assert.deepEqual(
      local.status?.conditions?.map((c) => [c.type, c.status, c.reason]),
      [['Available', 'True', 'Local']],
    );
    const core = await raw.request({ path: `${APISERVICES}/v1.` });
    assert.equal(core.status, 200, core.text());
  });

  it('proxies the group once the APIService is Available, listed in /apis by its priority', async () => {
    const r = await raw.request({ method: 'POST', path: APISERVICES, body: JSON.stringify(apiService()), headers: { 'content-type': 'application/json' } });
    assert.equal(r.status, 201, r.text());
    await eventually(15_000, 'the APIService Available', async () => {
      const o = (await raw.request({ path: `${APISERVICES}/${NAME}` })).json<{
        status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      }>();
      const c = o.status?.conditions?.find((x) => x.type === 'Available');
      return c?.status === 'True' && c.reason === 'Passed' && c.message === 'all checks passed' ? c : undefined;
    });
    const groups = (await raw.request({ path: '/apis' })).json<{ groups: { name: string; preferredVersion: { version: string } }[] }>().groups;
    const wardle = groups.find((g) => g.name === GROUP);
    assert.ok(wardle, 'wardle.example.com in /apis');
    assert.equal(wardle.preferredVersion.version, VERSION);
    // groupPriorityMinimum 1000 sorts it after the built-in groups (all above 15000).
    assert.equal(groups.at(-1)?.name, GROUP);
    const list = await raw.request({ path: `/apis/${GROUP}/${VERSION}` });
    assert.equal(list.status, 200, list.text());
    assert.deepEqual(
      list.json<{ resources: { name: string }[] }>().resources.map((x) => x.name),
      ['flunders'],
    );
    // Aggregated discovery has it too.
    const agg = await raw.request({ path: '/apis', headers: { accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList' } });
    const items = agg.json<{ items: { metadata: { name: string }; versions: { version: string; resources: { resource: string }[] }[] }[] }>().items;
    const item = items.find((i) => i.metadata.name === GROUP);
    assert.deepEqual(
      item?.versions.map((v) => [v.version, v.resources.map((x) => x.resource)]),
      [[VERSION, ['flunders']]],
    );
  });

  it('kubectl get apiservices shows SERVICE and AVAILABLE as upstream', async () => {
    const kc = kubectlSession(KUBECTLS[1].bin, front!.kubeconfig, join(dir, 'apiservices'));
    const out = await kc.ok(['get', 'apiservices', NAME, 'v1.']);
    assert.match(out, /^NAME\s+SERVICE\s+AVAILABLE\s+AGE\n/);
    assert.match(out, /\nv1\.\s+Local\s+True\s+\S+\n/);
    assert.match(out, new RegExp(`\\n${NAME.replace(/\./g, '\\.')}\\s+wardle/api\\s+True\\s+\\S+\\n`));
  });

  for (const kubectl of KUBECTLS) {
    it(`kubectl ${kubectl.name}: api-resources, apply, get, get -w and explain through the aggregator`, async () => {
      const kc = kubectlSession(kubectl.bin, front!.kubeconfig, join(dir, kubectl.name));
      const resources = await kc.ok(['api-resources', `--api-group=${GROUP}`]);
      assert.match(resources, new RegExp(`flunders\\s+${GROUP.replace(/\./g, '\\.')}/${VERSION}\\s+true\\s+Flunder`));
      const name = `f-${kubectl.name.replace('.', '-')}`;
      assert.match(
        await kc.ok(['apply', '-f', await kc.file(`${name}.yaml`, flunder(name, 'one'))]),
        new RegExp(`flunder\\.${GROUP.replace(/\./g, '\\.')}/${name} created`),
      );
      assert.match(await kc.ok(['apply', '-f', await kc.file(`${name}.yaml`, flunder(name, 'two'))]), /configured/);
      assert.equal(await kc.ok(['get', 'flunders', name, '-o', 'jsonpath={.spec.reference}']), 'two');
      // The object lives in the backend.
      const inBackend = await backendRaw.request({ path: `/apis/${GROUP}/${VERSION}/namespaces/default/flunders/${name}` });
      assert.equal(inBackend.status, 200, inBackend.text());

      const w = new Background(kubectl.bin, ['get', 'flunders', '-w', '--output-watch-events'], kc.env);
      try {
        await w.waitFor((b) => new RegExp(`ADDED\\s+${name}\\s`).test(b.stdout), `ADDED ${name}`);
        await kc.ok(['apply', '-f', await kc.file(`${name}-w.yaml`, flunder(`${name}-w`, 'three'))]);
        await w.waitFor((b) => new RegExp(`ADDED\\s+${name}-w\\s`).test(b.stdout), `ADDED ${name}-w`);
        await kc.ok(['delete', 'flunder', `${name}-w`]);
        await w.waitFor((b) => new RegExp(`DELETED\\s+${name}-w\\s`).test(b.stdout), `DELETED ${name}-w`);
        assert.equal(w.code, undefined, 'the watch is still running');
      } finally {
        await w.stop();
      }

      const explained = await kc.ok(['explain', 'flunders.spec.reference']);
      assert.match(explained, /The name of another flunder\./);
    });
  }

  it('the backend sees the user in the front-proxy headers, never headers the client sent', async () => {
    // The front allows impersonation (AlwaysAllow); the backend's RBAC refuses jane by name.
    const kc = kubectlSession(KUBECTLS[1].bin, front!.kubeconfig, join(dir, 'users'));
    const denied = await kc.k(['get', 'flunders', '--as', 'jane', '--as-group', 'devs']);
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /flunders\.wardle\.example\.com is forbidden: User "jane" cannot list resource "flunders" in API group "wardle\.example\.com" in the namespace "default"/,
    );
    // X-Remote-User from the client is dropped: the backend sees the admin (system:masters).
    const r = await raw.request({
      path: `/apis/${GROUP}/${VERSION}/namespaces/default/flunders`,
      headers: { 'X-Remote-User': 'jane', 'X-Remote-Group': 'nobody' },
    });
    assert.equal(r.status, 200, r.text());
    // The backend's Content-Length is passed on (HTTP/1.1 here): the body is not framed chunked.
    assert.equal(r.headers['content-length'], String(Buffer.byteLength(r.text())));
    assert.equal(r.headers['transfer-encoding'], undefined);
    // What extension API servers read for delegated authentication.
    const cm = (await raw.request({ path: '/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication' })).json<{
      data: Record<string, string>;
    }>();
    assert.deepEqual(Object.keys(cm.data).sort(), [
      'client-ca-file',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-uid-headers',
      'requestheader-username-headers',
    ]);
    assert.equal(cm.data['requestheader-allowed-names'], '["front-proxy-client"]');
    assert.equal(cm.data['requestheader-username-headers'], '["X-Remote-User"]');
    assert.match(cm.data['requestheader-client-ca-file']!, /^-----BEGIN CERTIFICATE-----/);
  });

  it('client-node lists and reads flunders through the aggregator', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(front!.kubeconfig);
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    const list = (await api.listNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: 'flunders' })) as {
      items: { metadata: { name: string } }[];
    };
    assert.ok(
      list.items.some((i) => i.metadata.name === 'f-1-33'),
      JSON.stringify(list.items.map((i) => i.metadata.name)),
    );
    const one = (await api.getNamespacedCustomObject({ group: GROUP, version: VERSION, namespace: 'default', plural: 'flunders', name: 'f-1-33' })) as {
      spec: { reference: string };
    };
    assert.equal(one.spec.reference, 'two');
  });

  it('backend stopped: Available=False (FailedDiscoveryCheck), 503 on its paths, the rest unaffected', async () => {
    const port = backend!.cp.port;
    backendRaw.close();
    await backend!.stop();
    backend = undefined;
    const c = await eventually(15_000, 'the APIService unavailable', async () => {
      const o = (await raw.request({ path: `${APISERVICES}/${NAME}` })).json<{
        status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
      }>();
      const cond = o.status?.conditions?.find((x) => x.type === 'Available');
      return cond?.status === 'False' ? cond : undefined;
    });
    assert.equal(c.reason, 'FailedDiscoveryCheck');
    assert.equal(
      c.message,
      `failing or missing response from https://127.0.0.1:${port}/apis/${GROUP}/${VERSION}: Get "https://127.0.0.1:${port}/apis/${GROUP}/${VERSION}": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
    const r = await raw.request({ path: `/apis/${GROUP}/${VERSION}/namespaces/default/flunders` });
    assert.equal(r.status, 503);
    assert.equal(r.headers['content-type'], 'text/plain; charset=utf-8');
    assert.equal(r.text(), 'service unavailable\n');
    const ns = await raw.request({ path: '/api/v1/namespaces/default' });
    assert.equal(ns.status, 200, ns.text());
    const metrics = (await raw.request({ path: '/metrics' })).text();
    assert.match(metrics, new RegExp(`^aggregator_unavailable_apiservice\\{name="${NAME.replace(/\./g, '\\.')}"\\} 1$`, 'm'));
    const kc = kubectlSession(KUBECTLS[1].bin, front!.kubeconfig, join(dir, 'down'));
    // Aggregated discovery marks the group/version Stale: kubectl no longer finds the resource.
    const get = await kc.k(['get', 'flunders']);
    assert.notEqual(get.code, 0);
    assert.match(get.stderr, /the server doesn't have a resource type "flunders"|the server is currently unable to handle the request/);
    assert.match(await kc.ok(['get', 'apiservice', NAME]), /False \(FailedDiscoveryCheck\)/);
  });
});
