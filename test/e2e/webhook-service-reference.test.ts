// Webhooks by `clientConfig.service`, resolved as kube-apiserver does: through the static
// `--aggregator-service-address` table when kplane serves no Services; with the cloud module, to
// the Service's cluster IP and port (the Service must exist and have the port), or with
// --enable-aggregator-routing to an address of its Endpoints. In every case the webhook's
// certificate is verified for <name>.<namespace>.svc (it is issued for nothing else).
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { cloud } from '../../src/controlplane/cloud-module.js';
import { defaultModules } from '../../src/controlplane/modules.js';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, tools } from '../support/tools.js';

ensureTools();

const ca = createCertificateAuthority({ commonName: 'hooks-ca' });
const caBundle = Buffer.from(ca.certPem).toString('base64');

/** A validating webhook refusing ConfigMaps named bad-*, its certificate only for webhook.hooks.svc. */
async function startHook(host: string, port = 0): Promise<{ server: Server; port: number }> {
  const cert = issueCertificate(ca, { commonName: 'webhook', hosts: ['webhook.hooks.svc'], usage: 'server' });
  const server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string; object?: { metadata?: { name?: string } } } };
      const name = review.request.object?.metadata?.name ?? '';
      const response = name.startsWith('bad')
        ? { uid: review.request.uid, allowed: false, status: { code: 403, message: `${name} refused by ${req.url} on ${req.headers.host}` } }
        : { uid: review.request.uid, allowed: true };
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((r) => server.listen(port, host, r));
  return { server, port: (server.address() as AddressInfo).port };
}

const stopHook = (s: Server | undefined): Promise<void> =>
  new Promise((r) => {
    if (!s) return r();
    s.closeAllConnections();
    s.close(() => r());
  });

function config(name: string, service: { name: string; port: number }): string {
  return [
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: ValidatingWebhookConfiguration',
    `metadata: {name: ${name}}`,
    'webhooks:',
    `- name: ${name}.hooks.example.com`,
    '  admissionReviewVersions: [v1]',
    '  sideEffects: None',
    '  clientConfig:',
    `    service: {namespace: hooks, name: ${service.name}, port: ${service.port}, path: /validate}`,
    `    caBundle: ${caBundle}`,
    '  rules:',
    '  - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}',
    `  objectSelector: {matchLabels: {hook: ${name}}}`,
    '',
  ].join('\n');
}

