// Prometheus metrics for one API server, with upstream's names, labels and buckets
// (k8s.io/apiserver/pkg/endpoints/metrics/metrics.go) so kube dashboards and alerts work unchanged.
// Every server owns its Registry: prom-client's global registry would mix two servers in one process.
import type { FeatureGate } from '../featuregate/index.js';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';

/** The component label upstream uses for the generic API server. */
export const APISERVER_COMPONENT = 'apiserver';

export interface RequestLabels {
  /** Upper-case reported verb: GET, LIST, WATCH, CREATE, UPDATE, PATCH, APPLY, DELETE, DELETECOLLECTION, ... or `other`. */
  readonly verb: string;
  /** Sorted, de-duplicated dryRun values joined by `,` (`All`), `` when absent. */
  readonly dryRun?: string;
  readonly group: string;
  readonly version: string;
  readonly resource: string;
  /** The subresource, or for non-resource requests the path (upstream's convention). */
  readonly subresource: string;
  /** `resource`, `namespace`, `cluster` or `` (non-resource). */
  readonly scope: string;
  readonly component?: string;
}

export type LongRunningLabels = Omit<RequestLabels, 'dryRun'>;

export interface GroupVersionKindLabels {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export type RequestKind = 'readOnly' | 'mutating';

export interface ApiMetrics {
  readonly registry: Registry;
  /** apiserver_request_total: labels verb, dry_run, group, version, resource, subresource, scope, component, code. */
  readonly requestTotal: SeriesCounter;
  /** apiserver_request_duration_seconds: labels verb, dry_run, group, version, resource, subresource, scope, component. */
  readonly requestDurationSeconds: SeriesHistogram;
  readonly longRunningRequests: Gauge<'verb' | 'group' | 'version' | 'resource' | 'subresource' | 'scope' | 'component'>;
  readonly registeredWatchers: Gauge<'group' | 'version' | 'kind'>;
  readonly watchEventsTotal: Counter<'group' | 'version' | 'kind'>;
  readonly storageObjects: Gauge<'resource'>;
  /** kplane_storage_request_duration_seconds: labels operation, backend. */
  readonly storageRequestDurationSeconds: SeriesHistogram;
  readonly storageRequestErrorsTotal: Counter<'operation' | 'backend'>;
  /** apiserver_storage_consistency_checks_total: the watch cache self-check's outcomes. */
  readonly storageConsistencyChecksTotal: Counter<'group' | 'resource' | 'status'>;
  /** watch_cache_capacity: each resource's watch cache ring capacity now (upstream has no apiserver_ prefix here). */
  readonly watchCacheCapacity: Gauge<'group' | 'resource'>;
  readonly currentInflightRequests: Gauge<'request_kind'>;

