// An admission webhook server written with kplane's library: one mutating and one validating
// webhook for ConfigMaps, served over HTTPS with a certificate from a CA generated at start.
// - /mutate stamps every ConfigMap created in a labelled namespace with an annotation naming who
//   created it (a JSONPatch);
// - /validate refuses ConfigMaps whose data holds a key that looks like a credential (`password`,
//   `token`, …): such values belong in a Secret. Keys that merely mention one pass with a warning.
//
// Run (in the repository, from source):
//   node --conditions=kplane-source --import tsx examples/webhook/server.ts --port 9443 --out /tmp/webhook
// then `kubectl apply -f /tmp/webhook/webhooks.yaml` (the configurations with this run's CA and URL)
// and label a namespace `example.kplane.io/webhook=enabled`. See README.md next to this file.
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createCertificateAuthority, issueCertificate, type AdmissionResponse, type AdmissionReview, type KubeObject } from 'kplane/webhook';

/** The annotation /mutate sets. */
export const CREATED_BY = 'example.kplane.io/created-by';
/** The namespace label that turns the webhooks on (their namespaceSelector). */
export const NAMESPACE_LABEL = 'example.kplane.io/webhook';

const CREDENTIALS = ['password', 'passwd', 'token', 'secret', 'apikey', 'api-key', 'private-key'];
const CREDENTIAL_KEYS = new Set(CREDENTIALS);

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** /mutate: adds the creator's name as an annotation (only on CREATE: an update keeps the first). */
export function mutate(review: AdmissionReview<ConfigMap>): AdmissionResponse {
  const req = review.request!;
  const allowed: AdmissionResponse = { uid: req.uid, allowed: true };
  if (req.operation !== 'CREATE' || !req.object) return allowed;
  const annotations = req.object.metadata?.annotations;
  // A JSONPatch "add" needs the parent to exist: create the map when the object has none.
  const patch = annotations
    ? [{ op: 'add', path: `/metadata/annotations/${CREATED_BY.replace(/~/g, '~0').replace(/\//g, '~1')}`, value: req.userInfo.username ?? '' }]
    : [{ op: 'add', path: '/metadata/annotations', value: { [CREATED_BY]: req.userInfo.username ?? '' } }];
  return { ...allowed, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') };
}

/** /validate: no credentials in ConfigMaps. */
export function validate(review: AdmissionReview<ConfigMap>): AdmissionResponse {
  const req = review.request!;
  const keys = Object.keys(req.object?.data ?? {});
  const bad = keys.filter((k) => CREDENTIAL_KEYS.has(k.toLowerCase()));
  if (bad.length > 0) {
    return {
      uid: req.uid,
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: `data key ${JSON.stringify(bad[0])} looks like a credential: store it in a Secret` },
    };
  }
  const suspicious = keys.filter((k) => CREDENTIALS.some((c) => k.toLowerCase().includes(c)));
  return {
    uid: req.uid,
    allowed: true,
    ...(suspicious.length ? { warnings: suspicious.map((k) => `data key ${JSON.stringify(k)} may hold a credential`) } : {}),
  };
}

const HANDLERS = new Map<string, (r: AdmissionReview<ConfigMap>) => AdmissionResponse>([
  ['/mutate', mutate],
  ['/validate', validate],
]);

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const reply = (code: number, body: unknown): void => {
      const json = Buffer.from(JSON.stringify(body));
      // With its length, the answer is one write; without, node sends it chunked (more bytes, two
      // more parses at the caller).
      res.writeHead(code, { 'content-type': 'application/json', 'content-length': json.length });
      res.end(json);
    };
    // The path without the query (kplane sends `?timeout=<n>s`); no URL parsed per call.
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const handler = HANDLERS.get(q < 0 ? url : url.slice(0, q));
    if (!handler || req.method !== 'POST') return reply(404, { error: 'POST an AdmissionReview to /mutate or /validate' });
    let review: AdmissionReview<ConfigMap>;
    try {
      review = JSON.parse((chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)).toString('utf8')) as AdmissionReview<ConfigMap>;
    } catch (e) {
      return reply(400, { error: `not JSON: ${e instanceof Error ? e.message : String(e)}` });
    }
    if (review?.apiVersion !== 'admission.k8s.io/v1' || review.kind !== 'AdmissionReview' || typeof review.request?.uid !== 'string')
      return reply(400, { error: 'expected an admission.k8s.io/v1 AdmissionReview with a request' });
    reply(200, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: handler(review) });
  });
}

