import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Counter, Histogram, Registry, type RegistryContentType } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series-metrics.js';
import { REQUEST_DURATION_BUCKETS_SECONDS, createApiMetrics, requestMetricLabels, type RequestForMetrics } from './metrics.js';

const LABELS = ['verb', 'group', 'resource'] as const;
const labelValue = fc.constantFrom('', 'GET', 'LIST', 'apps', 'a"b', 'x\\y', 'new\nline', 'configmaps');
const observation = fc.record({
  labels: fc.record({ verb: labelValue, group: labelValue, resource: labelValue }),
  code: fc.constantFrom(200, 201, 404, 500),
  value: fc.oneof(fc.double({ min: 0, max: 100, noNaN: true }), fc.constantFrom(0, 0.05, 0.1, 60, 61, 1e-9)),
});

describe('SeriesCounter and SeriesHistogram', () => {
  it("print exactly what prom-client's Counter and Histogram print for the same observations", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(observation, { maxLength: 60 }), fc.boolean(), async (obs, openMetrics) => {
        const contentType = openMetrics ? Registry.OPENMETRICS_CONTENT_TYPE : Registry.PROMETHEUS_CONTENT_TYPE;
        const registryOf = (): Registry => {
          const r = new Registry();
          // prom-client's types bind a registry to one content type; the test runs both through one variable.
          (r as unknown as Registry<RegistryContentType>).setContentType(contentType);
          return r;
        };
        const theirs = registryOf();
        const counter = new Counter({ name: 'req_total', help: 'requests "quoted" \\ help', labelNames: [...LABELS, 'code'], registers: [theirs] });
        const histogram = new Histogram({
          name: 'req_seconds',
          help: 'latency',
          labelNames: [...LABELS],
          buckets: [...REQUEST_DURATION_BUCKETS_SECONDS],
          registers: [theirs],
        });
        const ours = registryOf();
        const c = new SeriesCounter('req_total', 'requests "quoted" \\ help', ours);
        const h = new SeriesHistogram('req_seconds', 'latency', REQUEST_DURATION_BUCKETS_SECONDS, ours);
        for (const o of obs) {
          counter.inc({ ...o.labels, code: String(o.code) });
          histogram.observe({ ...o.labels }, o.value);
          const key = `${o.labels.verb}\0${o.labels.group}\0${o.labels.resource}`;
          if (!c.inc(key, o.code)) c.add(key, o.code, { ...o.labels, code: String(o.code) });
          h.observe(h.find(key) ?? h.add(key, { ...o.labels }), o.value);
        }
        assert.equal(await ours.metrics(), await theirs.metrics());
        assert.deepEqual(await ours.getMetricsAsJSON(), await theirs.getMetricsAsJSON());
        ours.resetMetrics();
        theirs.resetMetrics();
        assert.equal(await ours.metrics(), await theirs.metrics());
      }),
      { numRuns: 150 },
    );
  });
});

describe('ApiMetrics.recordRequest', () => {
  it('records the labels requestMetricLabels derives, as observeRequest does', async () => {
    const q = (s: string) => new URLSearchParams(s);
    const cases: RequestForMetrics[] = [
      {
        method: 'GET',
        verb: 'get',
        isResourceRequest: true,
        path: '/api/v1/namespaces/a/configmaps/x',
        apiGroup: '',
        apiVersion: 'v1',
        resource: 'configmaps',
        subresource: '',
        namespace: 'a',
        name: 'x',
        query: q(''),
      },
      {
        method: 'GET',
        verb: 'list',
        isResourceRequest: true,
        path: '/apis/apps/v1/deployments',
        apiGroup: 'apps',
        apiVersion: 'v1',
        resource: 'deployments',
        query: q('limit=5'),
      },
      {
        method: 'GET',
        verb: 'list',
        isResourceRequest: true,
        path: '/api/v1/configmaps',
        apiGroup: '',
        apiVersion: 'v1',
        resource: 'configmaps',
        query: q('watch=1'),
      },
      {
        method: 'POST',
        verb: 'create',
        isResourceRequest: true,
        path: '/api/v1/namespaces/a/configmaps',
        apiGroup: '',
        apiVersion: 'v1',
        resource: 'configmaps',
        namespace: 'a',
        query: q('dryRun=All&dryRun=All'),
      },
      {
        method: 'PATCH',
        verb: 'patch',
        isResourceRequest: true,
        path: '/api/v1/namespaces/a/configmaps/x',
        apiGroup: '',
        apiVersion: 'v1',
        resource: 'configmaps',
        namespace: 'a',
        name: 'x',
        query: q('dryRun=bogus'),
        contentType: 'application/apply-patch+yaml; charset=utf-8',
      },
      {
        method: 'PUT',
        verb: 'update',
        isResourceRequest: true,
        path: '/apis/x.io/v1/ws/y/status',
        apiGroup: 'x.io',
        apiVersion: 'v1',
        resource: 'ws',
        subresource: 'status',
        name: 'y',
        query: undefined,
      },
      { method: 'GET', verb: 'get', isResourceRequest: false, path: '/healthz', query: q('') },
      { method: 'BREW', verb: 'brew', isResourceRequest: false, path: '/coffee', query: undefined },
    ];
    const a = createApiMetrics({ processMetrics: false });
    const b = createApiMetrics({ processMetrics: false });
    for (const [i, r] of cases.entries()) {
      const code = [200, 201, 404][i % 3]!;
      a.observeRequest({ ...requestMetricLabels(r), code, durationSeconds: i / 7 });
      b.recordRequest(r.method, r, r.query, r.contentType, code, i / 7);
    }
    const text = await b.registry.metrics();
    assert.equal(text, await a.registry.metrics());
    assert.match(text, /apiserver_request_total\{verb="APPLY",dry_run="invalid",[^}]*code="201"\} 1/);
    assert.match(text, /apiserver_request_total\{verb="other",[^}]*subresource="\/coffee",[^}]*\} 1/);
    assert.match(text, /apiserver_request_duration_seconds_count\{verb="WATCH",[^}]*\} 1/);
  });
});
