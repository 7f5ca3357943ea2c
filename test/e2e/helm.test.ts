// helm 4 (tools.helm, server-side apply by default) against kplane: a local chart, written to a
// temp dir, with a ConfigMap, a Secret, a CRD in crds/ and custom resources in templates.
// install, upgrade (changed values visible), rollback (previous values back), uninstall (objects
// gone, the CRD stays as helm leaves it), and `helm template | kubectl apply --server-side -f -`
// giving the same objects as the install did.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools, type RunResult } from '../support/tools.js';

ensureTools();

const FILES: Record<string, string> = {
  'Chart.yaml': 'apiVersion: v2\nname: demo\ndescription: kplane e2e chart\ntype: application\nversion: 0.1.0\nappVersion: "1.0"\n',
  'values.yaml': 'greeting: hello\npassword: s3cret\nreplicas: 1\ngizmos: [alpha, beta]\n',
  'crds/gizmos.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gizmos.helm.example.com
spec:
  group: helm.example.com
  scope: Namespaced
  names: {plural: gizmos, singular: gizmo, kind: Gizmo}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [message]
            properties:
              message: {type: string}
              replicas: {type: integer, minimum: 0}
              tags:
                type: array
                x-kubernetes-list-type: set
                items: {type: string}
          status:
            type: object
            properties:
              ready: {type: boolean}
`,
  'templates/configmap.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-config
  labels:
    app.kubernetes.io/name: {{ .Chart.Name }}
data:
  greeting: {{ .Values.greeting | quote }}
  replicas: {{ .Values.replicas | quote }}
`,
  'templates/secret.yaml': `apiVersion: v1
kind: Secret
metadata:
  name: {{ .Release.Name }}-secret
type: Opaque
data:
  password: {{ .Values.password | b64enc | quote }}
`,
  'templates/gizmos.yaml': `{{- range .Values.gizmos }}
---
apiVersion: helm.example.com/v1
kind: Gizmo
metadata:
  name: {{ $.Release.Name }}-{{ . }}
spec:
  message: {{ printf "%s from %s" $.Values.greeting . | quote }}
  replicas: {{ $.Values.replicas }}
  tags: [{{ . | quote }}, helm]
{{- end }}
`,
};

interface Obj {
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; managedFields?: { manager: string; operation: string }[] };
  data?: Record<string, string>;
  spec?: Record<string, unknown>;
}

