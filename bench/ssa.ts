// Scenario "ssa": server-side apply (PATCH application/apply-patch+yaml) of an unchanged
// 50-field ConfigMap, the request `kubectl apply --server-side` and controllers repeat all day.
// The apply must find nothing to change and write nothing; the goal is p99 ≤ 10 ms at c=1.
import { stats } from './common.js';
import { HttpClient, closedLoop, expectStatus, type RoundResult } from './load.js';
import type { Credentials } from './common.js';

export const SSA_FIELDS = 50;
const APPLY = 'application/apply-patch+yaml';

/** A ConfigMap with `fields` data keys (and a few labels), as kubectl sends it: JSON. */
export function applyConfigMap(name: string, namespace: string, fields = SSA_FIELDS): string {
  const data: Record<string, string> = {};
  for (let i = 0; i < fields; i++) data[`key-${String(i).padStart(2, '0')}`] = `value-${i}-${'v'.repeat(16)}`;
  return JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels: { app: 'bench', tier: 'ssa' } }, data });
}

export interface SsaRound {
  readonly concurrency: number;
  readonly result: RoundResult;
  readonly p50: number;
  readonly p99: number;
}

/**
 * Creates `objects` ConfigMaps by apply, then re-applies them unchanged in a closed loop at each
 * concurrency. Throws when an unchanged apply wrote (its resourceVersion moved).
 */
export async function runSsa(
  url: string,
  creds: Credentials,
  opts: { namespace: string; concurrency: readonly number[]; warmMs: number; measureMs: number; maxOps: number; objects?: number },
): Promise<SsaRound[]> {
  const objects = opts.objects ?? 16;
  const client = new HttpClient(url, creds, Math.max(...opts.concurrency));
  const path = (i: number): string => `/api/v1/namespaces/${opts.namespace}/configmaps/ssa-${i % objects}?fieldManager=bench`;
  const bodies = Array.from({ length: objects }, (_, i) => applyConfigMap(`ssa-${i}`, opts.namespace));
  const rvs: string[] = [];
  try {
    for (let i = 0; i < objects; i++) {
      const r = await client.send('PATCH', path(i), bodies[i], APPLY);
      if (r.status !== 201 && r.status !== 200) throw new Error(`apply of ssa-${i}: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
      rvs.push((JSON.parse(r.body.toString('utf8')) as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
    }
    const round = (c: number, ms: number): Promise<RoundResult> =>
      closedLoop({
        concurrency: c,
        maxOps: opts.maxOps,
        maxMs: ms,
        op: async (i) => expectStatus(await client.send('PATCH', path(i), bodies[i % objects], APPLY), 200),
      });
    const out: SsaRound[] = [];
    for (const c of opts.concurrency) {
      await round(c, opts.warmMs);
      const result = await round(c, opts.measureMs);
      const s = stats(result.latencies);
      out.push({ concurrency: c, result, p50: s.p50, p99: s.p99 });
    }
    for (let i = 0; i < objects; i++) {
      const r = await client.send('GET', `/api/v1/namespaces/${opts.namespace}/configmaps/ssa-${i}`);
      const rv = (JSON.parse(r.body.toString('utf8')) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
      if (rv !== rvs[i]) throw new Error(`an unchanged apply wrote ssa-${i}: resourceVersion ${rvs[i]} → ${rv}`);
    }
    return out;
  } finally {
    client.close();
  }
}
