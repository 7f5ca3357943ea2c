// The kit's runner against a real in-process kplane (memory storage, loopback client): which halves
// run, in which order, which are skipped and why, namespaces, driver hooks, timeouts, parallelism
// and interruption. The tests and the driver are small ones written here; the catalogue's own
// tests are proven against real CCMs in test/e2e/ccm-*.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KubeObject } from '../apimachinery/types.js';
import type { KubeClient } from '../client/index.js';
import { startTestServer, type TestServer } from '../../test/support/server.js';
import { cloud } from '../controlplane/cloud-module.js';
import { defaultModules } from '../controlplane/modules.js';
import { runSuite } from './runner.js';
import type { Capability, CcmTestCase, CcmTestDriver, ExternalClient, SuiteEnv, TestScope } from './types.js';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' } as const;
const TIMEOUTS = { lbCreateMs: 1000, lbLagMs: 1000, lbPropagationMs: 1000, nodeDeletionMs: 1000, proxyLagMs: 1000 };
const probe = async () => ({ ok: true });
const externalClient: ExternalClient = { httpGet: probe, udpExchange: probe, tcpConnect: probe, sourceIPs: () => ['127.0.0.1'] };

let server: TestServer;
let client: KubeClient;

before(async () => {
  server = await startTestServer({ storage: 'memory', apis: [...defaultModules(), cloud()] });
  client = server.cp.loopbackClient();
});
after(async () => {
  await client.close();
  await server.stop();
});

function driver(caps: readonly Capability[], extra: Partial<CcmTestDriver> = {}): CcmTestDriver {
  return { name: 'in-test', capabilities: new Set(caps), timeouts: TIMEOUTS, externalClient, ...extra };
}

/** A test whose halves record when they run and check their namespace exists while they do. */
function recording(
  log: string[],
  id: string,
  needs: CcmTestCase['needs'],
  halves: { cp?: boolean; dp?: boolean } = { cp: true },
  labels?: string[],
): CcmTestCase {
  const half = (name: string) => async (env: SuiteEnv) => {
    const ns = await env.client.get(NAMESPACES, undefined, env.namespace);
    assert.equal(ns.metadata?.name, env.namespace);
    log.push(`${id}:${name}`);
  };
  return {
    id,
    upstream: `upstream ${id}`,
    source: 'in-test',
    needs,
    ...(labels ? { labels } : {}),
    ...(halves.cp ? { controlPlane: half('cp') } : {}),
    ...(halves.dp ? { dataPlane: half('dp') } : {}),
  };
}

