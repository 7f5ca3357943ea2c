// What the catalogue's tests share: waiting with a symptom for a message, agnhost netexec pods,
// Services and their load balancers, nodes, and probes through the driver's external client.
// Every wait fails with the symptom a user would see (what is wrong, and for how long it was).
import type { KubeObject } from '../../apimachinery/types.js';
import { isStatusError } from '../../client/index.js';
import type {
  CloudLoadBalancerView,
  ExternalClient,
  LoadBalancerInfra,
  NodeInfra,
  PodClient,
  PodDialRequest,
  PodDialResult,
  ProbeResult,
  SuiteEnv,
  V1Node,
  V1Service,
} from '../types.js';

export const SERVICES = { group: '', version: 'v1', resource: 'services' };
export const PODS = { group: '', version: 'v1', resource: 'pods' };
export const NODES = { group: '', version: 'v1', resource: 'nodes' };
export const SLICES = { group: 'discovery.k8s.io', version: 'v1', resource: 'endpointslices' };

export const AGNHOST_IMAGE = 'registry.k8s.io/e2e-test-images/agnhost:2.53';
export const NETEXEC_HTTP_PORT = 8080;
export const NETEXEC_UDP_PORT = 8081;
export const LB_CLEANUP_FINALIZER = 'service.kubernetes.io/load-balancer-cleanup';
export const TAINT_SHUTDOWN = 'node.cloudprovider.kubernetes.io/shutdown';
/** k/k AffinityConfirmCount: this many answers in a row from one backend prove affinity. */
export const AFFINITY_CONFIRM_COUNT = 15;

export interface ServicePort {
  name?: string;
  port: number;
  protocol?: string;
  targetPort?: number | string;
  nodePort?: number;
}
export interface ServiceSpec {
  type?: string;
  ports?: ServicePort[];
  selector?: Record<string, string>;
  clusterIP?: string;
  clusterIPs?: string[];
  externalName?: string;
  externalIPs?: string[];
  externalTrafficPolicy?: string;
  internalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  sessionAffinity?: string;
  allocateLoadBalancerNodePorts?: boolean;
}
export type Svc = KubeObject & {
  spec: ServiceSpec;
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string; ipMode?: string }[] } };
};
export type Pod = KubeObject & {
  spec?: { nodeName?: string };
  status?: { phase?: string; podIP?: string; conditions?: { type: string; status: string }[] };
};
interface Slice extends KubeObject {
  endpoints?:
    | { addresses: string[]; nodeName?: string; conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean }; targetRef?: { name?: string } }[]
    | null;
}

/** A test's failure: the message is the symptom. */
export class CcmTestFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CcmTestFailure';
  }
}

export function fail(message: string): never {
  throw new CcmTestFailure(message);
}

const secs = (ms: number): string => `${Math.round(ms / 100) / 10}s`;

/**
 * Polls `probe` until it returns a value; after `ms` fails with `symptom` (a string, or a function
 * of the last value seen, so the message can say what was there instead) and the time waited.
 */
