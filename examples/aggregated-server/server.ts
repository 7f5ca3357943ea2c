// An extension API server built with kplane's own library, as upstream's sample-apiserver:
// it serves wardle.example.com/v1alpha1 flunders and runs behind a kplane (or kube-apiserver)
// aggregator with delegated authentication and authorization:
// - authentication: the front proxy's X-Remote-* headers, trusted for the client certificate the
//   front's kube-system/extension-apiserver-authentication ConfigMap names (requestheader CA and
//   allowed names); and bearer tokens sent straight to this server (a ServiceAccount's, say),
//   checked by a TokenReview at the front, answers cached for 10 s;
// - authorization: a SubjectAccessReview back to the front for every request (the Webhook mode).
//
// Run (in the repository, from source), against a kplane serving `--modules apiregistration
// --aggregator-service-address wardle/api=127.0.0.1:8443`:
//   node --conditions=kplane-source --import tsx examples/aggregated-server/server.ts \
//     --front-kubeconfig .kplane/admin.kubeconfig --port 8443
// then create the APIService in apiservice.yaml next to this file.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  ALL_VERBS,
  core,
  createControlPlane,
  createHttpsClient,
  loadKubeconfig,
  memory,
  tokenReviewAuthenticator,
  type ApiModule,
  type ControlPlane,
  type ResourceDescriptor,
  type Strategy,
} from 'kplane';

const GROUP = 'wardle.example.com';
const VERSION = 'v1alpha1';
const DEF = 'com.example.wardle.v1alpha1.';

const flundersResource: ResourceDescriptor = {
  group: GROUP,
  version: VERSION,
  kind: 'Flunder',
  listKind: 'FlunderList',
  plural: 'flunders',
  singular: 'flunder',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: `${DEF}Flunder`,
};

/** A flunder may refer to another one by name (upstream's sample has the same field). */
const flunderStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate: () => {},
  prepareForUpdate: () => {},
  validate: (o) => {
    const ref = (o as { spec?: { reference?: unknown } }).spec?.reference;
    return ref === undefined || typeof ref === 'string'
      ? []
      : [{ type: 'FieldValueInvalid', field: 'spec.reference', badValue: ref, detail: 'must be a string' }];
  },
  validateUpdate(o) {
    return this.validate(o);
  },
};

/** The wardle.example.com API module: one kind, its OpenAPI definitions. */
export function wardle(): ApiModule {
  const gvk = [{ group: GROUP, version: VERSION, kind: 'Flunder' }];
  return {
    name: GROUP,
    resources: [
      {
        descriptor: flundersResource,
        strategy: flunderStrategy,
        definitions: {
          [`${DEF}Flunder`]: {
            type: 'object',
            description: 'A Flunder refers to another flunder.',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
              spec: {
                type: 'object',
                description: 'What the flunder refers to.',
                properties: { reference: { type: 'string', description: 'The name of another flunder.' } },
              },
            },
            'x-kubernetes-group-version-kind': gvk,
          },
          [`${DEF}FlunderList`]: {
            type: 'object',
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta' },
              items: { type: 'array', items: { $ref: `#/definitions/${DEF}Flunder` } },
            },
            required: ['items'],
            'x-kubernetes-group-version-kind': [{ group: GROUP, version: VERSION, kind: 'FlunderList' }],
          },
        },
      },
    ],
  };
}

export interface WardleServerOptions {
  /** The front's admin kubeconfig: where its ConfigMap and SubjectAccessReviews are read and posted. */
  readonly frontKubeconfig: string;
  readonly port?: number;
  readonly dataDir?: string;
}

/** Starts the wardle server with the front's delegated authentication and authorization. */
export async function startWardleServer(opts: WardleServerOptions): Promise<ControlPlane> {
  const front = loadKubeconfig(opts.frontKubeconfig);
  const client = createHttpsClient(front);
  const cm = await client.get<{ data?: Record<string, string> }>(
    { group: '', version: 'v1', resource: 'configmaps' },
    'kube-system',
    'extension-apiserver-authentication',
  );
  const data = cm.data ?? {};
  if (!data['requestheader-client-ca-file']) {
    await client.close();
    throw new Error('kube-system/extension-apiserver-authentication has no requestheader-client-ca-file: the front proxy is not configured');
  }
  let cp: ControlPlane;
  try {
    cp = await startWith(opts, front, client, data);
  } catch (e) {
    await client.close();
    throw e;
  }
  // The front's client lives as long as the server: token reviews go through it.
  const stop = cp.stop.bind(cp);
  return Object.assign(cp, {
    async stop() {
      await stop();
      await client.close();
    },
  });
}

async function startWith(
  opts: WardleServerOptions,
  front: ReturnType<typeof loadKubeconfig>,
  client: ReturnType<typeof createHttpsClient>,
  data: Record<string, string>,
): Promise<ControlPlane> {
  const list = (key: string): string[] | undefined => (data[key] ? (JSON.parse(data[key]) as string[]) : undefined);
  const requestHeaderCA = data['requestheader-client-ca-file']!;
  const usernameHeaders = list('requestheader-username-headers');
  const groupHeaders = list('requestheader-group-headers');
  const extraHeaderPrefixes = list('requestheader-extra-headers-prefix');
  const cp = await createControlPlane({
    storage: memory(),
    dataDir: opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'wardle-'))),
    port: opts.port ?? 8443,
    apis: [core(), wardle()],
    reportFeatures: false,
    requestHeader: {
      clientCA: requestHeaderCA,
      allowedNames: list('requestheader-allowed-names') ?? [],
      ...(usernameHeaders ? { usernameHeaders } : {}),
      ...(groupHeaders ? { groupHeaders } : {}),
      ...(extraHeaderPrefixes ? { extraHeaderPrefixes } : {}),
    },
    // Delegated authentication of bearer tokens: a TokenReview at the front.
    tokenAuthenticators: [tokenReviewAuthenticator({ client })],
    // Delegated authorization: every request's SubjectAccessReview goes to the front.
    authorizationModes: ['Webhook'],
    authorizationWebhook: {
      version: 'v1',
      connection: {
        url: `${front.server}/apis/authorization.k8s.io/v1/subjectaccessreviews`,
        ...(front.caPem ? { caPem: front.caPem } : {}),
        ...(front.certPem ? { certPem: front.certPem } : {}),
        ...(front.keyPem ? { keyPem: front.keyPem } : {}),
        ...(front.token ? { token: front.token } : {}),
      },
    },
  });
  await cp.start();
  return cp;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { 'front-kubeconfig': { type: 'string' }, port: { type: 'string', default: '8443' }, 'data-dir': { type: 'string' } },
  });
  if (!values['front-kubeconfig']) throw new Error('--front-kubeconfig is required');
  const cp = await startWardleServer({
    frontKubeconfig: values['front-kubeconfig'],
    port: Number(values.port),
    ...(values['data-dir'] ? { dataDir: values['data-dir'] } : {}),
  });
  console.log(`wardle.example.com/v1alpha1 serving at ${cp.url}`);
  const stop = (): void => void cp.stop().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
