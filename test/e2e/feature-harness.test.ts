// The on → use → off harness (research §5.8, issue 24): every registered kplane feature is turned
// on, used (test/support/feature-exercises.ts), turned off by a restart, and checked once its
// Feature is Off (its clean-up tasks done). A feature with neither an exercise nor an exemption
// (with a reason, in the same file) fails the suite. Features are grouped on as few server starts
// as possible: all on, then all off in one restart, then those the flow itself depends on alone.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { APIServerIdentity, KUBE_FEATURES, newKubeFeatureGate } from '../../src/featuregate/index.js';
import type { FeatureObject } from '../../src/registry/features/features/types.js';
import { eventually } from '../support/eventually.js';
import { EXEMPT, FEATURE_EXERCISES, type ExerciseContext } from '../support/feature-exercises.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
type Feature = KubeObject & FeatureObject;
const flow = { intervalMs: 200, livenessMs: 3_000, identityRenewIntervalMs: 500, evaluationPeriodSeconds: 1 };

/** Every feature kplane registers (what `kplane serve --help` lists), AllAlpha/AllBeta aside. */
const registered = [...newKubeFeatureGate().getAll().keys()].filter((n) => n !== 'AllAlpha' && n !== 'AllBeta').sort();
const exercised = registered.filter((n) => FEATURE_EXERCISES[n]);
const together = exercised.filter((n) => !FEATURE_EXERCISES[n]!.alone);
const alone = exercised.filter((n) => FEATURE_EXERCISES[n]!.alone);

describe('on → use → off for every registered feature', { timeout: 300_000 }, () => {
  let dataDir: string;
  let s: TestServer | undefined;
  let raw: RawClient | undefined;

  const serve = async (values: Record<string, boolean>): Promise<ExerciseContext> => {
    raw?.agent.destroy();
    await s?.stop();
    const g = newKubeFeatureGate();
    g.setFromMap(values);
    s = await startTestServer({ dataDir, featureGates: g, reportFeatures: true, featureFlow: flow });
    raw = new RawClient(s.url, adminCredentials(s.dataDir));
    return { raw, client: s.cp.loopbackClient() };
  };
  const allOn = (): Record<string, boolean> => Object.fromEntries(registered.map((n) => [n, true]));

  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'kplane-harness-'));
  });
  after(async () => {
    raw?.agent.destroy();
    await s?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('every registered feature has an exercise or a listed exemption, and nothing else is listed', () => {
    assert.deepEqual(
      registered.filter((n) => !FEATURE_EXERCISES[n] && !EXEMPT[n]),
      [],
      'features without an exercise: add one to test/support/feature-exercises.ts or exempt it there with a reason',
    );
    const known = new Set(Object.keys(KUBE_FEATURES));
    assert.deepEqual(
      [...Object.keys(FEATURE_EXERCISES), ...Object.keys(EXEMPT)].filter((n) => !known.has(n)),
      [],
    );
    assert.deepEqual(
      Object.keys(EXEMPT).filter((n) => FEATURE_EXERCISES[n]),
      [],
    );
    for (const [n, why] of Object.entries(EXEMPT)) assert.ok(why.length > 10, `${n}: give a reason`);
  });

  it(`on, used, then off together: ${together.join(', ')}; then alone: ${alone.join(', ')}`, async () => {
    let ctx = await serve(allOn());
    for (const n of exercised) await FEATURE_EXERCISES[n]!.on(ctx).catch((e: Error) => assert.fail(`${n} on: ${e.message}`));

    // Off together (the flow needs the identity Lease: the "alone" ones stay on).
    ctx = await serve({ ...allOn(), ...Object.fromEntries(together.map((n) => [n, false])) });
    for (const n of together) {
      await eventually(
        90_000,
        `${n} Off`,
        async () => {
          const f = await ctx.client.get<Feature>(FEATURES, 'kube-system', n);
          const settled = f.status?.conditions?.find((c) => c.type === 'Settled')?.status === 'True';
          return f.status?.state === 'Off' && f.status.intended === 'Disabled' && settled ? f : undefined;
        },
        200,
      );
      await FEATURE_EXERCISES[n]!.off(ctx).catch((e: Error) => assert.fail(`${n} off: ${e.message}`));
    }

    for (const n of alone) {
      ctx = await serve({ ...allOn(), [n]: false });
      // Without the identity Lease there is no flow: the server's own use says it runs it off.
      await eventually(30_000, `${n} reported Disabled`, async () => {
        const f = await ctx.client.get<Feature>(FEATURES, 'kube-system', n);
        return f.status?.uses?.some((u) => u.value === 'Disabled') ? f : undefined;
      });
      await FEATURE_EXERCISES[n]!.off(ctx).catch((e: Error) => assert.fail(`${n} off: ${e.message}`));
    }
    assert.ok(APIServerIdentity in FEATURE_EXERCISES);
  });
});