export async function waitFor<T>(
  env: SuiteEnv,
  ms: number,
  symptom: string | ((last: unknown) => string),
  probe: () => Promise<T | undefined>,
  intervalMs = 100,
): Promise<T> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    if (env.signal.aborted) fail(`aborted while waiting: ${typeof symptom === 'string' ? symptom : symptom(last)}`);
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      if (e instanceof CcmTestFailure) throw e;
      last = e;
    }
    if (Date.now() >= until) {
      const text = typeof symptom === 'string' ? symptom : symptom(last);
      const why = last instanceof Error ? ` (last error: ${last.message})` : '';
      fail(`${text.replace(/\{t\}/g, secs(ms))}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export const svcRef = (env: SuiteEnv, name: string): string => `${env.namespace}/${name}`;

export function needNodes(env: SuiteEnv): NodeInfra {
  return env.driver.nodes ?? fail(`driver ${env.driver.name} has no nodes infrastructure (deleteInstance, instanceExists)`);
}
export function needLoadBalancers(env: SuiteEnv): LoadBalancerInfra {
  return env.driver.loadBalancers ?? fail(`driver ${env.driver.name} has no loadBalancers infrastructure (describe, forceCleanup)`);
}
export function needClient(env: SuiteEnv): ExternalClient {
  return env.driver.externalClient ?? fail(`driver ${env.driver.name} has no external client: the data-plane half cannot probe from outside the cluster`);
}

export function needPodClient(env: SuiteEnv): PodClient {
  return (
    env.driver.podClient ?? fail(`driver ${env.driver.name} has no pod client: the data-plane half cannot make requests from inside a pod (capability podDial)`)
  );
}

// ---- pods ----

export interface PodOptions {
  labels: Record<string, string>;
  nodeName?: string;
  gracePeriodSeconds?: number;
  /** agnhost netexec --delay-shutdown (seconds): keeps serving this long after SIGTERM. */
  delayShutdownSeconds?: number;
  env?: Record<string, string>;
}

/** An agnhost netexec pod (HTTP 8080, UDP 8081), as the k/k tests run them. */
export function netexecPod(name: string, o: PodOptions): KubeObject {
  const args = ['netexec', `--http-port=${NETEXEC_HTTP_PORT}`, `--udp-port=${NETEXEC_UDP_PORT}`];
  if (o.delayShutdownSeconds) args.push(`--delay-shutdown=${o.delayShutdownSeconds}`);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: o.labels },
    spec: {
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      terminationGracePeriodSeconds: o.gracePeriodSeconds ?? 1,
      containers: [
        {
          name: 'agnhost',
          image: AGNHOST_IMAGE,
          args,
          ports: [
            { name: 'http', containerPort: NETEXEC_HTTP_PORT, protocol: 'TCP' },
            { name: 'udp', containerPort: NETEXEC_UDP_PORT, protocol: 'UDP' },
          ],
          readinessProbe: { httpGet: { path: '/healthz', port: NETEXEC_HTTP_PORT }, periodSeconds: 1 },
          ...(o.env ? { env: Object.entries(o.env).map(([n, value]) => ({ name: n, value })) } : {}),
        },
      ],
    },
  };
}

export async function createPod(env: SuiteEnv, name: string, o: PodOptions): Promise<void> {
  await env.client.create(PODS, env.namespace, netexecPod(name, o));
}

const podReady = (p: Pod): boolean => p.status?.phase === 'Running' && (p.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** Waits until the pods run and are ready; returns them (with their node and IP). */
export async function waitPodsReady(env: SuiteEnv, names: readonly string[], ms = env.timeouts.proxyLagMs): Promise<Pod[]> {
  return waitFor(
    env,
    ms,
    `pods ${names.join(', ')} in ${env.namespace} are not all Running and Ready after {t}`,
    async () => {
      const pods = await Promise.all(names.map((n) => env.client.get<Pod>(PODS, env.namespace, n)));
      return pods.every(podReady) ? pods : undefined;
    },
    200,
  );
}

/** One netexec pod per node (the first `count` ready nodes), labelled `labels`; waits until ready. */
export async function podsOnNodes(
  env: SuiteEnv,
  prefix: string,
  nodes: readonly V1Node[],
  labels: Record<string, string>,
  o: Partial<PodOptions> = {},
): Promise<string[]> {
  const names = nodes.map((_, i) => `${prefix}-${i}`);
  await Promise.all(names.map((n, i) => createPod(env, n, { ...o, labels, nodeName: nodes[i]!.metadata?.name ?? '' })));
  await waitPodsReady(env, names);
  return names;
}

/**
 * A client pod (k/k's exec pods): agnhost netexec, on `nodeName` when given, with labels no test
 * Service selects; waits until it is ready and returns it (with its IP and node).
 */
export async function clientPod(env: SuiteEnv, name: string, nodeName?: string): Promise<Pod> {
  await createPod(env, name, { labels: { 'ccm-test/role': 'client' }, ...(nodeName ? { nodeName } : {}) });
  const [pod] = await waitPodsReady(env, [name]);
  return pod!;
}

const describeDial = (r: PodDialResult | undefined): string =>
  !r ? 'no answer' : r.responses.length ? `answered ${JSON.stringify(r.responses)}` : `failed: ${r.errors.join('; ') || 'no response'}`;

/**
 * From inside `pod` (netexec /dial through the driver's pod client), until `accept` takes the
 * answer within ms; the symptom gets a description of the last answer.
 */
export async function dialFromPod<T>(
  env: SuiteEnv,
  pod: Pod,
  req: PodDialRequest,
  ms: number,
  symptom: (last: string) => string,
  accept: (r: PodDialResult) => T | undefined,
): Promise<T> {
  const c = needPodClient(env);
  let last: PodDialResult | undefined;
  return waitFor(
    env,
    ms,
    () => symptom(describeDial(last)),
    async () => {
      last = await c.dial(pod, req);
      return accept(last);
    },
    250,
  );
}

/** The first answer's "ip" of netexec's "ip:port" (/clientip). */
export const clientIPOf = (answer: string | undefined): string => (answer ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');

// ---- nodes ----

const ready = (n: V1Node): boolean =>
  ((n.status?.conditions ?? []) as { type: string; status: string }[]).some((c) => c.type === 'Ready' && c.status === 'True');
const taints = (n: V1Node): { key: string; effect: string }[] => ((n.spec?.taints ?? []) as { key: string; effect: string }[]) ?? [];

/** Ready, schedulable nodes without NoSchedule taints, by name (e2enode.GetReadySchedulableNodes). */
export async function readyNodes(env: SuiteEnv): Promise<V1Node[]> {
  const list = await env.client.list<V1Node>(NODES);
  return list.items
    .filter((n) => ready(n) && !n.spec?.unschedulable && !taints(n).some((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute'))
    .sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
}

export async function needReadyNodes(env: SuiteEnv, min: number): Promise<V1Node[]> {
  const nodes = await readyNodes(env);
  if (nodes.length < min) fail(`the test needs ${min} ready schedulable nodes, the cluster has ${nodes.length}`);
  return nodes;
}

export const nodeIP = (n: V1Node): string =>
  ((n.status?.addresses ?? []) as { type: string; address: string }[]).find((a) => a.type === 'InternalIP')?.address ??
  fail(`node ${n.metadata?.name} has no InternalIP`);

export { ready as nodeReady, taints as nodeTaints };

// ---- services ----

export async function createService(env: SuiteEnv, name: string, spec: ServiceSpec, labels?: Record<string, string>): Promise<Svc> {
  return env.client.create<Svc>(SERVICES, env.namespace, { apiVersion: 'v1', kind: 'Service', metadata: { name, ...(labels ? { labels } : {}) }, spec });
}

export const getService = (env: SuiteEnv, name: string): Promise<Svc> => env.client.get<Svc>(SERVICES, env.namespace, name);

/** Read, change, write; again on a conflict (the CCM writes status and finalizers meanwhile). */
export async function updateService(env: SuiteEnv, name: string, change: (s: Svc) => void): Promise<Svc> {
  for (let i = 0; ; i++) {
    const s = await getService(env, name);
    change(s);
    try {
      return await env.client.update<Svc>(SERVICES, env.namespace, s);
    } catch (e) {
      if (!(isStatusError(e) && e.code === 409) || i >= 10) throw e;
    }
  }
}

export const ingressOf = (s: Svc): string | undefined => s.status?.loadBalancer?.ingress?.[0]?.ip ?? s.status?.loadBalancer?.ingress?.[0]?.hostname;

/** WaitForLoadBalancer: the Service's status gets an ingress within lbCreateMs. */
export async function waitForIngress(env: SuiteEnv, name: string): Promise<{ svc: Svc; ingress: string }> {
  return waitFor(env, env.timeouts.lbCreateMs, `Service ${svcRef(env, name)} has no load balancer ingress {t} after it became type LoadBalancer`, async () => {
    const svc = await getService(env, name);
    const ingress = ingressOf(svc);
    return ingress ? { svc, ingress } : undefined;
  });
}

/** WaitForLoadBalancerDestroy: the ingress leaves the Service's status within lbLagMs. */
export async function waitForNoIngress(env: SuiteEnv, name: string, after: string): Promise<Svc> {
  return waitFor(env, env.timeouts.lbLagMs, `Service ${svcRef(env, name)} still shows a load balancer ingress {t} after ${after}`, async () => {
    const svc = await getService(env, name);
    return ingressOf(svc) ? undefined : svc;
  });
}

/** The cloud's own view: its load balancer for the Service exists within lbCreateMs. */
export async function waitCloudLB(env: SuiteEnv, svc: Svc): Promise<CloudLoadBalancerView> {
  const lbs = needLoadBalancers(env);
  return waitFor(
    env,
    env.timeouts.lbCreateMs,
    `the cloud holds no load balancer for Service ${svcRef(env, svc.metadata?.name ?? '')} {t} after it got an ingress`,
    () => lbs.describe(svc as V1Service),
  );
}

/** The cloud's own view: no load balancer left for the Service within lbLagMs. */
export async function waitCloudLBGone(env: SuiteEnv, svc: Svc, after: string): Promise<void> {
  const lbs = needLoadBalancers(env);
  await waitFor(
    env,
    env.timeouts.lbLagMs,
    `load balancer for ${svcRef(env, svc.metadata?.name ?? '')} still exists in the cloud {t} after ${after}`,
    async () => ((await lbs.describe(svc as V1Service)) ? undefined : true),
  );
}

/** EndpointSlice endpoints of a Service (every slice). */
export async function endpointsOf(env: SuiteEnv, service: string): Promise<NonNullable<Slice['endpoints']>> {
  const list = await env.client.list<Slice>(SLICES, env.namespace, { labelSelector: `kubernetes.io/service-name=${service}` });
  return list.items.flatMap((s) => s.endpoints ?? []);
}

export async function waitReadyEndpoints(env: SuiteEnv, service: string, count: number): Promise<void> {
  await waitFor(
    env,
    env.timeouts.proxyLagMs,
    `Service ${svcRef(env, service)} does not have ${count} ready endpoints {t} after its pods became ready`,
    async () => {
      const eps = await endpointsOf(env, service);
      return eps.filter((e) => e.conditions?.ready).length === count ? true : undefined;
    },
  );
}

// ---- probes ----

const describeProbe = (r: ProbeResult): string => (r.ok ? `HTTP ${r.status ?? ''} ${JSON.stringify(r.body ?? '')}` : (r.error ?? `HTTP ${r.status}`));

/** TestReachableHTTP: GET host:port/path answers 200 within ms; returns the body. */
export async function reachableHTTP(env: SuiteEnv, host: string, port: number, path: string, ms: number, what: string): Promise<string> {
  const c = needClient(env);
  let last: ProbeResult | undefined;
  return waitFor(
    env,
    ms,
    () => `${what} (http://${host}:${port}${path}) is not reachable from outside the cluster after {t}: ${last ? describeProbe(last) : 'no answer'}`,
    async () => {
      last = await c.httpGet(host, port, path, { timeoutMs: 2000 });
      return last.ok && last.status === 200 ? (last.body ?? '') : undefined;
    },
  );
}

/** testNotReachableHTTP: no HTTP answer at all (refused, reset, timeout) within ms. */
export async function unreachableHTTP(env: SuiteEnv, host: string, port: number, ms: number, what: string): Promise<void> {
  const c = needClient(env);
  let last: ProbeResult | undefined;
  await waitFor(
    env,
    ms,
    () => `${what} (http://${host}:${port}) still answers {t} after it should have stopped: ${last ? describeProbe(last) : ''}`,
    async () => {
      last = await c.httpGet(host, port, '/hostname', { timeoutMs: 1000 });
      return last.ok || last.status !== undefined ? undefined : true;
    },
  );
}

/** UDP: "echo hello" answers "hello" within ms. */
export async function reachableUDP(env: SuiteEnv, host: string, port: number, ms: number, what: string): Promise<void> {
  const c = needClient(env);
  let last: ProbeResult | undefined;
  await waitFor(
    env,
    ms,
    () => `${what} (udp://${host}:${port}) does not answer "echo hello" from outside the cluster after {t}: ${last ? describeProbe(last) : 'no answer'}`,
    async () => {
      last = await c.udpExchange(host, port, 'echo hello', { timeoutMs: 1000 });
      return last.ok && last.body?.trim() === 'hello' ? true : undefined;
    },
  );
}

export async function unreachableUDP(env: SuiteEnv, host: string, port: number, ms: number, what: string): Promise<void> {
  const c = needClient(env);
  await waitFor(env, ms, `${what} (udp://${host}:${port}) still answers {t} after it should have stopped`, async () => {
    const r = await c.udpExchange(host, port, 'echo hello', { timeoutMs: 500 });
    return r.ok ? undefined : true;
  });
}

/**
 * checkAffinity: from outside, `shouldHold` wants AFFINITY_CONFIRM_COUNT answers in a row from one
 * backend; otherwise at least two backends. Returns the hostnames seen.
 */
export async function checkAffinity(env: SuiteEnv, host: string, port: number, shouldHold: boolean, what: string): Promise<string[]> {
  const c = needClient(env);
  let seen: string[] = [];
  return waitFor(
    env,
    env.timeouts.lbPropagationMs,
    () =>
      shouldHold
        ? `${what}: requests from one client to ${host}:${port} are not kept on one backend (session affinity ClientIP) after {t}; last answers came from ${[...new Set(seen)].join(', ') || 'nowhere'}`
        : `${what}: requests to ${host}:${port} all reach one backend after {t} (${[...new Set(seen)].join(', ') || 'no answer'}); the traffic is not spread`,
    async () => {
      seen = [];
      for (let i = 0; i < AFFINITY_CONFIRM_COUNT; i++) {
        const r = await c.httpGet(host, port, '/hostname', { timeoutMs: 2000 });
        if (!(r.ok && r.body)) return undefined;
        seen.push(r.body);
        if (!shouldHold && new Set(seen).size >= 2) return seen;
        if (shouldHold && new Set(seen).size > 1) return undefined;
      }
      return shouldHold ? seen : undefined;
    },
    250,
  );
}

/** Deletes and waits until gone (a finalizer held by the CCM must be let go). */
export async function deleteServiceAndWait(env: SuiteEnv, name: string, ms: number, symptom: string): Promise<void> {
  await env.client.delete(SERVICES, env.namespace, name).catch((e: unknown) => {
    if (!(isStatusError(e) && e.code === 404)) throw e;
  });
  await waitFor(env, ms, symptom, async () => {
    try {
      await getService(env, name);
      return undefined;
    } catch (e) {
      if (isStatusError(e) && e.code === 404) return true;
      throw e;
    }
  });
}

export function expect(cond: unknown, message: string): asserts cond {
  if (!cond) fail(message);
}