  /** Records one finished request (call once per request, after the response is written). */
  observeRequest(o: RequestLabels & { readonly code: number; readonly durationSeconds: number }): void;
  /**
   * The same for a request in RequestInfo's terms, its labels derived as requestMetricLabels derives
   * them (upstream's rules) without building them as objects: the API server calls this per request.
   */
  recordRequest(
    method: string,
    info: RequestInfoForMetrics,
    query: URLSearchParams | undefined,
    contentType: string | undefined,
    code: number,
    durationSeconds: number,
  ): void;
  /** Counts an open long-running request (watch, exec, proxy); call the returned function when it ends. */
  trackLongRunning(labels: LongRunningLabels): () => void;
  /** Counts an open watcher of a kind; call the returned function when it closes. */
  trackWatcher(gvk: GroupVersionKindLabels): () => void;
  watchEventsSent(gvk: GroupVersionKindLabels, count?: number): void;
  /** `resource` is `<resource>.<group>` (upstream), or the bare resource for the core group. */
  setStorageObjects(resource: string, count: number): void;
  /** One storage call; `durationSeconds` undefined counts a failure without a latency sample (watch streams). */
  observeStorage(o: { readonly operation: string; readonly backend: string; readonly durationSeconds?: number; readonly failed: boolean }): void;
  setInflightRequests(kind: RequestKind, count: number): void;
  /** One watch cache consistency check: `status` success, failure or error. */
  recordConsistencyCheck(group: string, resource: string, status: string): void;
  /**
   * A watch cache ring's capacity (RecordsWatchCacheCapacityChange upstream): sets watch_cache_capacity
   * and, when `previous` is given (a resize), counts watch_cache_capacity_increase_total or
   * watch_cache_capacity_decrease_total.
   */
  recordWatchCacheCapacity(group: string, resource: string, capacity: number, previous?: number): void;
  /** kubernetes_feature_enabled for every feature the gate knows at its version (AddMetrics). */
  recordFeatures(gate: FeatureGate): void;
  /** A request the server answered itself (the timeout filter's 504): apiserver_request_terminations_total. */
  recordRequestTermination(
    method: string,
    info: RequestInfoForMetrics,
    query: URLSearchParams | undefined,
    contentType: string | undefined,
    code: number,
  ): void;
  /**
   * A handler that finished after its request timed out (apiserver_request_post_timeout_total):
   * `timeout-handler` when the timeout filter answered, `rest-handler` when the write handler's own
   * bound did; status `ok` (it returned; for the timeout handler also with an error answer),
   * `error` (the write handler returned an error) or `panic` (it threw something unexpected).
   */
  recordPostTimeout(source: 'timeout-handler' | 'rest-handler', status: 'ok' | 'error' | 'panic'): void;
}

/**
 * How often the event-loop lag monitor (`nodejs_eventloop_lag_*`) samples. prom-client's default,
 * 10 ms, wakes an idle process 100 times a second: on a 2-core VM that was most of an idle
 * controller-manager's CPU (0.67-0.97 % of a core with it, 0.10-0.57 % at 100 ms; bench `idlecm`).
 * At 100 ms every stall of 100 ms or more is still seen, shorter ones in proportion to their length.
 */
export const EVENT_LOOP_LAG_RESOLUTION_MS = 100;

/** Node process metrics (CPU, memory, event loop lag, GC) into `registry`. */
export function collectProcessMetrics(registry: Registry): void {
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_LAG_RESOLUTION_MS });
}

export interface ApiMetricsOptions {
  /** Node process metrics (CPU, memory, event loop lag, GC). Default true. */
  readonly processMetrics?: boolean;
}

