// Shows what V8's allocation-site pretenuring did to kplane's HTTP/2 requests, and that kplane's
// disableAllocationSitePretenuring() (src/runtime/v8-pretenuring.ts) undoes it. Two rounds, each in a
// process of its own, each with an in-process control plane on SQLite holding 10,000 ConfigMaps:
//   1. HTTP/1.1 creates and gets from h2load at 1, 16 and 64 connections (3 s each): V8 sees
//      literals that long-lived and per-request objects share (node:streams' `_events`, among
//      others) survive, and allocates their later objects in the old generation;
//   2. an HTTP/2 get round at 1,000 requests/s (10 s): the old generation's growth per scavenge,
//      the scavenge pauses and the latency are printed.
// Round `v8-default` keeps V8's pretenuring (KPLANE_V8_PRETENURING=1), round `kplane` does not.
//
//   node --expose-gc --import tsx bench/pretenuring.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlane } from '../src/controlplane/controlplane.js';
import { sqlite } from '../src/storage/factories.js';
import { BENCH_TOKEN, configMap } from './common.js';
import { h2load } from './h2load.js';
import { ScavengeGrowth, roundsInOwnProcesses } from './scavenge-growth.js';

const OBJECTS = 10_000;

async function round(kind: 'v8-default' | 'kplane'): Promise<void> {
  if (kind === 'v8-default') process.env.KPLANE_V8_PRETENURING = '1';
  const dir = mkdtempSync(join(tmpdir(), 'kplane-pretenuring-'));
  const cp = await createControlPlane({
    storage: sqlite({ dir: join(dir, 'db') }),
    dataDir: dir,
    port: 0,
    log: () => {},
    tokens: new Map([[BENCH_TOKEN, { name: 'bench', groups: ['system:masters'] }]]),
    // The load generators put up to 256 requests (h2load -m) or 250 watches on one connection, as
    // measured before kube's default of 100 streams per connection was adopted: keep the figures comparable.
    http2MaxStreamsPerConnection: 1000,
  });
  await cp.start();
  try {
    await cp.registry.lookup('', 'v1', 'namespaces')!.store.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
    const store = cp.registry.lookup('', 'v1', 'configmaps')!.store;
    for (let i = 0; i < OBJECTS; i++) await store.create('bench', configMap(`cm-${i}`, 'bench'));
    const uris = Array.from({ length: 1000 }, (_, i) => `/api/v1/namespaces/bench/configmaps/cm-${(i * 37) % OBJECTS}`);
    const headers = [`authorization: Bearer ${BENCH_TOKEN}`, 'accept: application/json'];
    const body = JSON.stringify(configMap('', 'bench')).replace('"name":""', '"generateName":"cm-h1-"');
    for (const connections of [1, 16, 64]) {
      await h2load({
        url: `${cp.url}/api/v1/namespaces/bench/configmaps`,
        seconds: 3,
        warmSeconds: 1,
        body,
        h1: true,
        connections,
        headers: [...headers, 'content-type: application/json'],
      });
      await h2load({ url: cp.url, uris, seconds: 3, warmSeconds: 1, h1: true, connections, headers });
    }
    const gcs = new ScavengeGrowth();
    gcs.fullGc(); // count only the HTTP/2 round's scavenges
    const r = await h2load({ url: cp.url, uris, rate: 1000, seconds: 10, warmSeconds: 2, headers });
    gcs.stop();
    console.log(
      `${kind.padEnd(10)} HTTP/2 gets after HTTP/1.1 traffic: ${gcs.summary('after')}; get p50 ${r.latency.p50.toFixed(2)} ms, p99 ${r.latency.p99.toFixed(2)} ms`,
    );
  } finally {
    await cp.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await roundsInOwnProcesses(import.meta.url, ['v8-default', 'kplane'] as const, round);
