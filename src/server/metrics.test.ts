import assert from 'node:assert/strict';
import perfHooks from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { CachingStorage } from '../storage/cacher/cacher.js';
import { enc } from '../storage/conformance/conformance.js';
import { MemoryStorage } from '../storage/memory/memory-storage.js';
import { EVENT_LOOP_LAG_RESOLUTION_MS, collectProcessMetrics, createApiMetrics, metricsHandler, requestMetricLabels } from './metrics.js';

const podsList = {
  verb: 'LIST',
  group: '',
  version: 'v1',
  resource: 'pods',
  subresource: '',
  scope: 'namespace',
} as const;

describe('createApiMetrics', () => {
  it('exposes request counters and histograms with upstream names, labels and buckets', async () => {
    const m = createApiMetrics({ processMetrics: false });
    m.observeRequest({ ...podsList, code: 200, durationSeconds: 0.07 });
    m.observeRequest({ ...podsList, code: 200, durationSeconds: 0.3 });
    m.observeRequest({ ...podsList, dryRun: 'All', verb: 'POST', scope: 'resource', code: 201, durationSeconds: 0.01 });
    const res = await metricsHandler(m.registry)();
    assert.equal(res.status, 200);
    assert.match(res.contentType, /^text\/plain; version=0\.0\.4/);
    const text = res.body;
    assert.match(text, /# TYPE apiserver_request_total counter/);
    assert.ok(
      text.includes(
        'apiserver_request_total{verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver",code="200"} 2',
      ),
      text,
    );
    assert.ok(
      text.includes(
        'apiserver_request_total{verb="POST",dry_run="All",group="",version="v1",resource="pods",subresource="",scope="resource",component="apiserver",code="201"} 1',
      ),
    );
    const bucket = (le: string) =>
      `apiserver_request_duration_seconds_bucket{le="${le}",verb="LIST",dry_run="",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"}`;
    assert.ok(text.includes(`${bucket('0.05')} 0`));
    assert.ok(text.includes(`${bucket('0.1')} 1`));
    assert.ok(text.includes(`${bucket('0.4')} 2`));
    assert.ok(text.includes(`${bucket('60')} 2`));
  });

  it('tracks long-running requests and watchers with release functions that act once', async () => {
    const m = createApiMetrics({ processMetrics: false });
    const done = m.trackLongRunning({ ...podsList, verb: 'WATCH' });
    const stopWatcher = m.trackWatcher({ group: '', version: 'v1', kind: 'Pod' });
    m.watchEventsSent({ group: '', version: 'v1', kind: 'Pod' }, 3);
    let text = await m.registry.metrics();
    assert.match(
      text,
      /apiserver_longrunning_requests\{verb="WATCH",group="",version="v1",resource="pods",subresource="",scope="namespace",component="apiserver"\} 1/,
    );
    assert.match(text, /apiserver_registered_watchers\{group="",version="v1",kind="Pod"\} 1/);
    assert.match(text, /apiserver_watch_events_total\{group="",version="v1",kind="Pod"\} 3/);
    done();
    done();
    stopWatcher();
    text = await m.registry.metrics();
    assert.match(text, /apiserver_longrunning_requests\{[^}]*\} 0/);
    assert.match(text, /apiserver_registered_watchers\{[^}]*\} 0/);
  });

  it('sets storage object counts, storage latencies and in-flight gauges', async () => {
    const m = createApiMetrics({ processMetrics: false });
    m.setStorageObjects('deployments.apps', 7);
    m.observeStorage({ operation: 'get', backend: 'sqlite', durationSeconds: 0.0002, failed: false });
    m.observeStorage({ operation: 'update', backend: 'sqlite', durationSeconds: 0.003, failed: true });
    m.setInflightRequests('mutating', 4);
    const text = await m.registry.metrics();
    assert.match(text, /apiserver_storage_objects\{resource="deployments.apps"\} 7/);
    assert.match(text, /kplane_storage_request_duration_seconds_bucket\{le="0.00025",operation="get",backend="sqlite"\} 1/);
    assert.match(text, /kplane_storage_request_errors_total\{operation="update",backend="sqlite"\} 1/);
    assert.doesNotMatch(text, /kplane_storage_request_errors_total\{operation="get"/);
    assert.match(text, /apiserver_current_inflight_requests\{request_kind="mutating"\} 4/);
  });

  it("counts a watch cache ring's growth and shrink as kube's watch_cache_capacity metrics", async () => {
    const m = createApiMetrics({ processMetrics: false });
    let now = 1_000_000;
    const cacher = new CachingStorage(new MemoryStorage(), {
      historyWindowMs: 1_000,
      clock: () => now,
      // As the control plane wires it, with the prefix's group and resource.
      onHistoryCapacity: (_prefix, capacity, previous) => m.recordWatchCacheCapacity('apps', 'deployments', capacity, previous),
    });
    const series = async (name: string): Promise<string | undefined> =>
      (await m.registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{group="apps",resource="deployments"} `));
    try {
      await cacher.register('/registry/apps/deployments/');
      assert.equal(await series('watch_cache_capacity'), 'watch_cache_capacity{group="apps",resource="deployments"} 100');
      assert.equal(await series('watch_cache_capacity_increase_total'), undefined, 'the starting capacity is no increase');
      // 320 fresh events: the ring doubles twice (200, 400).
      let kv = await cacher.create('/registry/apps/deployments/ns/a', enc('0'));
      for (let i = 1; i < 320; i++) kv = await cacher.update(kv.key, enc(String(i)), kv.modRevision);
      await cacher.list('/registry/apps/deployments/');
      assert.equal(await series('watch_cache_capacity'), 'watch_cache_capacity{group="apps",resource="deployments"} 400');
      assert.equal(await series('watch_cache_capacity_increase_total'), 'watch_cache_capacity_increase_total{group="apps",resource="deployments"} 2');
      // The window passes; 80 more events fill the ring, the next finds it old a quarter from its
      // newest and halves it; those after find that quarter fresh again.
      now += 1_500;
      for (let i = 0; i < 85; i++) kv = await cacher.update(kv.key, enc(`late${i}`), kv.modRevision);
      await cacher.list('/registry/apps/deployments/');
      assert.equal(await series('watch_cache_capacity'), 'watch_cache_capacity{group="apps",resource="deployments"} 200');
      assert.equal(await series('watch_cache_capacity_decrease_total'), 'watch_cache_capacity_decrease_total{group="apps",resource="deployments"} 1');
      const text = await m.registry.metrics();
      assert.match(text, /^# HELP watch_cache_capacity Total capacity of watch cache broken by resource type\.$/m);
      assert.match(text, /^# TYPE watch_cache_capacity gauge$/m);
      assert.match(text, /^# HELP watch_cache_capacity_increase_total Total number of watch cache capacity increase events broken by resource type\.$/m);
      assert.match(text, /^# TYPE watch_cache_capacity_increase_total counter$/m);
      assert.match(text, /^# HELP watch_cache_capacity_decrease_total Total number of watch cache capacity decrease events broken by resource type\.$/m);
    } finally {
      await cacher.close();
    }
  });

  it('gives every server its own registry', async () => {
    const a = createApiMetrics();
    const b = createApiMetrics();
    a.observeRequest({ ...podsList, code: 200, durationSeconds: 0.1 });
    assert.match(await a.registry.metrics(), /apiserver_request_total\{/);
    assert.doesNotMatch(await b.registry.metrics(), /apiserver_request_total\{/);
    assert.match(await b.registry.metrics(), /process_cpu_user_seconds_total/);
    assert.match(await b.registry.metrics(), /nodejs_eventloop_lag_seconds/);
  });

  it("samples the event loop every 100 ms, not at prom-client's 10 ms that keeps an idle process awake", () => {
    // prom-client asks node:perf_hooks for its lag monitor when the metrics are registered.
    const hooks = perfHooks as { monitorEventLoopDelay: typeof perfHooks.monitorEventLoopDelay };
    const original = hooks.monitorEventLoopDelay;
    const resolutions: (number | undefined)[] = [];
    hooks.monitorEventLoopDelay = (o) => {
      resolutions.push(o?.resolution);
      return original(o);
    };
    try {
      createApiMetrics();
      collectProcessMetrics(new Registry()); // the controller-manager's
    } finally {
      hooks.monitorEventLoopDelay = original;
    }
    assert.equal(EVENT_LOOP_LAG_RESOLUTION_MS, 100);
    assert.deepEqual(resolutions, [100, 100]);
  });
});

describe('requestMetricLabels', () => {
  const base = { isResourceRequest: true, apiVersion: 'v1', resource: 'pods', path: '/api/v1/namespaces/default/pods' };

  it('reports GET on a collection as LIST and ?watch=true as WATCH', () => {
    assert.equal(requestMetricLabels({ ...base, method: 'GET', verb: 'list', namespace: 'default' }).verb, 'LIST');
    const watch = requestMetricLabels({ ...base, method: 'GET', verb: 'watch', namespace: 'default', query: new URLSearchParams('watch=1') });
    assert.deepEqual(watch, {
      verb: 'WATCH',
      dryRun: '',
      group: '',
      version: 'v1',
      resource: 'pods',
      subresource: '',
      scope: 'namespace',
      component: 'apiserver',
    });
    assert.equal(requestMetricLabels({ ...base, method: 'GET', verb: 'list', query: new URLSearchParams('watch=false') }).verb, 'LIST');
  });

  it('reports a named GET as GET in scope resource, and create as scope resource', () => {
    const get = requestMetricLabels({ ...base, method: 'GET', verb: 'get', namespace: 'default', name: 'p' });
    assert.equal(get.verb, 'GET');
    assert.equal(get.scope, 'resource');
    const create = requestMetricLabels({ ...base, method: 'POST', verb: 'create', namespace: 'default', query: new URLSearchParams('dryRun=All&dryRun=All') });
    assert.deepEqual([create.verb, create.scope, create.dryRun], ['POST', 'resource', 'All']);
  });

  it('reports apply patches as APPLY, unknown methods as other, bad dryRun as invalid', () => {
    const apply = requestMetricLabels({ ...base, method: 'PATCH', verb: 'patch', name: 'p', contentType: 'application/apply-patch+yaml; charset=utf-8' });
    assert.equal(apply.verb, 'APPLY');
    assert.equal(requestMetricLabels({ ...base, method: 'BREW', verb: 'brew' }).verb, 'other');
    assert.equal(requestMetricLabels({ ...base, method: 'DELETE', verb: 'delete', name: 'p', query: new URLSearchParams('dryRun=yes') }).dryRun, 'invalid');
  });

  it('reports non-resource requests with the path as subresource and an empty scope', () => {
    const l = requestMetricLabels({ method: 'GET', verb: 'get', isResourceRequest: false, path: '/readyz' });
    assert.deepEqual(l, { verb: 'GET', dryRun: '', scope: '', component: 'apiserver', group: '', version: '', resource: '', subresource: '/readyz' });
  });
});
