// Scenario "cr": custom resource create/get/list against ConfigMaps of the same size in the same
// run and server, reported as a ratio (goal ≥ 70%). The CRD's schema has 20 fields under spec
// (strings with patterns and enums, integers with bounds, a list-map, a set, a nested object) and
// 2 CEL rules, so every write pays for structural validation, pruning, defaulting and CEL.
import type { Credentials } from './common.js';
import { configMap } from './common.js';
import { crdObject as crdFixture, PHASE_STATUS } from '../test/support/crd.js';
import { HttpClient, closedLoop, expectStatus, type RoundResult } from './load.js';

export const CR_GROUP = 'bench.example.com';
export const CR_PLURAL = 'benchwidgets';
export const CR_SCHEMA_FIELDS = 20;
export const CR_CEL_RULES = 2;

export const crdObject = crdFixture({
  group: CR_GROUP,
  plural: CR_PLURAL,
  singular: 'benchwidget',
  kind: 'BenchWidget',
  subresources: { status: {} },
  spec: {
    type: 'object',
    required: ['image', 'replicas'],
    'x-kubernetes-validations': [
      { rule: 'self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas', message: 'replicas must lie within [minReplicas, maxReplicas]' },
      { rule: '!has(self.schedule) || self.schedule.size() > 0', message: 'schedule must not be empty' },
    ],
    properties: {
      image: { type: 'string', maxLength: 256 },
      replicas: { type: 'integer', minimum: 0, maximum: 1000 },
      minReplicas: { type: 'integer', minimum: 0, default: 0 },
      maxReplicas: { type: 'integer', minimum: 0, default: 100 },
      schedule: { type: 'string', pattern: '^(\\S+ ){4}\\S+$' },
      tier: { type: 'string', enum: ['frontend', 'backend', 'batch'] },
      owner: { type: 'string', format: 'email' },
      paused: { type: 'boolean' },
      priority: { type: 'integer', minimum: -10, maximum: 10 },
      ratio: { type: 'number' },
      region: { type: 'string', maxLength: 64 },
      zone: { type: 'string', maxLength: 64 },
      timeoutSeconds: { type: 'integer', minimum: 1 },
      retries: { type: 'integer', minimum: 0, maximum: 10 },
      command: { type: 'array', items: { type: 'string' } },
      tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 } } },
      },
      resources: { type: 'object', properties: { cpu: { type: 'string' }, memory: { type: 'string' } } },
      env: { type: 'object', additionalProperties: { type: 'string' } },
      notes: { type: 'string' },
    },
  },
  status: PHASE_STATUS,
});

/** A custom resource that sets all 20 fields, padded (`notes`) to the ConfigMap's 1 KiB. */
export function customResource(name: string, namespace: string, tag = ''): Record<string, unknown> {
  const obj = {
    apiVersion: `${CR_GROUP}/v1`,
    kind: 'BenchWidget',
    metadata: { name, namespace },
    spec: {
      image: 'registry.example.com/app:1.2.3',
      replicas: 3,
      minReplicas: 1,
      maxReplicas: 10,
      schedule: '*/5 * * * *',
      tier: 'backend',
      owner: 'team@example.com',
      paused: false,
      priority: 2,
      ratio: 0.5,
      region: 'eu-west',
      zone: 'eu-west-1a',
      timeoutSeconds: 30,
      retries: 3,
      command: ['/app', '--serve'],
      tags: ['a', 'b'],
      ports: [
        { name: 'http', port: 8080 },
        { name: 'metrics', port: 9090 },
      ],
      resources: { cpu: '100m', memory: '128Mi' },
      env: { MODE: 'bench', TAG: tag },
      notes: '',
    },
  };
  obj.spec.notes = 'x'.repeat(Math.max(0, 1024 - Buffer.byteLength(JSON.stringify(obj))));
  return obj;
}

export type CrOp = 'create' | 'get' | 'list';

/** Measured rounds per kind, interleaved (see runCr). */
const PAIRS = 4;

function mergeRounds(rs: readonly RoundResult[]): RoundResult {
  const firstError = rs.find((r) => r.firstError !== undefined)?.firstError;
  return {
    ops: rs.reduce((n, r) => n + r.ops, 0),
    errors: rs.reduce((n, r) => n + r.errors, 0),
    seconds: rs.reduce((n, r) => n + r.seconds, 0),
    latencies: rs.flatMap((r) => r.latencies),
    ...(firstError !== undefined ? { firstError } : {}),
  };
}
export const CR_OPS: readonly CrOp[] = ['create', 'get', 'list'];

export interface CrRound {
  readonly op: CrOp;
  readonly concurrency: number;
  readonly configmap: RoundResult;
  readonly cr: RoundResult;
}

