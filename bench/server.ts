// The server under test, in its own process (forked by bench/run.ts, driven over IPC).
//   kplane-sqlite | kplane-etcd: createControlPlane, HTTPS (HTTP/2 with HTTP/1.1 fallback) on 127.0.0.1
//   bare: a node:http2 secure server (HTTP/1.1 allowed, as kplane's) with the same certificate
//         that parses each JSON body and answers it, keeping objects in a Map: the ceiling of
//         node's HTTP stack plus JSON, without kplane.
//   bare-etcd: the same server, but a create is etcd3's transaction create-if-absent of the JSON
//         (what kplane's create sends to etcd) before the answer: the ceiling of a Node server
//         that writes through the etcd3 client, without kplane.
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { apiRegistration, defaultModules } from '../src/controlplane/modules.js';
import { Etcd3 } from 'etcd3';
import { createControlPlane, type ControlPlane } from '../src/controlplane/controlplane.js';
import { etcd, sqlite } from '../src/storage/factories.js';
import type { KubeObject } from '../src/apimachinery/types.js';
import type { GVR } from '../src/client/types.js';
import { RestClient } from '../src/client/rest.js';
import { defaultControllers } from '../src/controllers/index.js';
import { type FeatureGate, newKubeFeatureGate } from '../src/featuregate/index.js';
import { BENCH_TOKEN, configMap, serveRpc, type Memory, type Pauses, type StartedServer } from './common.js';
import { PerformanceObserver, constants, monitorEventLoopDelay, type PerformanceEntry } from 'node:perf_hooks';

interface StartArgs {
  readonly kind: 'kplane-sqlite' | 'kplane-etcd' | 'bare' | 'bare-etcd';
  /** Holds pki/ (shared by every server of a run, so all serve the same certificate). */
  readonly dataDir: string;
  /** Where the SQLite file goes (kplane-sqlite). */
  readonly storageDir?: string;
  readonly etcdEndpoint?: string;
  /** The bare server's TLS identity (kplane's serving certificate). */
  readonly tls?: { key: string; cert: string; ca: string };
  /** Run the namespace and garbage-collector controllers in process (nsdelete, gc scenarios). */
  readonly controllers?: boolean;
  /** Audit every request at Metadata level into this JSON-lines file (audit scenario). */
  readonly auditLogPath?: string;
  /** Authorize with RBAC, as `kplane serve` does (rbacload scenario); otherwise the library's AlwaysAllow. */
  readonly rbac?: boolean;
  /** Serve APIServices, each `ns/name[:port]=host:port` a Service address (aggregated scenario). */
  readonly aggregation?: { readonly serviceAddresses: readonly string[] };
  /** Trust the front-proxy CA in `<dataDir>/pki` for requestheader authentication (an aggregated backend). */
  readonly frontProxyBackend?: boolean;
  /** Listen on this port (default 0: any). */
  readonly port?: number;
  /** Feature gates set over kplane's defaults (e.g. MutatingAdmissionPolicy for its scenario). */
  readonly featureGates?: Record<string, boolean>;
}

interface PreloadArgs {
  readonly namespace: string;
  readonly count: number;
  readonly prefix: string;
  /** Creates in flight at once (group commit batches them). */
  readonly window?: number;
}

/** kplane's default gates with some set. */
function gatesWith(set: Record<string, boolean>): FeatureGate {
  const g = newKubeFeatureGate();
  g.setFromMap(set);
  return g;
}

let cp: ControlPlane | undefined;
let bare: Http2SecureServer | undefined;
/** bare-etcd: the client its creates go through. */
let bareEtcd: Etcd3 | undefined;
const bareSockets = new Set<Socket>();
/** The bare server's objects: namespace → name → object. */
const bareObjects = new Map<string, Map<string, unknown>>();