describe('runSuite', () => {
  it('runs control-plane halves, then data-plane halves, then disruptive tests; skips what the driver lacks, naming it', async () => {
    const log: string[] = [];
    const scopes: string[] = [];
    const namespaces: string[] = [];
    const tests = [
      recording(log, 'a/both', { capabilities: ['lb.tcp'] }, { cp: true, dp: true }),
      recording(log, 'z/disruptive', { capabilities: [], disruptive: true }, { cp: true, dp: true }),
      recording(log, 'b/cp-only', { capabilities: [] }),
      recording(log, 'c/udp', { capabilities: ['lb.udp'] }, { cp: true, dp: true }),
      recording(log, 'd/nodes', { capabilities: [], infra: ['nodes'] }),
      recording(log, 'e/three-nodes', { capabilities: [], minNodes: 3 }),
    ];
    const d = driver(['lb.tcp', 'dataPlane'], {
      beforeEach: async (s: TestScope) => void scopes.push(`before ${s.testId} ${s.namespace}`),
      afterEach: async (s: TestScope) => {
        scopes.push(`after ${s.testId}`);
        namespaces.push(s.namespace);
      },
    });
    const results = await runSuite({ client, driver: d, tests });
    assert.deepEqual(log, ['a/both:cp', 'b/cp-only:cp', 'a/both:dp', 'z/disruptive:cp', 'z/disruptive:dp']);
    const summary = results.map((r) => `${r.id} ${r.half} ${r.outcome}${r.message ? `: ${r.message}` : ''}`);
    assert.deepEqual(summary, [
      'a/both controlPlane passed',
      'b/cp-only controlPlane passed',
      'c/udp controlPlane skipped: missing capability lb.udp',
      'd/nodes controlPlane skipped: driver has no nodes infra',
      'e/three-nodes controlPlane skipped: needs 3 ready schedulable nodes, the cluster has 0',
      'a/both dataPlane passed',
      'c/udp dataPlane skipped: missing capability lb.udp',
      'z/disruptive controlPlane passed',
      'z/disruptive dataPlane passed',
    ]);
    for (const r of results) assert.ok(r.durationMs >= 0);
    // Hooks around each half that ran, with the half's own namespace, which is deleted after it.
    assert.equal(scopes.filter((s) => s.startsWith('before')).length, 5);
    assert.match(scopes[0]!, /^before a\/both ccm-a-both-cp-[a-z0-9]+$/);
    assert.equal(new Set(namespaces).size, 5);
    for (const ns of namespaces) {
      const got = await client.get<KubeObject>(NAMESPACES, undefined, ns).catch(() => undefined);
      assert.ok(got === undefined || got.metadata?.deletionTimestamp, `namespace ${ns} is neither gone nor terminating`);
    }
  });

  it('a data-plane half needs the dataPlane capability and an external client', async () => {
    const log: string[] = [];
    const tests = [recording(log, 'dp', { capabilities: [] }, { dp: true })];
    const noDataPlane = await runSuite({ client, driver: driver([]), tests });
    assert.equal(noDataPlane[0]!.message, 'missing capability dataPlane');
    const { externalClient: _e, ...withoutClient } = driver(['dataPlane']);
    const noClient = await runSuite({ client, driver: withoutClient, tests });
    assert.equal(noClient[0]!.message, 'driver has no externalClient infra');
    assert.deepEqual(log, []);
  });

  it('needs.dataPlane (a pod client) holds back only the data-plane half, naming what is missing', async () => {
    const log: string[] = [];
    const tests = [recording(log, 'pods', { capabilities: [], dataPlane: { capabilities: ['podDial'], infra: ['podClient'] } }, { cp: true, dp: true })];
    const without = await runSuite({ client, driver: driver(['dataPlane']), tests });
    assert.deepEqual(
      without.map((r) => [r.half, r.outcome, r.message]),
      [
        ['controlPlane', 'passed', undefined],
        ['dataPlane', 'skipped', 'missing capability podDial; driver has no podClient infra'],
      ],
    );
    const podClient = { dial: async () => ({ responses: [], errors: [] }) };
    const withIt = await runSuite({ client, driver: driver(['dataPlane', 'podDial'], { podClient }), tests });
    assert.deepEqual(
      withIt.map((r) => r.outcome),
      ['passed', 'passed'],
    );
    assert.deepEqual(log, ['pods:cp', 'pods:cp', 'pods:dp']);
  });

  it('focus and skip select by id substring or exact label', async () => {
    const log: string[] = [];
    const tests = [
      recording(log, 'lb/finalizer', { capabilities: [] }, { cp: true }, ['Feature:LoadBalancer']),
      recording(log, 'lb/udp', { capabilities: [] }, { cp: true }, ['Feature:LoadBalancer']),
      recording(log, 'svc/delete-collection', { capabilities: [] }, { cp: true }, ['Conformance']),
    ];
    const ids = async (o: { focus?: string[]; skip?: string[] }) => (await runSuite({ client, driver: driver([]), tests, ...o })).map((r) => r.id);
    assert.deepEqual(await ids({ focus: ['lb/'] }), ['lb/finalizer', 'lb/udp']);
    assert.deepEqual(await ids({ focus: ['Conformance'] }), ['svc/delete-collection']);
    assert.deepEqual(await ids({ focus: ['Feature:LoadBalancer'], skip: ['udp'] }), ['lb/finalizer']);
    assert.deepEqual(await ids({ skip: ['Feature:LoadBalancer'] }), ['svc/delete-collection']);
    // A label matches whole: "Conform" is neither a label nor in an id.
    assert.deepEqual(await ids({ focus: ['Conform'] }), []);
  });

  it('a failing half, a failing afterEach and a half over its timeout fail with the reason; the others still run', async () => {
    let signalAborted = false;
    const tests: CcmTestCase[] = [
      { id: 'fails', upstream: 'u', source: 's', needs: { capabilities: [] }, controlPlane: async () => assert.fail('load balancer for ns/svc still exists') },
      { id: 'after-fails', upstream: 'u', source: 's', needs: { capabilities: [] }, controlPlane: async () => {} },
      {
        id: 'hangs',
        upstream: 'u',
        source: 's',
        needs: { capabilities: [] },
        // Ignores its signal: the runner must not wait for it.
        controlPlane: async (env) => {
          env.signal.addEventListener('abort', () => (signalAborted = true));
          await new Promise(() => {});
        },
      },
      { id: 'passes', upstream: 'u', source: 's', needs: { capabilities: [] }, controlPlane: async () => {} },
    ];
    const d = driver([], {
      afterEach: async (s: TestScope) => {
        if (s.testId === 'after-fails') throw new Error('leaked load balancer');
      },
    });
    const results = await runSuite({ client, driver: d, tests, testTimeoutMs: 300 });
    assert.deepEqual(
      results.map((r) => [r.id, r.outcome, r.message]),
      [
        ['fails', 'failed', 'load balancer for ns/svc still exists'],
        ['after-fails', 'failed', 'afterEach: leaked load balancer'],
        ['hangs', 'failed', 'timed out after 300 ms'],
        ['passes', 'passed', undefined],
      ],
    );
    assert.ok(signalAborted, "the timed-out half's signal was aborted");
  });

  it('parallel runs non-disruptive halves at once; disruptive tests always run alone', async () => {
    let waiting = 0;
    let release: () => void = () => {};
    const released = new Promise<void>((r) => (release = r));
    // Each waits until both have started: only passes when the two run at the same time.
    const barrier = async (): Promise<void> => {
      if (++waiting === 2) release();
      await released;
    };
    let running = 0;
    let overlapped = false;
    const alone = async (): Promise<void> => {
      if (++running > 1) overlapped = true;
      await new Promise((r) => setImmediate(r));
      running--;
    };
    const tests: CcmTestCase[] = [
      { id: 'p1', upstream: 'u', source: 's', needs: { capabilities: [] }, controlPlane: barrier },
      { id: 'p2', upstream: 'u', source: 's', needs: { capabilities: [] }, controlPlane: barrier },
      { id: 'd1', upstream: 'u', source: 's', needs: { capabilities: [], disruptive: true }, controlPlane: alone },
      { id: 'd2', upstream: 'u', source: 's', needs: { capabilities: [], disruptive: true }, controlPlane: alone },
    ];
    const results = await runSuite({ client, driver: driver([]), tests, parallel: 4, testTimeoutMs: 20_000 });
    assert.deepEqual(
      results.map((r) => `${r.id} ${r.outcome}`),
      ['p1 passed', 'p2 passed', 'd1 passed', 'd2 passed'],
    );
    assert.equal(overlapped, false);
  });

  it('minNodes counts ready schedulable nodes, as upstream does: not cordoned, not tainted NoSchedule/NoExecute', async () => {
    const NODES = { group: '', version: 'v1', resource: 'nodes' } as const;
    const ready = {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }],
    };
    const specs: Record<string, Record<string, unknown>> = {
      'n-ok': {},
      'n-cordoned': { unschedulable: true },
      'n-tainted': { taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' }] },
      'n-prefer': { taints: [{ key: 'x', effect: 'PreferNoSchedule' }] },
    };
    for (const [name, spec] of Object.entries(specs)) {
      const node = await client.create(NODES, undefined, { apiVersion: 'v1', kind: 'Node', metadata: { name }, spec });
      await client.updateStatus(NODES, undefined, { ...node, status: ready });
    }
    try {
      const log: string[] = [];
      const results = await runSuite({
        client,
        driver: driver([]),
        tests: [recording(log, 'three', { capabilities: [], minNodes: 3 }), recording(log, 'two', { capabilities: [], minNodes: 2 })],
      });
      assert.deepEqual(
        results.map((r) => `${r.id} ${r.outcome}${r.message ? `: ${r.message}` : ''}`),
        ['three skipped: needs 3 ready schedulable nodes, the cluster has 2', 'two passed'],
      );
    } finally {
      for (const name of Object.keys(specs)) await client.delete(NODES, undefined, name);
    }
  });

  it('an aborted suite fails the half in flight as interrupted and runs nothing after it', async () => {
    const controller = new AbortController();
    const tests: CcmTestCase[] = [
      {
        id: 'in-flight',
        upstream: 'u',
        source: 's',
        needs: { capabilities: [] },
        controlPlane: async (env) => {
          controller.abort(new Error('received SIGINT'));
          await new Promise((_, reject) => env.signal.addEventListener('abort', () => reject(env.signal.reason as Error)));
        },
      },
      { id: 'next', upstream: 'u', source: 's', needs: { capabilities: [] }, controlPlane: async () => assert.fail('must not run') },
    ];
    const results = await runSuite({ client, driver: driver([]), tests, signal: controller.signal });
    assert.deepEqual(
      results.map((r) => [r.id, r.outcome, r.message]),
      [
        ['in-flight', 'failed', 'interrupted: received SIGINT'],
        ['next', 'skipped', 'not run: the suite was interrupted (received SIGINT)'],
      ],
    );
  });
});
