// Pod clients (capability podDial): agnhost netexec's /dial in a client pod makes the request, so
// it leaves the pod as the pod's own packets do. Two ways to reach that /dial:
// - `apiServerPodClient`: through the API server's pods/proxy subresource
//   (GET /api/v1/namespaces/NS/pods/NAME:8080/proxy/dial?...), as k/k's e2e framework does; works
//   on any cluster whose API server proxies to pods (a provider driver uses this one);
// - `directPodClient`: straight to the pod's IP, when the test host routes to pod IPs (the loopback
//   environment: node-sim's pods listen on this machine's 127.3.0.0/16).
import http from 'node:http';
import { isStatusError, RestClient } from '../../client/index.js';
import type { KubeClient } from '../../client/index.js';
import type { PodClient, PodDialRequest, PodDialResult, V1Pod } from '../types.js';

/** The kit's client pods run netexec with --http-port=8080 (catalogue/support.ts netexecPod). */
export const CLIENT_POD_HTTP_PORT = 8080;
/** netexec gives each try 5 s; the call waits for all of them and a margin. */
const PER_TRY_MS = 5000;
const MARGIN_MS = 5000;

export function dialQuery(req: PodDialRequest): string {
  const q = new URLSearchParams({
    request: req.request,
    protocol: req.protocol ?? 'http',
    host: req.host,
    port: String(req.port),
    tries: String(req.tries ?? 1),
  });
  return q.toString();
}

const podRef = (pod: V1Pod): string => `${pod.metadata?.namespace ?? ''}/${pod.metadata?.name ?? ''}`;
const timeoutFor = (req: PodDialRequest): number => Math.max(1, req.tries ?? 1) * PER_TRY_MS + MARGIN_MS;

/** netexec's JSON: {"errors":[...],"responses":[...]}, either key left out when empty. */
export function parseDialAnswer(body: string, where: string): PodDialResult {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    throw new Error(`${where}: the answer is not netexec's /dial JSON: ${JSON.stringify(body.slice(0, 200))}`);
  }
  const list = (x: unknown): string[] => (Array.isArray(x) ? x.map(String) : []);
  const o = (typeof v === 'object' && v !== null ? v : {}) as { responses?: unknown; errors?: unknown };
  return { responses: list(o.responses), errors: list(o.errors) };
}

/** Straight to http://<podIP>:8080/dial (the test host routes to pod IPs). */
export function directPodClient(client: KubeClient): PodClient {
  const PODS = { group: '', version: 'v1', resource: 'pods' };
  return {
    async dial(pod, req) {
      const ip = pod.status?.podIP || (await client.get<V1Pod>(PODS, pod.metadata?.namespace, pod.metadata?.name ?? '')).status?.podIP;
      const where = `netexec /dial in pod ${podRef(pod)}`;
      if (!ip) throw new Error(`${where}: the pod has no IP yet`);
      const path = `/dial?${dialQuery(req)}`;
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const r = http.get({ host: ip, port: CLIENT_POD_HTTP_PORT, path, agent: false, timeout: timeoutFor(req) }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => {
            text += c;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          res.on('error', reject);
        });
        r.on('timeout', () => r.destroy(new Error(`no answer within ${timeoutFor(req)} ms`)));
        r.on('error', (e) => reject(new Error(`${where} (http://${ip}:${CLIENT_POD_HTTP_PORT}${path}): ${e.message}`)));
      });
      if (status !== 200) throw new Error(`${where} answered ${status}: ${body.trim()}`);
      return parseDialAnswer(body, where);
    },
  };
}

/**
 * Through the API server's pods/proxy subresource: what a driver for a real cluster uses (the
 * test host needs no route to pod IPs, only RBAC `get pods/proxy` in the test namespaces).
 */
export function apiServerPodClient(client: KubeClient): PodClient {
  if (!(client instanceof RestClient)) throw new Error('apiServerPodClient needs a REST client (a kubeconfig), to reach pods/proxy');
  return {
    async dial(pod, req) {
      const ns = encodeURIComponent(pod.metadata?.namespace ?? '');
      const name = encodeURIComponent(`${pod.metadata?.name ?? ''}:${CLIENT_POD_HTTP_PORT}`);
      const path = `/api/v1/namespaces/${ns}/pods/${name}/proxy/dial?${dialQuery(req)}`;
      const where = `netexec /dial in pod ${podRef(pod)} through pods/proxy`;
      try {
        // netexec answers text/plain holding JSON; the client parses any JSON body.
        const v = await client.request<unknown>('GET', path, undefined, undefined, { signal: AbortSignal.timeout(timeoutFor(req)) }, '*/*');
        return parseDialAnswer(JSON.stringify(v), where);
      } catch (e) {
        if (isStatusError(e)) throw new Error(`${where} answered ${e.code}: ${e.message}`, { cause: e });
        throw e;
      }
    },
  };
}