/** Creates the CRD through the API and waits (≤ 20 s) until its resource answers. */
export async function createBenchCrd(client: HttpClient): Promise<void> {
  const r = await client.send('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', JSON.stringify(crdObject));
  if (r.status !== 201 && r.status !== 409) throw new Error(`CRD create: ${r.status} ${r.body.toString('utf8').slice(0, 500)}`);
  const until = Date.now() + 20_000;
  for (;;) {
    const g = await client.send('GET', `/apis/${CR_GROUP}/v1/${CR_PLURAL}?limit=1`);
    if (g.status === 200) return;
    if (Date.now() > until) throw new Error(`${CR_PLURAL} not served within 20 s (${g.status})`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

/**
 * For each op and concurrency: a warm-up round on ConfigMaps and one on custom resources, then
 * measured rounds of both, interleaved (namespaces must exist: `${ns}-create`, `-get`, `-list`). Pools for get and
 * list are created here, by HTTP.
 */
export async function runCr(
  url: string,
  creds: Credentials,
  opts: {
    namespace: string;
    ops: readonly CrOp[];
    concurrency: readonly number[];
    warmMs: number;
    measureMs: number;
    maxOps: number;
    pool: number;
    listPool: number;
  },
): Promise<CrRound[]> {
  const client = new HttpClient(url, creds, Math.max(64, ...opts.concurrency));
  const ns = opts.namespace;
  const cmBase = (n: string): string => `/api/v1/namespaces/${n}/configmaps`;
  const crBase = (n: string): string => `/apis/${CR_GROUP}/v1/namespaces/${n}/${CR_PLURAL}`;
  try {
    await createBenchCrd(client);
    // Pools: get reads `pool` objects, list returns `listPool`.
    const fill = async (count: number, make: (i: number) => [string, string]): Promise<void> => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (next < count) {
            const [path, body] = make(next++);
            expectStatus(await client.send('POST', path, body), 201);
          }
        }),
      );
    };
    if (opts.ops.includes('get')) {
      await fill(opts.pool, (i) => [cmBase(`${ns}-get`), JSON.stringify(configMap(`pool-${i}`, `${ns}-get`))]);
      await fill(opts.pool, (i) => [crBase(`${ns}-get`), JSON.stringify(customResource(`pool-${i}`, `${ns}-get`))]);
    }
    if (opts.ops.includes('list')) {
      await fill(opts.listPool, (i) => [cmBase(`${ns}-list`), JSON.stringify(configMap(`item-${i}`, `${ns}-list`))]);
      await fill(opts.listPool, (i) => [crBase(`${ns}-list`), JSON.stringify(customResource(`item-${i}`, `${ns}-list`))]);
    }
    const round = (kind: 'cm' | 'cr', op: CrOp, c: number, ms: number, tag: string): Promise<RoundResult> => {
      const base = kind === 'cm' ? cmBase : crBase;
      const body = (name: string, n: string): string => JSON.stringify(kind === 'cm' ? configMap(name, n) : customResource(name, n, tag));
      const op1 = async (i: number): Promise<void> => {
        switch (op) {
          case 'create':
            expectStatus(await client.send('POST', base(`${ns}-create`), body(`${kind}-${tag}-${i}`, `${ns}-create`)), 201);
            return;
          case 'get':
            expectStatus(await client.send('GET', `${base(`${ns}-get`)}/pool-${(i * 7919) % opts.pool}`), 200);
            return;
          case 'list':
            expectStatus(await client.send('GET', base(`${ns}-list`), undefined, undefined, { discardBody: true }), 200);
            return;
        }
      };
      return closedLoop({ concurrency: c, maxOps: opts.maxOps, maxMs: ms, op: op1 });
    };
    const out: CrRound[] = [];
    for (const op of opts.ops) {
      for (const c of opts.concurrency) {
        await round('cm', op, c, opts.warmMs, `w${c}`);
        await round('cr', op, c, opts.warmMs, `w${c}`);
        // The measured time is cut into PAIRS rounds of each kind, alternating which goes first, so
        // that a slow stretch of the (shared) machine weighs on both kinds alike.
        const cms: RoundResult[] = [];
        const crs: RoundResult[] = [];
        for (let p = 0; p < PAIRS; p++) {
          const order = p % 2 === 0 ? (['cm', 'cr'] as const) : (['cr', 'cm'] as const);
          for (const kind of order) (kind === 'cm' ? cms : crs).push(await round(kind, op, c, opts.measureMs / PAIRS, `m${c}p${p}`));
        }
        out.push({ op, concurrency: c, configmap: mergeRounds(cms), cr: mergeRounds(crs) });
      }
    }
    return out;
  } finally {
    client.close();
  }
}