async function start(a: StartArgs): Promise<StartedServer> {
  if (a.kind === 'bare') return startBare(a.tls!);
  if (a.kind === 'bare-etcd') {
    bareEtcd = new Etcd3({ hosts: [a.etcdEndpoint ?? ''] });
    return startBare(a.tls!);
  }
  cp = await createControlPlane({
    storage:
      a.kind === 'kplane-sqlite'
        ? sqlite({ dir: a.storageDir ?? join(a.dataDir, 'db'), inProcessWriter: process.env.KPLANE_SQLITE_WRITER === 'inprocess' })
        : etcd({ endpoints: [a.etcdEndpoint ?? ''] }),
    dataDir: a.dataDir,
    port: a.port ?? 0,
    // h2load (bench/h2load.ts) sends a bearer token; the Node load generator a client certificate.
    tokens: new Map([[BENCH_TOKEN, { name: 'bench', groups: ['system:masters'] }]]),
    // The load generators put up to 256 requests (h2load -m) or 250 watches on one connection, as
    // measured before kube's default of 100 streams per connection was adopted: keep the figures comparable.
    http2MaxStreamsPerConnection: 1000,
    ...(a.featureGates ? { featureGates: gatesWith(a.featureGates) } : {}),
    ...(a.controllers ? { controllers: defaultControllers() } : {}),
    ...(a.rbac ? { authorizationModes: ['RBAC' as const] } : {}),
    ...(a.aggregation ? { apis: [...defaultModules(), apiRegistration()], aggregation: { serviceAddresses: a.aggregation.serviceAddresses } } : {}),
    ...(a.frontProxyBackend
      ? { requestHeader: { clientCA: readFileSync(join(a.dataDir, 'pki', 'front-proxy-ca.crt'), 'utf8'), allowedNames: ['front-proxy-client'] } }
      : {}),
    ...(a.auditLogPath
      ? {
          audit: {
            policy: {
              rules: [
                {
                  level: 'Metadata' as const,
                  users: [],
                  userGroups: [],
                  verbs: [],
                  resources: [],
                  namespaces: [],
                  nonResourceURLs: [],
                  omitStages: [],
                  omitManagedFields: undefined,
                },
              ],
              omitStages: [],
              omitManagedFields: false,
            },
            log: { path: a.auditLogPath },
          },
        }
      : {}),
    log: (m) => process.stderr.write(`[kplane] ${m}\n`),
  });
  await cp.start();
  const p = cp.pki;
  return {
    url: cp.url,
    pid: process.pid,
    pki: { ca: p.caCertPem, servingCert: p.servingCertPem, servingKey: p.servingKeyPem, adminCert: p.adminCertPem, adminKey: p.adminKeyPem },
  };
}

async function startBare({ key, cert, ca }: { key: string; cert: string; ca: string }): Promise<StartedServer> {
  const srv = createSecureServer({ key, cert, ca, requestCert: true, rejectUnauthorized: false, allowHTTP1: true }, bareHandler);
  srv.setTimeout(0);
  srv.on('connection', (so: Socket) => {
    bareSockets.add(so);
    so.once('close', () => bareSockets.delete(so));
  });
  await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
  bare = srv;
  return { url: `https://127.0.0.1:${(srv.address() as AddressInfo).port}`, pid: process.pid };
}

let bareGenerated = 0;

function bareHandler(req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse): void {
  // /api/v1/namespaces/{ns}/configmaps[/{name}]
  const path = (req.url ?? '/').split('?')[0]!;
  const parts = path.split('/');
  const ns = parts[4] ?? '';
  const name = parts[6];
  let objs = bareObjects.get(ns);
  if (!objs) bareObjects.set(ns, (objs = new Map<string, unknown>()));
  const send = (code: number, obj: unknown): void => {
    res.statusCode = code;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(obj) + '\n');
  };
  if (req.method === 'GET') {
    if (name === undefined) send(200, { apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '1' }, items: [...objs.values()] });
    else if (objs.has(name)) send(200, objs.get(name));
    else send(404, { kind: 'Status', code: 404 });
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const obj = JSON.parse(Buffer.concat(chunks).toString('utf8')) as KubeObject;
    const n =
      name ??
      (obj.metadata?.name ||
        (obj.metadata?.generateName !== undefined ? (obj.metadata.name = `${obj.metadata.generateName}${(bareGenerated++).toString(36)}`) : ''));
    if (bareEtcd && req.method === 'POST') {
      const key = `/bare/configmaps/${ns}/${n}`;
      bareEtcd
        .if(key, 'Create', '==', 0)
        .then(bareEtcd.put(key).value(JSON.stringify(obj)))
        .commit()
        .then(
          (r) => send(r.succeeded ? 201 : 409, obj),
          (e: Error) => send(500, { kind: 'Status', code: 500, message: e.message }),
        );
      return;
    }
    objs.set(n, obj);
    send(req.method === 'POST' ? 201 : 200, obj);
  });
}

async function ensureNamespace(ns: string): Promise<void> {
  if (!cp) return;
  const store = cp.registry.lookup('', 'v1', 'namespaces')!.store;
  try {
    await store.get(undefined, ns);
  } catch {
    await store.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
}

/**
 * Stores `count` ConfigMaps in the server process: through kplane's generic store (defaulting,
 * validation, encoding, storage with group commit, cacher) but without HTTP, `window` at a time.
 */
async function preload(a: PreloadArgs): Promise<{ ms: number }> {
  const t0 = performance.now();
  if (!cp) {
    let objs = bareObjects.get(a.namespace);
    if (!objs) bareObjects.set(a.namespace, (objs = new Map<string, unknown>()));
    for (let i = 0; i < a.count; i++) objs.set(`${a.prefix}${i}`, configMap(`${a.prefix}${i}`, a.namespace));
    return { ms: performance.now() - t0 };
  }
  await ensureNamespace(a.namespace);
  const store = cp.registry.lookup('', 'v1', 'configmaps')!.store;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < a.count) {
      const i = next++;
      await store.create(a.namespace, configMap(`${a.prefix}${i}`, a.namespace));
    }
  };
  await Promise.all(Array.from({ length: Math.min(a.window ?? 256, a.count) }, worker));
  return { ms: performance.now() - t0 };
}