/** apiserver_request_duration_seconds buckets, tuned upstream for the API call latency SLOs. */
export const REQUEST_DURATION_BUCKETS_SECONDS: readonly number[] = [0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/**
 * Storage calls: etcd's buckets start at 5 ms, but an in-process sqlite read takes tens of
 * microseconds, so these start at 100 µs to keep the local backend's distribution visible.
 */
export const STORAGE_DURATION_BUCKETS_SECONDS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

export function createApiMetrics(opts: ApiMetricsOptions = {}): ApiMetrics {
  const registry = new Registry();
  const registers = [registry];

  // The two per-request metrics (and the per-storage-call histogram) are recorded by key, without
  // garbage: see series-metrics.ts.
  const requestTotal = new SeriesCounter(
    'apiserver_request_total',
    'Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.',
    registry,
  );
  const requestDurationSeconds = new SeriesHistogram(
    'apiserver_request_duration_seconds',
    'Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.',
    REQUEST_DURATION_BUCKETS_SECONDS,
    registry,
  );
  const longRunningRequests = new Gauge({
    name: 'apiserver_longrunning_requests',
    help: 'Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component'] as const,
    registers,
  });
  const registeredWatchers = new Gauge({
    name: 'apiserver_registered_watchers',
    help: 'Number of currently registered watchers for a given resources',
    labelNames: ['group', 'version', 'kind'] as const,
    registers,
  });
  const watchEventsTotal = new Counter({
    name: 'apiserver_watch_events_total',
    help: 'Number of events sent in watch clients',
    labelNames: ['group', 'version', 'kind'] as const,
    registers,
  });
  const featureEnabled = new Gauge({
    name: 'kubernetes_feature_enabled',
    help: '[BETA] This metric records the data about the stage and enablement of a k8s feature.',
    labelNames: ['name', 'stage'] as const,
    registers,
  });
  const storageObjects = new Gauge({
    name: 'apiserver_storage_objects',
    help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
    labelNames: ['resource'] as const,
    registers,
  });
  const storageRequestDurationSeconds = new SeriesHistogram(
    'kplane_storage_request_duration_seconds',
    'Storage backend call latency in seconds for each operation and backend. Watches are counted when opened, not timed.',
    STORAGE_DURATION_BUCKETS_SECONDS,
    registry,
  );
  const storageRequestErrorsTotal = new Counter({
    name: 'kplane_storage_request_errors_total',
    help: 'Storage backend calls that failed, for each operation and backend.',
    labelNames: ['operation', 'backend'] as const,
    registers,
  });
  const storageConsistencyChecksTotal = new Counter({
    name: 'apiserver_storage_consistency_checks_total',
    help: 'Counter for status of consistency checks between etcd and watch cache',
    labelNames: ['group', 'resource', 'status'] as const,
    registers,
  });
  // storage/cacher/metrics/metrics.go: these three have the watch_cache subsystem but no namespace.
  const watchCacheCapacity = new Gauge({
    name: 'watch_cache_capacity',
    help: 'Total capacity of watch cache broken by resource type.',
    labelNames: ['group', 'resource'] as const,
    registers,
  });
  const watchCacheCapacityIncreaseTotal = new Counter({
    name: 'watch_cache_capacity_increase_total',
    help: 'Total number of watch cache capacity increase events broken by resource type.',
    labelNames: ['group', 'resource'] as const,
    registers,
  });
  const watchCacheCapacityDecreaseTotal = new Counter({
    name: 'watch_cache_capacity_decrease_total',
    help: 'Total number of watch cache capacity decrease events broken by resource type.',
    labelNames: ['group', 'resource'] as const,
    registers,
  });
  const requestTerminationsTotal = new Counter({
    name: 'apiserver_request_terminations_total',
    help: 'Number of requests which apiserver terminated in self-defense.',
    labelNames: ['verb', 'group', 'version', 'resource', 'subresource', 'scope', 'component', 'code'] as const,
    registers,
  });
  const requestPostTimeoutTotal = new Counter({
    name: 'apiserver_request_post_timeout_total',
    help: 'Tracks the activity of the request handlers after the associated requests have been timed out by the apiserver',
    labelNames: ['source', 'status'] as const,
    registers,
  });
  const currentInflightRequests = new Gauge({
    name: 'apiserver_current_inflight_requests',
    help: 'Maximal number of currently used inflight request limit of this apiserver per request kind in last second.',
    labelNames: ['request_kind'] as const,
    registers,
  });

  if (opts.processMetrics ?? true) collectProcessMetrics(registry);

  /** One request in both request metrics; the key names the label values, the labels object is made once per series. */
  const record = (
    verb: string,
    dryRun: string,
    group: string,
    version: string,
    resource: string,
    subresource: string,
    scope: string,
    component: string,
    code: number,
    seconds: number,
  ): void => {
    const key = `${verb}\0${dryRun}\0${group}\0${version}\0${resource}\0${subresource}\0${scope}\0${component}`;
    let series = requestDurationSeconds.find(key);
    if (series === undefined) {
      series = requestDurationSeconds.add(key, { verb, dry_run: dryRun, group, version, resource, subresource, scope, component });
    }
    if (!requestTotal.inc(key, code)) requestTotal.add(key, code, { ...series.labels, code: String(code) });
    requestDurationSeconds.observe(series, seconds);
  };

  /** Returns a release function that decrements exactly once, however often it is called. */
  const holdGauge = <L extends string>(gauge: Gauge<L>, labels: Partial<Record<L, string>>): (() => void) => {
    gauge.inc(labels);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      gauge.dec(labels);
    };
  };

  return {
    registry,
    requestTotal,
    requestDurationSeconds,
    longRunningRequests,
    registeredWatchers,
    watchEventsTotal,
    storageObjects,
    storageRequestDurationSeconds,
    storageRequestErrorsTotal,
    storageConsistencyChecksTotal,
    watchCacheCapacity,
    currentInflightRequests,
    observeRequest(o) {
      record(o.verb, o.dryRun ?? '', o.group, o.version, o.resource, o.subresource, o.scope, o.component ?? APISERVER_COMPONENT, o.code, o.durationSeconds);
    },
    recordRequestTermination(method, r, query, contentType, code) {
      const scope = metricsScope(r);
      const verb = reportedVerb(method, r.verb, query, contentType, scope);
      const resource = r.isResourceRequest
        ? { group: r.apiGroup ?? '', version: r.apiVersion ?? '', resource: r.resource ?? '', subresource: r.subresource ?? '' }
        : { group: '', version: '', resource: '', subresource: r.path };
      requestTerminationsTotal.inc({ verb, ...resource, scope, component: APISERVER_COMPONENT, code: String(code) });
    },
    recordPostTimeout(source, status) {
      requestPostTimeoutTotal.inc({ source, status });
    },
    recordRequest(method, r, query, contentType, code, seconds) {
      const scope = metricsScope(r);
      const verb = reportedVerb(method, r.verb, query, contentType, scope);
      if (r.isResourceRequest) {
        record(
          verb,
          metricsDryRun(query),
          r.apiGroup ?? '',
          r.apiVersion ?? '',
          r.resource ?? '',
          r.subresource ?? '',
          scope,
          APISERVER_COMPONENT,
          code,
          seconds,
        );
      } else {
        record(verb, metricsDryRun(query), '', '', '', r.path, scope, APISERVER_COMPONENT, code, seconds);
      }
    },
    trackLongRunning(l) {
      return holdGauge(longRunningRequests, {
        verb: l.verb,
        group: l.group,
        version: l.version,
        resource: l.resource,
        subresource: l.subresource,
        scope: l.scope,
        component: l.component ?? APISERVER_COMPONENT,
      });
    },
    trackWatcher(gvk) {
      return holdGauge(registeredWatchers, { group: gvk.group, version: gvk.version, kind: gvk.kind });
    },
    watchEventsSent(gvk, count = 1) {
      watchEventsTotal.inc({ group: gvk.group, version: gvk.version, kind: gvk.kind }, count);
    },
    setStorageObjects(resource, count) {
      storageObjects.set({ resource }, count);
    },
    observeStorage(o) {
      if (o.durationSeconds !== undefined) {
        const key = `${o.operation}\0${o.backend}`;
        const series = storageRequestDurationSeconds.find(key) ?? storageRequestDurationSeconds.add(key, { operation: o.operation, backend: o.backend });
        storageRequestDurationSeconds.observe(series, o.durationSeconds);
      }
      if (o.failed) storageRequestErrorsTotal.inc({ operation: o.operation, backend: o.backend });
    },
    recordConsistencyCheck(group, resource, status) {
      storageConsistencyChecksTotal.inc({ group, resource, status });
    },
    recordWatchCacheCapacity(group, resource, capacity, previous) {
      watchCacheCapacity.set({ group, resource }, capacity);
      if (previous === undefined || previous === capacity) return;
      (previous < capacity ? watchCacheCapacityIncreaseTotal : watchCacheCapacityDecreaseTotal).inc({ group, resource });
    },
    recordFeatures(gate) {
      for (const [name, spec] of gate.getAll()) featureEnabled.set({ name, stage: spec.preRelease }, gate.enabled(name) ? 1 : 0);
    },
    setInflightRequests(kind, count) {
      currentInflightRequests.set({ request_kind: kind }, count);
    },
  };
}