/** The two configurations, pointing at `url` by URL and trusting `caBundle` (base64 of the CA's PEM). */
export function webhookConfigurations(url: string, caBundle: string): string {
  const hook = (kind: 'Mutating' | 'Validating', path: string): string =>
    [
      'apiVersion: admissionregistration.k8s.io/v1',
      `kind: ${kind}WebhookConfiguration`,
      'metadata:',
      `  name: example-${kind.toLowerCase()}`,
      'webhooks:',
      `- name: ${path.slice(1)}.configmaps.example.kplane.io`,
      '  admissionReviewVersions: [v1]',
      '  sideEffects: None',
      '  failurePolicy: Fail',
      '  timeoutSeconds: 5',
      '  clientConfig:',
      `    url: ${url}${path}`,
      `    caBundle: ${caBundle}`,
      '  rules:',
      `  - operations: [CREATE${kind === 'Validating' ? ', UPDATE' : ''}]`,
      '    apiGroups: [""]',
      '    apiVersions: [v1]',
      '    resources: [configmaps]',
      '  namespaceSelector:',
      `    matchLabels: {${NAMESPACE_LABEL}: enabled}`,
      '',
    ].join('\n');
  return `${hook('Mutating', '/mutate')}---\n${hook('Validating', '/validate')}`;
}

export interface ExampleWebhook {
  readonly server: Server;
  /** https://<host>:<port>, without a path. */
  readonly url: string;
  /** Base64 of the CA certificate's PEM, as `clientConfig.caBundle` wants it. */
  readonly caBundle: string;
  /** The WebhookConfigurations for this server (webhooks.yaml). */
  readonly configurations: string;
  close(): Promise<void>;
}

/** Generates a CA and a serving certificate for `host`, and listens. */
export async function startExampleWebhook(opts: { host?: string; port?: number } = {}): Promise<ExampleWebhook> {
  const host = opts.host ?? '127.0.0.1';
  const ca = createCertificateAuthority({ commonName: 'example-webhook-ca' });
  const serving = issueCertificate(ca, { commonName: 'example-webhook', hosts: [host], usage: 'server' });
  const server = createServer({ cert: serving.certPem, key: serving.keyPem }, handle);
  // Idle connections are kept 2 minutes (node's default is 5 s; a Go server keeps them until its
  // IdleTimeout, unset by default): longer than kube-apiserver's and kplane's 90 s, so the caller
  // closes an idle connection first and a call never waits for a new TLS handshake, nor meets a
  // connection this server has just closed, after a lull of a few seconds.
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, resolve);
  });
  const port = (server.address() as AddressInfo).port;
  const url = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const caBundle = Buffer.from(ca.certPem).toString('base64');
  return {
    server,
    url,
    caBundle,
    configurations: webhookConfigurations(url, caBundle),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { port: { type: 'string', default: '9443' }, host: { type: 'string', default: '127.0.0.1' }, out: { type: 'string', default: '.' } },
  });
  const hook = await startExampleWebhook({ host: values.host, port: Number(values.port) });
  await mkdir(values.out, { recursive: true });
  const file = join(values.out, 'webhooks.yaml');
  await writeFile(file, hook.configurations);
  console.log(`webhooks serving at ${hook.url}/mutate and ${hook.url}/validate; configurations in ${file}`);
  const stop = (): void => void hook.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
