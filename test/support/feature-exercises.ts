// The on → use → off exercises of kplane's features (research §5.8), in one place: every
// registered feature has one here or is listed in EXEMPT with a reason, or
// test/e2e/feature-harness.test.ts fails. An exercise uses the feature while it is on (stores data
// or checks behaviour a client sees) and, once kplane restarted with it off and its Feature is
// Off (its clean-up tasks done), checks what the client sees now: the data cleaned, the behaviour gone.
import assert from 'node:assert/strict';
import type { KubeObject } from '../../src/apimachinery/types.js';
import type { KubeClient } from '../../src/client/types.js';
import {
  APIResponseCompression,
  APIServerIdentity,
  ConsistentListFromCache,
  CoordinatedLeaderElection,
  KplaneCELCostLimits,
  KplaneWatchCache,
  MutatingAdmissionPolicy,
  WatchList,
} from '../../src/featuregate/index.js';
import { eventually } from './eventually.js';
import type { RawClient } from './https.js';

export interface ExerciseContext {
  /** The admin over HTTPS (what a client sees: headers, status codes). */
  readonly raw: RawClient;
  /** The admin in process (objects). */
  readonly client: KubeClient;
}

export interface FeatureExercise {
  /** While the feature is on: use it so that data is stored or its behaviour is visible. */
  on(ctx: ExerciseContext): Promise<void>;
  /** After a restart with it off and its Feature Off: the clean-up is done, the behaviour gone. */
  off(ctx: ExerciseContext): Promise<void>;
  /** Turned off alone, in its own restart (the feature flow itself depends on it). */
  readonly alone?: boolean;
}

/** Features with no exercise, each with the reason. Keep it short. */
export const EXEMPT: Readonly<Record<string, string>> = {};

const CMS = '/api/v1/namespaces/default/configmaps';
const LEASES = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const json = { accept: 'application/json' };