/** What a request looks like to the metrics, in the terms of the lead's RequestInfo. */
export interface RequestForMetrics {
  /** HTTP method. */
  readonly method: string;
  /** RequestInfo verb (get, list, watch, create, update, patch, delete, deletecollection, ...). */
  readonly verb: string;
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly apiGroup?: string;
  readonly apiVersion?: string;
  readonly resource?: string;
  readonly subresource?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly query?: URLSearchParams;
  readonly contentType?: string;
  readonly component?: string;
}

/** The RequestInfo fields the request metrics read. */
export type RequestInfoForMetrics = Pick<
  RequestForMetrics,
  'verb' | 'isResourceRequest' | 'path' | 'apiGroup' | 'apiVersion' | 'resource' | 'subresource' | 'namespace' | 'name'
>;

const VALID_REPORTED_VERBS = new Set([
  'APPLY',
  'CONNECT',
  'CREATE',
  'DELETE',
  'DELETECOLLECTION',
  'GET',
  'LIST',
  'PATCH',
  'POST',
  'PROXY',
  'PUT',
  'UPDATE',
  'WATCH',
  'WATCHLIST',
]);

const APPLY_PATCH_CONTENT_TYPE = 'application/apply-patch+yaml';

function isWatchQuery(query: URLSearchParams | undefined): boolean {
  const v = query?.get('watch');
  return v !== null && v !== undefined && v.toLowerCase() !== '0' && v.toLowerCase() !== 'false';
}