describe('helm 4 with a chart holding configmaps, secrets, a CRD and custom resources', { concurrency: false, timeout: 85_000 }, () => {
  let server: TestServer;
  let raw: RawClient;
  let dir: string;
  let chart: string;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    dir = await mkdtemp(join(tmpdir(), 'kplane-helm-'));
    chart = join(dir, 'demo');
    for (const [name, text] of Object.entries(FILES)) {
      await mkdir(join(chart, name, '..'), { recursive: true });
      await writeFile(join(chart, name), text);
    }
    env = {
      KUBECONFIG: server.kubeconfig,
      HOME: dir,
      KUBECACHEDIR: join(dir, 'kcache'),
      HELM_CACHE_HOME: join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: join(dir, 'helm-config'),
      HELM_DATA_HOME: join(dir, 'helm-data'),
    };
  });
  after(async () => {
    raw?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const helm = (args: readonly string[]): Promise<RunResult> => run(tools.helm, args, { env, timeoutMs: 40_000 });
  const helmOk = async (args: readonly string[]): Promise<string> => {
    const r = await helm(args);
    assert.equal(r.code, 0, `helm ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  };
  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    const r = await run(tools.kubectl, args, { env, timeoutMs: 30_000, ...(input !== undefined ? { input } : {}) });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    return r.stdout;
  };
  const get = async (ns: string, kind: string, name: string): Promise<Obj> =>
    JSON.parse(await kubectl(['-n', ns, 'get', kind, name, '-o', 'json', '--show-managed-fields'])) as Obj;
  const status = async (path: string): Promise<number> => (await raw.request({ path })).status;
  const gizmoMessages = async (ns: string): Promise<Record<string, unknown>> => {
    const list = JSON.parse(await kubectl(['-n', ns, 'get', 'gizmos', '-o', 'json'])) as { items: Obj[] };
    return Object.fromEntries(list.items.map((i) => [i.metadata.name, i.spec?.['message']]));
  };
  let installed: { cm: Obj; secret: Obj; gizmos: Obj[] };

  it('install creates the CRD from crds/ and the templated objects (server-side apply)', async () => {
    const out = await helmOk(['install', 'demo', chart, '-n', 'helm-a', '--create-namespace', '--wait=watcher', '--timeout', '30s']);
    assert.match(out, /STATUS: deployed/);
    assert.match(out, /REVISION: 1/);
    const crd = JSON.parse(await kubectl(['get', 'crd', 'gizmos.helm.example.com', '-o', 'json'])) as {
      status: { conditions: { type: string; status: string }[] };
    };
    assert.ok(crd.status.conditions.some((c) => c.type === 'Established' && c.status === 'True'));
    const cm = await get('helm-a', 'configmap', 'demo-config');
    assert.deepEqual(cm.data, { greeting: 'hello', replicas: '1' });
    assert.equal(cm.metadata.labels?.['app.kubernetes.io/managed-by'], 'Helm');
    assert.equal(cm.metadata.annotations?.['meta.helm.sh/release-name'], 'demo');
    // helm 4 applies server-side, as the "helm" field manager.
    assert.deepEqual(
      cm.metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`),
      ['helm/Apply'],
    );
    const secret = await get('helm-a', 'secret', 'demo-secret');
    assert.equal(Buffer.from(secret.data!['password']!, 'base64').toString(), 's3cret');
    assert.deepEqual(await gizmoMessages('helm-a'), { 'demo-alpha': 'hello from alpha', 'demo-beta': 'hello from beta' });
    const alpha = await get('helm-a', 'gizmo', 'demo-alpha');
    assert.deepEqual(alpha.spec, { message: 'hello from alpha', replicas: 1, tags: ['alpha', 'helm'] });
    assert.deepEqual(
      alpha.metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`),
      ['helm/Apply'],
    );
    installed = { cm, secret, gizmos: [alpha, await get('helm-a', 'gizmo', 'demo-beta')] };
    // The release is recorded in a Secret of the namespace.
    assert.equal(await status('/api/v1/namespaces/helm-a/secrets/sh.helm.release.v1.demo.v1'), 200);
    assert.match(await helmOk(['list', '-n', 'helm-a']), /demo\s+helm-a\s+1\s+.*deployed\s+demo-0\.1\.0/);
  });

  it('upgrade with changed values changes the objects; a removed custom resource is deleted', async () => {
    const out = await helmOk([
      'upgrade',
      'demo',
      chart,
      '-n',
      'helm-a',
      '--set',
      'greeting=bonjour',
      '--set',
      'replicas=3',
      '--set',
      'password=changed',
      '--set',
      'gizmos={alpha}',
    ]);
    assert.match(out, /REVISION: 2/);
    assert.deepEqual((await get('helm-a', 'configmap', 'demo-config')).data, { greeting: 'bonjour', replicas: '3' });
    assert.equal(Buffer.from((await get('helm-a', 'secret', 'demo-secret')).data!['password']!, 'base64').toString(), 'changed');
    assert.deepEqual(await gizmoMessages('helm-a'), { 'demo-alpha': 'bonjour from alpha' });
    assert.equal((await get('helm-a', 'gizmo', 'demo-alpha')).spec?.['replicas'], 3);
  });

  it('rollback brings the previous values and objects back', async () => {
    assert.match(await helmOk(['rollback', 'demo', '1', '-n', 'helm-a']), /Rollback was a success/);
    assert.deepEqual((await get('helm-a', 'configmap', 'demo-config')).data, { greeting: 'hello', replicas: '1' });
    assert.equal(Buffer.from((await get('helm-a', 'secret', 'demo-secret')).data!['password']!, 'base64').toString(), 's3cret');
    assert.deepEqual(await gizmoMessages('helm-a'), { 'demo-alpha': 'hello from alpha', 'demo-beta': 'hello from beta' });
    assert.match(await helmOk(['history', 'demo', '-n', 'helm-a']), /3\s+.*deployed\s+demo-0\.1\.0\s+1\.0\s+Rollback to 1/);
  });

  it('helm template | kubectl apply --server-side gives the same objects as the install', async () => {
    await kubectl(['create', 'namespace', 'helm-b']);
    const manifest = await helmOk(['template', 'demo', chart, '--namespace', 'helm-b']);
    const out = await kubectl(['apply', '--server-side', '-n', 'helm-b', '-f', '-'], manifest);
    assert.match(out, /configmap\/demo-config serverside-applied/);
    assert.match(out, /gizmo\.helm\.example\.com\/demo-alpha serverside-applied/);
    const cm = await get('helm-b', 'configmap', 'demo-config');
    assert.deepEqual(cm.data, installed.cm.data);
    assert.deepEqual((await get('helm-b', 'secret', 'demo-secret')).data, installed.secret.data);
    for (const g of installed.gizmos) assert.deepEqual((await get('helm-b', 'gizmo', g.metadata.name)).spec, g.spec);
    assert.deepEqual(
      cm.metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`),
      ['kubectl/Apply'],
    );
  });

  it('--server-side=false: install and upgrade with client-side patches (merge patch for custom resources)', async () => {
    await helmOk(['install', 'legacy', chart, '-n', 'helm-c', '--create-namespace', '--server-side=false']);
    const cm = await get('helm-c', 'configmap', 'legacy-config');
    assert.deepEqual(
      cm.metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`),
      ['helm/Update'],
    );
    // "auto" keeps the release's client-side method.
    await helmOk(['upgrade', 'legacy', chart, '-n', 'helm-c', '--set', 'greeting=hola', '--set', 'gizmos={beta}']);
    assert.deepEqual((await get('helm-c', 'configmap', 'legacy-config')).data, { greeting: 'hola', replicas: '1' });
    assert.deepEqual(await gizmoMessages('helm-c'), { 'legacy-beta': 'hola from beta' });
    assert.deepEqual(
      (await get('helm-c', 'gizmo', 'legacy-beta')).metadata.managedFields?.map((e) => `${e.manager}/${e.operation}`),
      ['helm/Update'],
    );
    await helmOk(['uninstall', 'legacy', '-n', 'helm-c']);
  });

  it('uninstall removes the objects but leaves the CRD', async () => {
    assert.match(await helmOk(['uninstall', 'demo', '-n', 'helm-a', '--wait']), /release "demo" uninstalled/);
    const deadline = Date.now() + 10_000;
    const gone = async (): Promise<boolean> =>
      (await status('/api/v1/namespaces/helm-a/configmaps/demo-config')) === 404 &&
      (await status('/api/v1/namespaces/helm-a/secrets/demo-secret')) === 404 &&
      (await status('/apis/helm.example.com/v1/namespaces/helm-a/gizmos/demo-alpha')) === 404 &&
      (await status('/apis/helm.example.com/v1/namespaces/helm-a/gizmos/demo-beta')) === 404;
    while (!(await gone()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.ok(await gone(), 'the release objects are deleted');
    assert.equal(await status('/api/v1/namespaces/helm-a/secrets/sh.helm.release.v1.demo.v1'), 404, 'release history is gone');
    assert.equal(await status('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gizmos.helm.example.com'), 200, 'helm never deletes CRDs');
    assert.equal(await status('/apis/helm.example.com/v1/namespaces/helm-b/gizmos/demo-alpha'), 200, 'other namespaces untouched');
    assert.equal((await helmOk(['list', '-n', 'helm-a'])).trim().split('\n').length, 1);
  });
});