async function storageLists(raw: RawClient): Promise<number> {
  const text = (await raw.request({ path: '/metrics' })).text();
  const m = /kplane_storage_request_duration_seconds_count\{operation="list",backend="sqlite"\} (\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}
/**
 * How many lists reached storage while `n` requests of `path` were served. The metric counts every
 * resource's lists, and background loops (identity Leases, controllers' relists) add a few: with
 * 20 lists of our own, "fewer than 20" and "at least 20" cannot be blurred by them.
 */
const OWN_LISTS = 20;
async function storageListsFor(raw: RawClient, path: string, n = OWN_LISTS): Promise<number> {
  const before = await storageLists(raw);
  for (let i = 0; i < n; i++) assert.equal((await raw.request({ path, headers: json })).status, 200);
  return (await storageLists(raw)) - before;
}

const costlyCrd = (name: string): KubeObject => ({
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${name}.cost.example.com` },
  spec: {
    group: 'cost.example.com',
    scope: 'Namespaced',
    names: { plural: name, singular: name.slice(0, -1), kind: name.charAt(0).toUpperCase() + name.slice(1, -1) },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-validations': [{ rule: 'self.all(x, self.all(y, x == y || x != y))' }] },
                },
              },
            },
          },
        },
      },
    ],
  },
});
const MAP = '/apis/admissionregistration.k8s.io/v1beta1';
const post = (raw: RawClient, path: string, body: unknown) =>
  raw.request({ method: 'POST', path, headers: { 'content-type': 'application/json', ...json }, body: JSON.stringify(body) });
/** A ConfigMap the exercise's MutatingAdmissionPolicy selects, created with a server dry run: its labels as stored. */
async function mutatedLabels(raw: RawClient, name: string): Promise<Record<string, string>> {
  const r = await post(raw, `${CMS}?dryRun=All`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { 'map-exercise': 'yes' } } });
  assert.equal(r.status, 201, r.text());
  return r.json<KubeObject>().metadata?.labels ?? {};
}

const postCrd = (raw: RawClient, crd: KubeObject) =>
  raw.request({
    method: 'POST',
    path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(crd),
  });

const watchListPath = `${CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`;

export const FEATURE_EXERCISES: Readonly<Record<string, FeatureExercise>> = {
  [APIResponseCompression]: {
    async on({ raw }) {
      const big = 'x'.repeat(60_000);
      for (let i = 0; i < 4; i++) {
        const r = await raw.request({
          method: 'POST',
          path: CMS,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `harness-big-${i}` }, data: { big } }),
        });
        assert.equal(r.status, 201, r.text());
      }
      assert.equal((await raw.request({ path: CMS, headers: { ...json, 'accept-encoding': 'gzip' } })).headers['content-encoding'], 'gzip');
    },
    async off({ raw }) {
      assert.equal((await raw.request({ path: CMS, headers: { ...json, 'accept-encoding': 'gzip' } })).headers['content-encoding'], undefined);
    },
  },
  [APIServerIdentity]: {
    alone: true,
    async on({ client }) {
      const leases = await client.list(LEASES, 'kube-system', { labelSelector: 'apiserver.kubernetes.io/identity=kube-apiserver' });
      assert.ok(leases.items.length >= 1, 'an identity Lease while on');
    },
    async off({ client }) {
      // Restarted with it off: no Lease renewed by this server (every identity Lease is older than the start).
      const leases = await client.list<KubeObject & { spec?: { renewTime?: string } }>(LEASES, 'kube-system', {
        labelSelector: 'apiserver.kubernetes.io/identity=kube-apiserver',
      });
      await new Promise((r) => setTimeout(r, 1_500));
      const again = await client.list<KubeObject & { spec?: { renewTime?: string } }>(LEASES, 'kube-system', {
        labelSelector: 'apiserver.kubernetes.io/identity=kube-apiserver',
      });
      assert.deepEqual(
        again.items.map((l) => l.spec?.renewTime),
        leases.items.map((l) => l.spec?.renewTime),
        'no identity Lease renewed while off',
      );
    },
  },
  [ConsistentListFromCache]: {
    async on({ raw }) {
      const grew = await storageListsFor(raw, CMS);
      assert.ok(grew < OWN_LISTS, `consistent lists served from the watch cache (storage lists grew by ${grew} for ${OWN_LISTS} lists)`);
    },
    async off({ raw }) {
      const grew = await storageListsFor(raw, CMS);
      assert.ok(grew >= OWN_LISTS, `consistent lists read from storage (storage lists grew by ${grew} for ${OWN_LISTS} lists)`);
    },
  },
  [CoordinatedLeaderElection]: {
    async on({ client }) {
      for (let i = 0; i < 5; i++)
        await client.create(LEASES, 'default', {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: `harness-cle-${i}`, namespace: 'default' },
          spec: { holderIdentity: 'h', strategy: 'OldestEmulationVersion', preferredHolder: 'p' },
        });
      const l = await client.get<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'default', 'harness-cle-0');
      assert.equal(l.spec['strategy'], 'OldestEmulationVersion');
    },
    async off({ client }) {
      // ClearField ran: no stored Lease keeps the fields; a new one drops them on write.
      const left = (await client.list<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'default')).items.filter(
        (l) => 'strategy' in l.spec || 'preferredHolder' in l.spec,
      );
      assert.deepEqual(
        left.map((l) => l.metadata?.name),
        [],
      );
      const created = await client.create<KubeObject & { spec: Record<string, unknown> }>(LEASES, 'default', {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'harness-cle-new', namespace: 'default' },
        spec: { holderIdentity: 'h', strategy: 'OldestEmulationVersion' },
      });
      assert.equal(created.spec['strategy'], undefined);
    },
  },
  [KplaneCELCostLimits]: {
    async on({ raw }) {
      const refused = await postCrd(raw, costlyCrd('costlyons'));
      assert.equal(refused.status, 422, refused.text());
      assert.match(refused.text(), /estimated rule cost exceeds budget/);
    },
    async off({ raw }) {
      const accepted = await postCrd(raw, costlyCrd('costlyoffs'));
      assert.equal(accepted.status, 201, accepted.text());
    },
  },
  [KplaneWatchCache]: {
    async on({ raw }) {
      const grew = await storageListsFor(raw, `${CMS}?resourceVersion=0`);
      assert.ok(grew < OWN_LISTS, `resourceVersion=0 lists served from memory (storage lists grew by ${grew} for ${OWN_LISTS} lists)`);
    },
    async off({ raw }) {
      const grew = await storageListsFor(raw, `${CMS}?resourceVersion=0`);
      assert.ok(grew >= OWN_LISTS, `resourceVersion=0 lists read from storage (storage lists grew by ${grew} for ${OWN_LISTS} lists)`);
    },
  },
  [MutatingAdmissionPolicy]: {
    async on({ raw }) {
      const policy = await post(raw, `${MAP}/mutatingadmissionpolicies`, {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingAdmissionPolicy',
        metadata: { name: 'exercise' },
        spec: {
          matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
          mutations: [{ patchType: 'JSONPatch', jsonPatch: { expression: "[JSONPatch{op: 'add', path: '/metadata/labels/mutated', value: 'yes'}]" } }],
        },
      });
      assert.equal(policy.status, 201, policy.text());
      const binding = await post(raw, `${MAP}/mutatingadmissionpolicybindings`, {
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'MutatingAdmissionPolicyBinding',
        metadata: { name: 'exercise' },
        spec: { policyName: 'exercise', matchResources: { objectSelector: { matchLabels: { 'map-exercise': 'yes' } } } },
      });
      assert.equal(binding.status, 201, binding.text());
      await eventually(10_000, 'the policy mutates a selected ConfigMap', async () =>
        (await mutatedLabels(raw, 'map-on')).mutated === 'yes' ? true : undefined,
      );
    },
    async off({ raw }) {
      assert.equal((await raw.request({ path: `${MAP}/mutatingadmissionpolicies`, headers: json })).status, 404);
      assert.equal((await mutatedLabels(raw, 'map-off')).mutated, undefined, 'no mutation while the gate is off');
    },
  },
  [WatchList]: {
    async on({ raw }) {
      const r = await raw.request({ path: watchListPath, headers: json });
      assert.equal(r.status, 200, r.text());
    },
    async off({ raw }) {
      const r = await raw.request({ path: watchListPath, headers: json });
      assert.equal(r.status, 422, r.text());
      assert.match(r.text(), /sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled/);
    },
  },
};