/** CleanScope upstream. */
export function metricsScope(r: Pick<RequestForMetrics, 'name' | 'verb' | 'namespace' | 'isResourceRequest'>): string {
  if (r.name || r.verb === 'create') return 'resource';
  if (r.namespace) return 'namespace';
  if (r.isResourceRequest) return 'cluster';
  return '';
}

/** cleanDryRun upstream: `` when absent, sorted unique values, `invalid` for anything but `All`. */
export function metricsDryRun(query: URLSearchParams | undefined): string {
  if (query === undefined || !query.has('dryRun')) return '';
  const values = query.getAll('dryRun');
  if (values.length === 0) return '';
  if (values.some((v) => v !== 'All')) return 'invalid';
  return [...new Set(values)].sort().join(',');
}

/**
 * The reported verb the way upstream derives it: from the HTTP method and scope (GET → LIST on
 * collections), WATCH for `?watch=true` and the legacy /watch/ paths, APPLY for apply patches,
 * and `other` for anything unexpected so odd methods cannot blow up the label cardinality.
 */
export function metricsVerb(r: Pick<RequestForMetrics, 'method' | 'verb' | 'query' | 'contentType'>, scope: string): string {
  return reportedVerb(r.method, r.verb, r.query, r.contentType, scope);
}

function reportedVerb(httpMethod: string, infoVerb: string, query: URLSearchParams | undefined, contentType: string | undefined, scope: string): string {
  const method = httpMethod.toUpperCase();
  let verb = method;
  if (method === 'GET' || method === 'HEAD') verb = scope !== 'resource' && scope !== '' ? 'LIST' : 'GET';
  const suggested = infoVerb.toUpperCase();
  if (suggested === 'WATCH' || suggested === 'WATCHLIST' || ((method === 'GET' || method === 'LIST') && isWatchQuery(query))) {
    verb = 'WATCH';
  } else if (verb === 'PATCH' && contentType?.split(';')[0]?.trim().toLowerCase() === APPLY_PATCH_CONTENT_TYPE) {
    verb = 'APPLY';
  } else if (verb === 'WATCHLIST') {
    verb = 'WATCH';
  }
  return VALID_REPORTED_VERBS.has(verb) ? verb : 'other';
}

/** All request labels for a request; non-resource requests report their path as subresource, like upstream. */
export function requestMetricLabels(r: RequestForMetrics): RequestLabels {
  const scope = metricsScope(r);
  const base = { verb: metricsVerb(r, scope), dryRun: metricsDryRun(r.query), scope, component: r.component ?? APISERVER_COMPONENT };
  return r.isResourceRequest
    ? { ...base, group: r.apiGroup ?? '', version: r.apiVersion ?? '', resource: r.resource ?? '', subresource: r.subresource ?? '' }
    : { ...base, group: '', version: '', resource: '', subresource: r.path };
}

export interface MetricsResponse {
  readonly status: 200;
  readonly contentType: string;
  readonly body: string;
}

/** Serves `/metrics`: the registry's Prometheus text exposition with the registry's content type. */
export function metricsHandler(registry: Registry): () => Promise<MetricsResponse> {
  return async () => ({ status: 200, contentType: registry.contentType, body: await registry.metrics() });
}
