// matchPolicy end to end: a CRD served in v1 (stored) and v2, webhooks whose rules name v1 only.
// With `matchPolicy: Equivalent` (the default) a write through v2 is sent to them as kube-apiserver
// sends it: the AdmissionReview's kind and resource in v1 with the object converted to v1, the
// request's own version in requestKind/requestResource; a mutating webhook's patch, made to the v1
// object, is in what kubectl gets back through v2; a validating webhook's refusal holds through v2.
// With `matchPolicy: Exact` a write through v2 is not sent. kubectl 1.33 makes the writes.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { waitServed } from '../support/crd.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';

ensureTools();

interface Review {
  request: {
    uid: string;
    kind: { version: string; kind: string };
    resource: { version: string; resource: string };
    requestKind: { version: string };
    requestResource: { version: string };
    object: { apiVersion: string; metadata: { name: string } };
  };
}

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.match.example.com' },
  spec: {
    group: 'match.example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
    versions: ['v1', 'v2'].map((name) => ({
      name,
      served: true,
      storage: name === 'v1',
      schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } } },
    })),
  },
};

describe('webhooks and matchPolicy (kubectl 1.33)', () => {
  let dir = '';
  let srv: TestServer;
  let hook: Server;
  let raw: RawClient;
  const seen: { path: string; review: Review }[] = [];
  let kube: (args: string[]) => ReturnType<typeof run>;
  let url = '';
  let caBundle = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-match-policy-'));
    const ca = createCertificateAuthority();
    const cert = issueCertificate(ca, { commonName: 'webhook', hosts: ['127.0.0.1'], usage: 'server' });
    hook = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Review;
        const path = new URL(req.url ?? '/', 'https://x').pathname;
        seen.push({ path, review });
        const name = review.request.object.metadata.name;
        const response: Record<string, unknown> = { uid: review.request.uid, allowed: true };
        if (path === '/mutate') {
          const patch = [{ op: 'add', path: '/metadata/labels', value: { 'seen-as': review.request.object.apiVersion.replace('/', '_') } }];
          Object.assign(response, { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') });
        }
        if (path === '/validate' && name.startsWith('bad')) Object.assign(response, { allowed: false, status: { code: 403, message: `no ${name}` } });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(hook.address() as AddressInfo).port}`;
    caBundle = Buffer.from(ca.certPem).toString('base64');

    srv = await startTestServer({ storage: 'memory' });
    raw = new RawClient(srv.url, adminCredentials(srv.dataDir));
    const env = { KUBECONFIG: srv.kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
    kube = (args) => run(tools.kubectl, args, { env });
    const created = await raw.request({
      method: 'POST',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(CRD),
    });
    assert.equal(created.status, 201, created.text());
    await waitServed(raw, '/apis/match.example.com/v2/widgets');
    await waitServed(raw, '/apis/match.example.com/v1/widgets');
  });
  after(async () => {
    raw?.close();
    await srv?.stop();
    hook?.closeAllConnections();
    hook?.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Both configurations for v1 widgets, with `matchPolicy` (absent: the default, Equivalent). */
  async function install(matchPolicy: 'Equivalent' | 'Exact' | undefined): Promise<void> {
    const policy = matchPolicy ? `\n  matchPolicy: ${matchPolicy}` : '';
    const one = (kind: string, name: string, path: string): string => `apiVersion: admissionregistration.k8s.io/v1
kind: ${kind}WebhookConfiguration
metadata: {name: ${name}}
webhooks:
- name: ${name}.match.example.com
  clientConfig: {url: "${url}${path}", caBundle: ${caBundle}}
  rules: [{operations: [CREATE], apiGroups: [match.example.com], apiVersions: [v1], resources: [widgets]}]
  admissionReviewVersions: [v1]
  sideEffects: None${policy}
`;
    const file = join(dir, `hooks-${matchPolicy ?? 'default'}.yaml`);
    await writeFile(file, `${one('Mutating', 'stamp', '/mutate')}---\n${one('Validating', 'check', '/validate')}`);
    const r = await kube(['apply', '-f', file]);
    assert.equal(r.code, 0, r.stderr);
  }

  const widget = async (version: string, name: string): Promise<string> => {
    const file = join(dir, `${name}.yaml`);
    await writeFile(file, `apiVersion: match.example.com/${version}\nkind: Widget\nmetadata: {name: ${name}, namespace: default}\nspec: {size: 1}\n`);
    return file;
  };

  it('Equivalent (the default): a write through v2 reaches the v1 webhooks with the object in v1', async () => {
    await install(undefined);
    const cfg = JSON.parse((await kube(['get', 'validatingwebhookconfiguration', 'check', '-o', 'json'])).stdout) as { webhooks: { matchPolicy: string }[] };
    assert.equal(cfg.webhooks[0]!.matchPolicy, 'Equivalent');
    // Once the configurations are in effect, a v2 create comes back labelled by the mutating webhook.
    const label = await eventually(10_000, 'the webhooks in effect', async () => {
      seen.length = 0;
      const r = await kube(['create', '-f', await widget('v2', 'w-probe'), '--dry-run=server', '-o', 'jsonpath={.metadata.labels.seen-as}']);
      return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
    });
    assert.equal(label, 'match.example.com_v1', 'the webhook saw the object in v1');
    seen.length = 0;
    const r = await kube(['create', '-f', await widget('v2', 'w-two'), '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { apiVersion: string; metadata: { labels?: Record<string, string> } };
    assert.equal(out.apiVersion, 'match.example.com/v2', 'answered in the version asked');
    assert.deepEqual(out.metadata.labels, { 'seen-as': 'match.example.com_v1' }, 'the patch made to the v1 object, in the v2 answer');
    const mutate = seen.find((s) => s.path === '/mutate')!.review.request;
    assert.deepEqual([mutate.kind.version, mutate.resource.version, mutate.requestKind.version, mutate.requestResource.version], ['v1', 'v1', 'v2', 'v2']);
    assert.equal(mutate.kind.kind, 'Widget');
    assert.equal(mutate.object.apiVersion, 'match.example.com/v1');
    const validate = seen.find((s) => s.path === '/validate')!.review.request;
    assert.equal(validate.object.apiVersion, 'match.example.com/v1');
    assert.equal(validate.requestKind.version, 'v2');
    // The refusal holds through v2; nothing stored.
    const refused = await kube(['create', '-f', await widget('v2', 'bad-two')]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /admission webhook "check\.match\.example\.com" denied the request: no bad-two/);
    assert.notEqual((await kube(['get', 'widgets.v2.match.example.com', 'bad-two'])).code, 0);
    // A write through v1 is sent as it is.
    seen.length = 0;
    assert.equal((await kube(['create', '-f', await widget('v1', 'w-one')])).code, 0);
    assert.deepEqual(
      seen.map((s) => [s.path, s.review.request.kind.version, s.review.request.requestKind.version]),
      [
        ['/mutate', 'v1', 'v1'],
        ['/validate', 'v1', 'v1'],
      ],
    );
  });

  it('Exact: a write through v2 is not sent to webhooks for v1', async () => {
    await install('Exact');
    await eventually(10_000, 'Exact in effect', async () => {
      seen.length = 0;
      const r = await kube(['create', '-f', await widget('v2', 'bad-probe'), '--dry-run=server']);
      return r.code === 0 ? true : undefined;
    });
    seen.length = 0;
    const r = await kube(['create', '-f', await widget('v2', 'bad-exact'), '-o', 'jsonpath={.metadata.labels}']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '', 'not mutated');
    assert.deepEqual(seen, [], 'no webhook called');
  });
});
