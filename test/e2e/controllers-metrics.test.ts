// Controller metrics: queue depth, reconcile latency and errors of the namespace and garbage-
// collector controllers, in the API server's /metrics when they run in process, and at
// `kplane controller-manager --metrics-port` when they run out of process.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { get as httpGet } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { defaultControllers } from '../../src/controllers/index.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot } from '../support/tools.js';

const NS: GVR = { group: '', version: 'v1', resource: 'namespaces' };

let server: TestServer;
let client: KubeClient;
let cm: ChildProcess | undefined;

before(async () => {
  server = await startTestServer({ storage: 'sqlite', controllers: defaultControllers() });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  if (cm && cm.exitCode === null && cm.signalCode === null) cm.kill('SIGKILL');
  await client?.close();
  await server?.stop();
});

function apiMetrics(): Promise<string> {
  const p = server.cp.pki;
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}/metrics`, { ca: p.caCertPem, cert: p.adminCertPem, key: p.adminKeyPem }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /metrics: ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}

/** The value of the first sample whose line starts with `prefix` (name and labels). */
function sample(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

async function eventually<T>(ms: number, what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > until) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('in-process controllers: queue depth, reconcile latency and errors at the API server /metrics', { timeout: 60_000 }, async () => {
  await client.create(NS, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'metrics-ns' } });
  await client.delete(NS, undefined, 'metrics-ns');
  const text = await eventually(20_000, 'a successful namespace reconcile counted', async () => {
    const t = await apiMetrics();
    return (sample(t, 'controller_runtime_reconcile_total{controller="namespace",result="success"}') ?? 0) > 0 ? t : undefined;
  });
  for (const name of ['namespace', 'garbagecollector_attempt_to_delete', 'garbagecollector_attempt_to_orphan']) {
    assert.notEqual(sample(text, `workqueue_depth{name="${name}"}`), undefined, `workqueue_depth for ${name}`);
    assert.notEqual(sample(text, `controller_runtime_reconcile_errors_total{controller="${name}"}`), undefined, `errors for ${name}`);
  }
  assert.ok((sample(text, 'controller_runtime_reconcile_time_seconds_count{controller="namespace"}') ?? 0) > 0);
  assert.ok((sample(text, 'workqueue_adds_total{name="namespace"}') ?? 0) > 0);
  // The API server's own metrics are in the same registry.
  assert.match(text, /^apiserver_request_total\{/m);
});

it('kplane controller-manager --metrics-port serves the same metrics over HTTP on loopback', { timeout: 60_000 }, async () => {
  cm = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      join(repoRoot, 'src/cli/main.ts'),
      'controller-manager',
      '--kubeconfig',
      server.kubeconfig,
      '--leader-elect=false',
      '--metrics-port',
      '0',
    ],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  cm.stderr!.setEncoding('utf8').on('data', (d: string) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no metrics URL in 30 s: ${out} ${err}`)), 30_000);
    cm!.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /metrics on (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  const text = await eventually(20_000, 'controller metrics from the controller-manager', async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(5000) });
    const t = await res.text();
    return res.ok && /^workqueue_depth\{name="garbagecollector_attempt_to_delete"\}/m.test(t) ? t : undefined;
  });
  assert.notEqual(sample(text, 'controller_runtime_reconcile_total{controller="namespace",result="success"}'), undefined);
  assert.notEqual(sample(text, 'workqueue_depth{name="namespace"}'), undefined);
  assert.match(text, /^process_cpu_user_seconds_total /m);
  // A scraper that asks for gzip (Prometheus does) gets it compressed, as from promhttp.
  const zipped = await new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) => {
    httpGet(url, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ encoding: res.headers['content-encoding'], vary: res.headers['vary'], body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
  assert.equal(zipped.encoding, 'gzip');
  assert.equal(zipped.vary, 'Accept, Accept-Encoding');
  assert.match(gunzipSync(zipped.body).toString(), /^process_cpu_user_seconds_total /m);
  const exited = new Promise((ok) => cm!.once('exit', ok));
  cm.kill('SIGTERM');
  await exited;
});