const configMap = (name: string, label: string): string =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${name}, namespace: default, labels: {hook: ${label}}}\ndata: {a: "1"}\n`;

async function denies(kc: KubectlSession, label: string, name: string): Promise<string> {
  const r = await kc.k(['create', '-f', await kc.file(`${name}.yaml`, configMap(name, label))]);
  assert.notEqual(r.code, 0, `${name} was created`);
  return r.stderr;
}

describe('webhooks by service reference', { concurrency: false, timeout: 120_000 }, () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-webhook-svc-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  describe('without Services: the --aggregator-service-address table', () => {
    let server: TestServer | undefined;
    let hook: Server | undefined;
    let kc: KubectlSession;
    before(async () => {
      const h = await startHook('127.0.0.1');
      hook = h.server;
      server = await startTestServer({ storage: 'memory', aggregation: { serviceAddresses: [`hooks/webhook:8443=127.0.0.1:${h.port}`] } });
      await mkdir(join(dir, 'static'));
      kc = kubectlSession(tools.kubectl, server.kubeconfig, join(dir, 'static'));
    });
    after(async () => {
      await server?.stop();
      await stopHook(hook);
    });

    it('calls the mapped address, verifying webhook.hooks.svc', async () => {
      await kc.ok(['apply', '-f', await kc.file('static.yaml', config('static', { name: 'webhook', port: 8443 }))]);
      const stderr = await denies(kc, 'static', 'bad-static');
      assert.match(
        stderr,
        /admission webhook "static\.hooks\.example\.com" denied the request: bad-static refused by \/validate\?timeout=10s on webhook\.hooks\.svc:8443/,
      );
      await kc.ok(['create', '-f', await kc.file('good.yaml', configMap('good-static', 'static'))]);
    });

    it('fails as upstream for a Service it does not know', async () => {
      await kc.ok(['apply', '-f', await kc.file('missing.yaml', config('missing', { name: 'nowhere', port: 443 }))]);
      const stderr = await denies(kc, 'missing', 'good-missing');
      assert.match(
        stderr,
        /Internal error occurred: failed calling webhook "missing\.hooks\.example\.com": failed to call webhook: Post "https:\/\/nowhere\.hooks\.svc:443\/validate\?timeout=10s": service "nowhere" not found/,
      );
    });
  });

  describe('with the cloud module: the Service cluster IP and port', () => {
    let server: TestServer | undefined;
    let hook: Server | undefined;
    let kc: KubectlSession;
    before(async () => {
      server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
      await mkdir(join(dir, 'cluster'));
      kc = kubectlSession(tools.kubectl, server.kubeconfig, join(dir, 'cluster'));
    });
    after(async () => {
      await server?.stop();
      await stopHook(hook);
    });

    it('calls <clusterIP>:<port>; a missing Service or port fails as upstream', async () => {
      await kc.ok(['create', 'namespace', 'hooks']);
      await kc.ok(['-n', 'hooks', 'create', 'service', 'clusterip', 'webhook', '--tcp=1:1']);
      const ip = await kc.ok(['-n', 'hooks', 'get', 'service', 'webhook', '-o', 'jsonpath={.spec.clusterIP}']);
      assert.match(ip, /^127\./);
      // The webhook listens on the cluster IP itself (a loopback address); the Service gets its port.
      const h = await startHook(ip);
      hook = h.server;
      await kc.ok(['-n', 'hooks', 'patch', 'service', 'webhook', '--type=json', '-p', `[{"op":"replace","path":"/spec/ports/0/port","value":${h.port}}]`]);
      await kc.ok(['apply', '-f', await kc.file('c.yaml', config('cluster', { name: 'webhook', port: h.port }))]);
      assert.match(await denies(kc, 'cluster', 'bad-cluster'), /bad-cluster refused by \/validate\?timeout=10s on webhook\.hooks\.svc:\d+/);

      await kc.ok(['apply', '-f', await kc.file('p.yaml', config('port', { name: 'webhook', port: 1 }))]);
      assert.match(
        await denies(kc, 'port', 'good-port'),
        /Post "https:\/\/webhook\.hooks\.svc:1\/validate\?timeout=10s": no service port 1 found for service "webhook"/,
      );

      await kc.ok(['apply', '-f', await kc.file('n.yaml', config('absent', { name: 'absent', port: 443 }))]);
      assert.match(await denies(kc, 'absent', 'good-absent'), /Post "https:\/\/absent\.hooks\.svc:443\/validate\?timeout=10s": service "absent" not found/);
    });
  });

  describe('with the cloud module and --enable-aggregator-routing: the Endpoints', () => {
    let server: TestServer | undefined;
    let hook: Server | undefined;
    let kc: KubectlSession;
    before(async () => {
      const h = await startHook('127.0.0.1');
      hook = h.server;
      server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()], aggregation: { enableAggregatorRouting: true } });
      await mkdir(join(dir, 'endpoints'));
      kc = kubectlSession(tools.kubectl, server.kubeconfig, join(dir, 'endpoints'));
      await kc.ok(['create', 'namespace', 'hooks']);
      // A Service without a selector and its Endpoints written by hand (no controller manages them).
      const objects = [
        'apiVersion: v1',
        'kind: Service',
        'metadata: {name: webhook, namespace: hooks}',
        'spec: {ports: [{name: https, port: 443, targetPort: 9443}]}',
        '---',
        'apiVersion: v1',
        'kind: Endpoints',
        'metadata: {name: webhook, namespace: hooks}',
        `subsets: [{addresses: [{ip: 127.0.0.1}], ports: [{name: https, port: ${h.port}}]}]`,
        '',
      ].join('\n');
      await kc.ok(['apply', '-f', await kc.file('svc.yaml', objects)]);
    });
    after(async () => {
      await server?.stop();
      await stopHook(hook);
    });

    it('calls an address of the Endpoints on the port named as the Service port', async () => {
      await kc.ok(['apply', '-f', await kc.file('e.yaml', config('routed', { name: 'webhook', port: 443 }))]);
      assert.match(await denies(kc, 'routed', 'bad-routed'), /bad-routed refused by \/validate\?timeout=10s on webhook\.hooks\.svc:443/);
      await kc.ok(['create', '-f', await kc.file('g.yaml', configMap('good-routed', 'routed'))]);
    });
  });
});
