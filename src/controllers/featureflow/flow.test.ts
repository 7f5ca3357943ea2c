// The flow's leader against a real server when its status write loses a race (409): what it worked
// out from a status that is gone is not written over the fresh one.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { KubeObject } from '../../apimachinery/types.js';
import type { KubeClient } from '../../client/types.js';
import { APIServerIdentity, CoordinatedLeaderElection, newKubeFeatureGate } from '../../featuregate/index.js';
import { FEATURES_API_VERSION, type FeatureObject } from '../../registry/features/features/types.js';
import { startTestServer, type TestServer } from '../../../test/support/server.js';
import { featureFlow, type FeatureFlow } from './controller.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
const EVENTS = { group: '', version: 'v1', resource: 'events' };
const NS = 'kube-system';
const CLE = CoordinatedLeaderElection;

let server: TestServer;
let flow: FeatureFlow | undefined;
before(async () => {
  server = await startTestServer({ storage: 'memory' });
});
after(async () => {
  await flow?.stop();
  await server?.stop();
});

it("the announcer's first status lands while the leader writes one of its own: the leader starts over from it", async () => {
  const c = server.cp.loopbackClient();
  const gate = newKubeFeatureGate();
  gate.setFromMap({ [APIServerIdentity]: true, [CLE]: true });
  // As the reporter announces: the Feature created with no status, the status written next.
  const created = await c.create<KubeObject & FeatureObject>(FEATURES, NS, {
    apiVersion: FEATURES_API_VERSION,
    kind: 'Feature',
    metadata: { name: CLE, namespace: NS },
    spec: {},
  });
  const announced = {
    ...created,
    status: {
      stability: 'Beta',
      version: gate.emulationVersion().toString(),
      default: 'Disabled',
      lockedToDefault: false,
      dynamic: false,
      source: 'CommandLine',
      intended: 'Enabled',
      state: 'On',
    },
  } as KubeObject & FeatureObject;
  // The announcer's write goes in just before the leader's first one (which read the Feature with
  // no status and so would start a TurningOn).
  let raced = false;
  const racing = new Proxy(c, {
    get(target, prop, receiver) {
      if (prop === 'updateStatus')
        return async (...args: Parameters<KubeClient['updateStatus']>) => {
          if (!raced) {
            raced = true;
            await target.updateStatus(FEATURES, NS, announced);
          }
          return target.updateStatus(...args);
        };
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  flow = featureFlow(racing, gate, { leaseName: 'apiserver-test', standalone: true, version: 'v1.33.0', intervalMs: 100, evaluationPeriodSeconds: 1 });
  flow.start();
  let f: KubeObject & FeatureObject;
  for (const deadline = Date.now() + 20_000; ; ) {
    f = await c.get<KubeObject & FeatureObject>(FEATURES, NS, CLE);
    if (raced && f.status?.conditions?.some((x) => x.type === 'Settled')) break;
    assert.ok(Date.now() < deadline, `the leader did not settle the Feature: ${JSON.stringify(f.status)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.equal(f.status?.state, 'On');
  assert.equal(f.status?.transition, undefined);
  const events = await c.list(EVENTS, NS);
  const started = events.items.filter((e) => e['reason'] === 'FeatureTransitionStarted');
  assert.deepEqual(
    started.map((e) => e['message']),
    [],
    'no transition: the state the announcer wrote is what the gate says',
  );
});