/** Lists a namespace through the generic store in-process (decodes every object), returns the count. */
async function listAll(a: { namespace: string }): Promise<{ items: number; ms: number }> {
  const t0 = performance.now();
  if (!cp) return { items: bareObjects.get(a.namespace)?.size ?? 0, ms: 0 };
  const list = await cp.registry.lookup('', 'v1', 'configmaps')!.store.list(a.namespace);
  return { items: list.items.length, ms: performance.now() - t0 };
}

async function memory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers };
}

async function stop(): Promise<void> {
  if (cp) await cp.stop();
  bareEtcd?.close();
  for (const so of bareSockets) so.destroy();
  bare?.close();
  // A normal exit, so that --cpu-prof writes its profile.
  setTimeout(() => process.exit(0), 50);
}

// ---- controller scenarios (nsdelete, gc) ---------------------------------------------------------

/** Creates a namespaced CRD (group bench.example.com) through the API and waits until it is served. */
async function createCrd(a: { plural: string; kind: string }): Promise<GVR> {
  const client = cp!.loopbackClient();
  const group = 'bench.example.com';
  await client.create({ group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' }, undefined, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${a.plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: a.plural, singular: a.kind.toLowerCase(), kind: a.kind },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
    },
  });
  const until = Date.now() + 20_000;
  while (!cp!.registry.lookup(group, 'v1', a.plural)) {
    if (Date.now() > until) throw new Error(`CRD ${a.plural} not served in 20 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return { group, version: 'v1', resource: a.plural };
}

interface PreloadObjectsArgs {
  readonly gvr: GVR;
  readonly namespace: string;
  readonly count: number;
  readonly prefix: string;
  readonly labels?: Record<string, string>;
  /** Object i is owned by owners.uids[i % owners.uids.length] (named owners.names[same]). */
  readonly owners?: { apiVersion: string; kind: string; names: string[]; uids: string[]; blockOwnerDeletion?: boolean };
  readonly returnUids?: boolean;
}

/** Stores `count` objects of any served resource through its generic store (no HTTP), 256 in flight. */
async function preloadObjects(a: PreloadObjectsArgs): Promise<{ ms: number; uids: string[] }> {
  const t0 = performance.now();
  await ensureNamespace(a.namespace);
  const reg = cp!.registry.lookup(a.gvr.group, a.gvr.version, a.gvr.resource);
  if (!reg) throw new Error(`${a.gvr.resource} is not served`);
  const apiVersion = a.gvr.group ? `${a.gvr.group}/${a.gvr.version}` : a.gvr.version;
  const kind = reg.descriptor.kind;
  const uids: string[] = new Array<string>(a.count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < a.count) {
      const i = next++;
      const o = a.owners;
      const j = o ? i % o.uids.length : 0;
      const base =
        kind === 'ConfigMap'
          ? (configMap(`${a.prefix}${i}`, a.namespace) as KubeObject)
          : ({ apiVersion, kind, metadata: { name: `${a.prefix}${i}`, namespace: a.namespace }, spec: { n: i } } as KubeObject);
      base.metadata = {
        ...base.metadata,
        ...(a.labels ? { labels: a.labels } : {}),
        ...(o
          ? {
              ownerReferences: [
                { apiVersion: o.apiVersion, kind: o.kind, name: o.names[j]!, uid: o.uids[j]!, ...(o.blockOwnerDeletion ? { blockOwnerDeletion: true } : {}) },
              ],
            }
          : {}),
      };
      const { object } = await reg.store.create(a.namespace, base);
      uids[i] = object.metadata!.uid!;
    }
  };
  await Promise.all(Array.from({ length: Math.min(256, a.count) }, worker));
  return { ms: performance.now() - t0, uids: a.returnUids ? uids : [] };
}

interface DeleteAndWaitArgs {
  readonly gvr: GVR;
  readonly namespace?: string;
  readonly name: string;
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  /** Done when this object is gone, or (with labelSelector) when nothing matches in the namespace. */
  readonly until: { gvr: GVR; namespace?: string; name?: string; labelSelector?: string };
  readonly timeoutMs: number;
}

/** DELETE through the API (loopback client), then polls until the work is done: ms from the DELETE. */
async function deleteAndWait(a: DeleteAndWaitArgs): Promise<{ ms: number; done: boolean }> {
  const client = cp!.loopbackClient();
  const t0 = performance.now();
  await client.delete(a.gvr, a.namespace, a.name, a.propagationPolicy ? { propagationPolicy: a.propagationPolicy } : {});
  const u = a.until;
  for (;;) {
    let done: boolean;
    if (u.name !== undefined) {
      try {
        await client.get(u.gvr, u.namespace, u.name);
        done = false;
      } catch (e) {
        if ((e as { code?: number }).code !== 404) throw e;
        done = true;
      }
    } else {
      done = (await client.list(u.gvr, u.namespace, { limit: 1, ...(u.labelSelector ? { labelSelector: u.labelSelector } : {}) })).items.length === 0;
    }
    const ms = performance.now() - t0;
    if (done || ms > a.timeoutMs) return { ms, done };
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Pauses seen by the server process: event-loop delay and V8 garbage-collection pauses, reset by
// `pausesReset` and read by `pauses` around a measured round (explains latency tails).
const loopDelay = monitorEventLoopDelay({ resolution: 1 });
loopDelay.enable();
let gcPauses: { kind: number; ms: number }[] = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcPauses.push({ kind: (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0, ms: e.duration });
}).observe({ entryTypes: ['gc'] });

async function pauses(): Promise<Pauses> {
  const ms = (ns: number): number => ns / 1e6;
  const major = gcPauses.filter((g) => g.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
  return {
    loopDelayP50Ms: ms(loopDelay.percentile(50)),
    loopDelayP99Ms: ms(loopDelay.percentile(99)),
    loopDelayMaxMs: ms(loopDelay.max),
    gcCount: gcPauses.length,
    gcTotalMs: gcPauses.reduce((a, g) => a + g.ms, 0),
    gcMaxMs: gcPauses.reduce((a, g) => Math.max(a, g.ms), 0),
    majorGcCount: major.length,
    majorGcMaxMs: major.reduce((a, g) => Math.max(a, g.ms), 0),
  };
}

/**
 * A ServiceAccount `name` in `namespace` that may do everything with ConfigMaps there (a Role and
 * a RoleBinding), and a token for it from TokenRequest: a user of kplane as RBAC sees most of them.
 */
async function serviceAccountToken(a: { namespace: string; name: string }): Promise<{ token: string }> {
  await ensureNamespace(a.namespace);
  const client = cp!.loopbackClient();
  const rbacGroup = 'rbac.authorization.k8s.io';
  await client.create({ group: '', version: 'v1', resource: 'serviceaccounts' }, a.namespace, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: a.name, namespace: a.namespace },
  });
  await client.create({ group: rbacGroup, version: 'v1', resource: 'roles' }, a.namespace, {
    apiVersion: `${rbacGroup}/v1`,
    kind: 'Role',
    metadata: { name: a.name, namespace: a.namespace },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }],
  });
  await client.create({ group: rbacGroup, version: 'v1', resource: 'rolebindings' }, a.namespace, {
    apiVersion: `${rbacGroup}/v1`,
    kind: 'RoleBinding',
    metadata: { name: a.name, namespace: a.namespace },
    roleRef: { apiGroup: rbacGroup, kind: 'Role', name: a.name },
    subjects: [{ kind: 'ServiceAccount', name: a.name, namespace: a.namespace }],
  });
  // TokenRequest is a subresource create: POST …/serviceaccounts/<name>/token.
  if (!(client instanceof RestClient)) throw new Error('the loopback client is not a RestClient');
  const review = await client.request<{ status?: { token?: string } }>(
    'POST',
    `/api/v1/namespaces/${a.namespace}/serviceaccounts/${a.name}/token`,
    Buffer.from(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } })),
  );
  const token = review.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${a.namespace}/${a.name}: ${JSON.stringify(review)}`);
  return { token };
}

serveRpc({
  serviceAccountToken: (a: { namespace: string; name: string }) => serviceAccountToken(a),
  pausesReset: async () => {
    loopDelay.reset();
    gcPauses = [];
  },
  pauses: () => pauses(),
  createCrd: (a: { plural: string; kind: string }) => createCrd(a),
  preloadObjects: (a: PreloadObjectsArgs) => preloadObjects(a),
  deleteAndWait: (a: DeleteAndWaitArgs) => deleteAndWait(a),
  start: (a: StartArgs) => start(a),
  ensureNamespace: (a: { namespace: string }) => ensureNamespace(a.namespace),
  preload: (a: PreloadArgs) => preload(a),
  memory: () => memory(),
  listAll: (a: { namespace: string }) => listAll(a),
  stop: () => stop(),
});
process.on('disconnect', () => process.exit(0));
