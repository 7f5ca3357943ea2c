// Feature gates as a user meets them (issue 24): `kplane serve --feature-gates` with upstream's
// syntax and messages, `--emulated-version`, the help listing, kubernetes_feature_enabled on
// /metrics, and each gated capability actually off when its gate is.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  ConsistentListFromCache,
  KplaneCELCostLimits,
  KplaneWatchCache,
  newKubeFeatureGate,
  Version,
  WatchList,
  APIResponseCompression,
} from '../../src/featuregate/index.js';
import { adminCredentials, RawClient, type KubeStatus } from '../support/https.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot } from '../support/tools.js';

const CMS = '/api/v1/namespaces/default/configmaps';

function kplane(args: readonly string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), ...args], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NODE_OPTIONS: `--conditions=kplane-source ${process.env['NODE_OPTIONS'] ?? ''}` },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('kplane serve --feature-gates and --emulated-version', { timeout: 120_000 }, () => {
  it('lists every gate with its stage and default in --help', () => {
    const r = kplane(['serve', '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /--feature-gates LIST {6}A set of key=value pairs that describe feature gates for alpha\/experimental features\. Options are:\n/);
    for (const line of [
      'APIResponseCompression=true|false (BETA - default=true)',
      'AllAlpha=true|false (ALPHA - default=false)',
      'CoordinatedLeaderElection=true|false (BETA - default=false)',
      'KplaneCELCostLimits=true|false (BETA - default=true)',
      'KplaneWatchCache=true|false (BETA - default=true)',
      'MutatingAdmissionPolicy=true|false (ALPHA - default=false)',
      'WatchList=true|false (BETA - default=true)',
    ])
      assert.ok(r.stdout.includes(line), `help lists ${line}`);
  });

  it("refuses malformed, unknown and locked gates with pflag's and featuregate's messages", () => {
    const cases: Array<[string[], string]> = [
      [['--feature-gates=WatchList'], 'kplane: invalid argument "WatchList" for "--feature-gates" flag: missing bool value for WatchList\n'],
      [
        ['--feature-gates', 'WatchList=yes'],
        'kplane: invalid argument "WatchList=yes" for "--feature-gates" flag: invalid value of WatchList=yes, err: strconv.ParseBool: parsing "yes": invalid syntax\n',
      ],
      [['--feature-gates=NoSuchGate=true'], 'kplane: invalid argument "NoSuchGate=true" for "--feature-gates" flag: unrecognized feature gate: NoSuchGate\n'],
      [['--emulated-version=1.34', '--feature-gates=ConsistentListFromCache=false'], 'kplane: emulation version 1.34 is not between [1.30, 1.33]\n'],
      [['--emulated-version=wardle=1.2'], 'kplane: invalid argument "wardle=1.2" for "--emulated-version" flag: component not registered: wardle\n'],
    ];
    for (const [args, stderr] of cases) {
      const r = kplane(['serve', '--data-dir', join(repoRoot, '.never-created'), ...args]);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stderr, stderr);
    }
  });
});

/** Lists the server's storage answered (the watch cache answers the others). */
async function storageLists(c: RawClient): Promise<number> {
  const text = (await c.request({ path: '/metrics' })).text();
  const m = /kplane_storage_request_duration_seconds_count\{operation="list",backend="sqlite"\} (\d+)/.exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * A server with the default gates and one with `offGates` set, started before the suite's tests and
 * stopped after them; `clients.on` and `clients.off` are admin clients of each.
 */
function serversOnAndOff(offGates: readonly string[]): { on: RawClient; off: RawClient } {
  const clients = {} as { on: RawClient; off: RawClient };
  let servers: TestServer[] = [];
  before(async () => {
    const gates = newKubeFeatureGate();
    for (const g of offGates) gates.set(g);
    servers = await Promise.all([startTestServer(), startTestServer({ featureGates: gates })]);
    clients.on = new RawClient(servers[0]!.url, adminCredentials(servers[0]!.dataDir));
    clients.off = new RawClient(servers[1]!.url, adminCredentials(servers[1]!.dataDir));
  });
  after(async () => {
    clients.on?.close();
    clients.off?.close();
    await Promise.all(servers.map((s) => s.stop()));
  });
  return clients;
}

describe('gated capabilities', { timeout: 120_000 }, () => {
  const clients = serversOnAndOff([`${WatchList}=false,${APIResponseCompression}=false`, `${ConsistentListFromCache}=false`]);

  before(async () => {
    // Enough data for a list over 128 KiB, which is gzipped when compression is on.
    const big = 'x'.repeat(60_000);
    for (const c of [clients.on, clients.off])
      for (let i = 0; i < 4; i++) {
        const r = await c.request({
          method: 'POST',
          path: CMS,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `big-${i}` }, data: { big } }),
        });
        assert.equal(r.status, 201, r.text());
      }
  });

  it('WatchList off: a sendInitialEvents watch is a 422 with the upstream cause; on: it streams', async () => {
    const path = `${CMS}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1`;
    const r = await clients.off.request({ path, headers: { accept: 'application/json' } });
    assert.equal(r.status, 422, r.text());
    const st = r.json<KubeStatus & { details?: { causes?: { field?: string; message?: string }[] } }>();
    assert.deepEqual(
      st.details?.causes?.map((c) => `${c.field}: ${c.message}`),
      ['sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'],
    );
    const ok = await clients.on.request({ path, headers: { accept: 'application/json' } });
    assert.equal(ok.status, 200, ok.text());
    assert.match(ok.text(), /"type":"ADDED"/);
  });

  it('APIResponseCompression off: a large list is not gzipped even when the client asks', async () => {
    const headers = { accept: 'application/json', 'accept-encoding': 'gzip' };
    assert.equal((await clients.on.request({ path: CMS, headers })).headers['content-encoding'], 'gzip');
    assert.equal((await clients.off.request({ path: CMS, headers })).headers['content-encoding'], undefined);
  });

  it('ConsistentListFromCache off: consistent lists are read from storage', async () => {
    for (const [c, wantMore] of [
      [clients.on, false],
      [clients.off, true],
    ] as const) {
      // The storage metric counts every resource's lists, and background loops (the feature flow's
      // identity Leases, controllers' relists) add a few: 20 lists of our own stand well above them.
      const before = await storageLists(c);
      for (let i = 0; i < 20; i++) assert.equal((await c.request({ path: CMS, headers: { accept: 'application/json' } })).status, 200);
      const grew = (await storageLists(c)) - before;
      assert.equal(grew >= 20, wantMore, `storage lists grew by ${grew}`);
    }
  });

  it('publishes kubernetes_feature_enabled with the stage, GA as ""', async () => {
    const on = (await clients.on.request({ path: '/metrics' })).text();
    const off = (await clients.off.request({ path: '/metrics' })).text();
    assert.match(on, /# HELP kubernetes_feature_enabled \[BETA\] This metric records the data about the stage and enablement of a k8s feature\./);
    assert.match(on, /kubernetes_feature_enabled\{name="WatchList",stage="BETA"\} 1/);
    assert.match(off, /kubernetes_feature_enabled\{name="WatchList",stage="BETA"\} 0/);
    assert.match(on, /kubernetes_feature_enabled\{name="AllAlpha",stage="ALPHA"\} 0/);
    const ga = newKubeFeatureGate(Version.majorMinor(1, 33));
    assert.equal(ga.getAll().get(ConsistentListFromCache)?.preRelease, 'BETA');
  });
});

describe('kplane capabilities as gates', { timeout: 120_000 }, () => {
  const clients = serversOnAndOff([`${KplaneWatchCache}=false,${KplaneCELCostLimits}=false`]);

  it('KplaneWatchCache off (as --watch-cache=false): lists at resourceVersion=0 are read from storage', async () => {
    for (const [c, wantMore] of [
      [clients.on, false],
      [clients.off, true],
    ] as const) {
      const before = await storageLists(c);
      for (let i = 0; i < 20; i++) assert.equal((await c.request({ path: `${CMS}?resourceVersion=0`, headers: { accept: 'application/json' } })).status, 200);
      const grew = (await storageLists(c)) - before;
      assert.equal(grew >= 20, wantMore, `storage lists grew by ${grew}`);
    }
  });

  it('KplaneCELCostLimits off: a CRD whose rule is over the estimated cost budget is accepted', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'costlies.cost.example.com' },
      spec: {
        group: 'cost.example.com',
        scope: 'Namespaced',
        names: { plural: 'costlies', singular: 'costly', kind: 'Costly' },
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
    };
    const post = (c: RawClient) =>
      c.request({
        method: 'POST',
        path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(crd),
      });
    const refused = await post(clients.on);
    assert.equal(refused.status, 422, refused.text());
    assert.match(refused.text(), /estimated rule cost exceeds budget by factor of more than 100x/);
    const accepted = await post(clients.off);
    assert.equal(accepted.status, 201, accepted.text());
  });
});
