// Catalog benchmarks (issue 5's speed goals), runnable alone or from bench/run.ts (--only catalog):
//   1. load + validate a generated catalog of 300 packages × 100 bundles (30,000 bundles):
//      within 5 s and 1.5 GB (a child process, so its peak RSS is its own);
//   2. `kplane catalog serve` on that catalog: GetBundleForChannel p99 within 2 ms at 2,000
//      requests/s open loop (requests go out on schedule whether or not earlier ones were
//      answered, so a slow server queues them). The load comes from h2load (bench/h2load.ts), a C
//      load generator, so its own pauses are not counted. In the same run, the same load against
//      three baselines: grpc-js answering one canned bundle, node:http2 answering a canned gRPC
//      message (no gRPC library), and nghttpd (C) serving a static file: what the machine allows;
//   3. rendering a 100-bundle semver template from a warm cache (bundle images in a loopback
//      registry, pulled once): within 1 s.
// Standalone: node --import tsx bench/catalog.ts [--quick] [--rate N] [--template-bundles N]
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadPackageDefinition } from '../src/catalog/api/api.js';
import { buildBundleImage, pushImage } from '../src/catalog/oci/index.js';
import { defaultTools } from '../src/catalog/repo/toolkit.js';
import { writeBenchCatalog } from './catalog-data.js';
import { startRegistry } from '../test/support/registry.js';
import { procCpuMs, type Stats } from './common.js';
import { h2load, h2loadMany, startNghttpd, type H2LoadResult } from './h2load.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kplane = join(root, 'bin', 'kplane.js');

export interface CatalogBenchOptions {
  packages?: number;
  bundles?: number;
  /** GetBundleForChannel requests per second, offered */
  rate?: number;
  measureMs?: number;
  warmMs?: number;
  templateBundles?: number;
  log?: (line: string) => void;
}

export const CATALOG_FULL: Required<Omit<CatalogBenchOptions, 'log'>> = {
  packages: 300,
  bundles: 100,
  rate: 2000,
  measureMs: 10_000,
  warmMs: 2000,
  templateBundles: 100,
};
export const CATALOG_QUICK: Required<Omit<CatalogBenchOptions, 'log'>> = {
  packages: 300,
  bundles: 100,
  rate: 2000,
  measureMs: 3000,
  warmMs: 1000,
  templateBundles: 100,
};

export interface CatalogBenchRow {
  readonly scenario: 'catalog';
  readonly target: string;
  readonly op: string;
  /** the measured figure, with its unit */
  readonly value: string;
  readonly goal: string;
  readonly met: boolean;
  readonly stats?: Stats;
  readonly errors?: number;
}

const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function peakRss(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

interface GrpcClient {
  GetBundleForChannel(req: object, cb: (err: Error | null, res?: { csvName?: string }) => void): void;
  close(): void;
}

function registryClient(port: number): GrpcClient {
  const def = loadPackageDefinition();
  const Registry = grpc.makeGenericClientConstructor(def['api.Registry'] as grpc.ServiceDefinition, 'Registry');
  return new Registry(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as GrpcClient;
}

/** The requests of the load: packages spread over the catalog, both channels. */
function requestsOf(packages: number): { pkgName: string; channelName: string }[] {
  return Array.from({ length: LOAD_BODIES }, (_, i) => ({
    pkgName: `operator-${String((i * 7919) % packages).padStart(3, '0')}`,
    channelName: i % 2 ? 'stable' : 'fast',
  }));
}
/** h2load sends one body per process, so the load is this many processes, one request each. */
const LOAD_BODIES = 4;

/** A GetBundleInChannelRequest (pkgName = 1, channelName = 2) in gRPC's length-prefixed framing. */
function grpcFrame(req: { pkgName: string; channelName: string }): Buffer {
  const field = (no: number, v: string): Buffer => {
    const b = Buffer.from(v);
    if (b.length > 127) throw new Error('long field');
    return Buffer.concat([Buffer.from([(no << 3) | 2, b.length]), b]);
  };
  const msg = Buffer.concat([field(1, req.pkgName), field(2, req.channelName)]);
  const head = Buffer.alloc(5);
  head.writeUInt32BE(msg.length, 1);
  return Buffer.concat([head, msg]);
}

/** Checks through grpc-js that every request of the load is answered with a bundle. */
async function checkRequests(port: number, packages: number): Promise<void> {
  const client = registryClient(port);
  try {
    for (const req of requestsOf(packages)) {
      const res = await new Promise<{ csvName?: string }>((resolve, reject) =>
        client.GetBundleForChannel(req, (err, r) => (err ? reject(err) : resolve(r ?? {}))),
      );
      if (!res.csvName) throw new Error(`GetBundleForChannel(${JSON.stringify(req)}) answered no bundle`);
    }
  } finally {
    client.close();
  }
}

/** GetBundleForChannel open loop from h2load: LOAD_BODIES processes share the rate. */
function getBundleForChannelLoad(port: number, o: Required<Omit<CatalogBenchOptions, 'log'>>): Promise<H2LoadResult> {
  const reqs = requestsOf(o.packages);
  return h2loadMany(
    reqs.map((req) => ({
      url: `http://127.0.0.1:${port}/api.Registry/GetBundleForChannel`,
      rate: o.rate / reqs.length,
      seconds: o.measureMs / 1000,
      warmSeconds: o.warmMs / 1000,
      body: grpcFrame(req),
      headers: ['content-type: application/grpc', 'te: trailers'],
    })),
  );
}

/** Starts a baseline of catalog-baselines.ts as its own process; resolves with its port. */
async function startBaseline(flag: '--bare-server' | '--http2-floor'): Promise<{ port: number; pid: number; stop(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench', 'catalog-baselines.ts'), flag], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
    child.once('exit', (code) => reject(new Error(`catalog-baselines.ts ${flag} exited ${code}`)));
  });
  return { port, pid: child.pid!, stop: () => child.kill('SIGTERM') };
}

const describe = (r: H2LoadResult): string =>
  `p50 ${r.latency.p50.toFixed(2)} ms, p99 ${r.latency.p99.toFixed(2)} ms, max ${r.latency.max.toFixed(1)} ms; ${r.answered} answered at ${r.sentPerSec.toFixed(0)}/s, ${r.errors} errors`;

function writeBundleDir(dir: string, v: string): void {
  mkdirSync(join(dir, 'manifests'), { recursive: true });
  mkdirSync(join(dir, 'metadata'), { recursive: true });
  writeFileSync(
    join(dir, 'manifests', 'bench-operator.clusterserviceversion.yaml'),
    `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: bench-operator.v${v}
spec:
  displayName: Bench Operator
  description: A bundle of the template benchmark.
  version: ${v}
  customresourcedefinitions:
    owned:
    - {name: widgets.bench.example.com, version: v1, kind: Widget}
  install:
    strategy: deployment
    spec:
      deployments:
      - name: bench-operator
        spec:
          template:
            spec:
              containers:
              - {name: manager, image: "registry.example.com/bench-operator:v${v}"}
`,
  );
  writeFileSync(
    join(dir, 'manifests', 'widgets.crd.yaml'),
    `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.bench.example.com}
spec:
  group: bench.example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
  );
  writeFileSync(
    join(dir, 'metadata', 'annotations.yaml'),
    `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: bench-operator
  operators.operatorframework.io.bundle.channels.v1: stable
`,
  );
}

async function templateRender(o: Required<Omit<CatalogBenchOptions, 'log'>>, work: string, log: (l: string) => void): Promise<CatalogBenchRow[]> {
  let registry;
  try {
    registry = await startRegistry();
  } catch (err) {
    log(`template render: skipped (${(err as Error).message})`);
    return [];
  }
  try {
    const cacheDir = join(work, 'cache');
    const layoutDir = join(work, 'layout');
    const versions = Array.from({ length: o.templateBundles }, (_, i) => `1.${Math.floor(i / 10)}.${i % 10}`);
    const images: string[] = [];
    const t0 = performance.now();
    for (const v of versions) {
      const dir = join(work, 'bundles', v);
      writeBundleDir(dir, v);
      const ref = `${registry.host}/bench/bench-operator-bundle:v${v}`;
      buildBundleImage(dir, { layoutDir, tag: ref, cacheDir });
      await pushImage({ layoutDir, tag: ref }, ref, { cacheDir });
      images.push(ref);
    }
    log(`template render: ${images.length} bundle images built and pushed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const list = (xs: string[]): string => `  Bundles:\n${xs.map((x) => `  - Image: ${x}\n`).join('')}`;
    const template = `Schema: olm.semver\nGenerateMajorChannels: true\nGenerateMinorChannels: true\nCandidate:\n${list(images)}Fast:\n${list(images.slice(-50))}Stable:\n${list(images.filter((_, i) => i % 10 === 9))}`;
    const tools = defaultTools({ pull: { cacheDir } });
    const timed = async (): Promise<{ ms: number; bundles: number; channels: number }> => {
      const s = performance.now();
      const cfg = await tools.renderTemplate(template);
      tools.writeYAML(cfg);
      return { ms: performance.now() - s, bundles: cfg.bundles.length, channels: cfg.channels.length };
    };
    const cold = await timed();
    const warm = [await timed(), await timed(), await timed()];
    const best = Math.min(...warm.map((w) => w.ms));
    const worst = Math.max(...warm.map((w) => w.ms));
    log(
      `template render: ${cold.bundles} bundles, ${cold.channels} channels; cold ${(cold.ms / 1000).toFixed(2)} s, warm ${(best / 1000).toFixed(2)}-${(worst / 1000).toFixed(2)} s (goal ≤ 1 s)`,
    );
    return [
      {
        scenario: 'catalog',
        target: 'kplane',
        op: `render ${o.templateBundles}-bundle template (cold cache)`,
        value: `${(cold.ms / 1000).toFixed(2)} s`,
        goal: '-',
        met: true,
      },
      {
        scenario: 'catalog',
        target: 'kplane',
        op: `render ${o.templateBundles}-bundle template (warm cache, worst of 3)`,
        value: `${(worst / 1000).toFixed(2)} s`,
        goal: '≤ 1 s',
        met: worst <= 1000,
      },
    ];
  } finally {
    await registry.stop();
  }
}

export async function runCatalogBench(opts: CatalogBenchOptions = {}): Promise<CatalogBenchRow[]> {
  const o = { ...CATALOG_FULL, ...Object.fromEntries(Object.entries(opts).filter(([k, v]) => k !== 'log' && v !== undefined)) } as Required<
    Omit<CatalogBenchOptions, 'log'>
  >;
  const log = opts.log ?? ((l: string): void => void process.stderr.write(`${l}\n`));
  const rows: CatalogBenchRow[] = [];
  const work = mkdtempSync(join(tmpdir(), 'kplane-catalog-bench-'));
  try {
    const dir = join(work, 'catalog');
    mkdirSync(dir);
    writeBenchCatalog(dir, o.packages, o.bundles);
    const n = o.packages * o.bundles;
    log(`catalog: ${o.packages} packages × ${o.bundles} bundles = ${n} bundles; ${cpus().length} CPUs, node ${process.version}`);

    // 1. load + validate, in a child of its own
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'bench', 'catalog-validate.ts'), dir], {
      cwd: root,
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    });
    if (child.status !== 0) throw new Error(`catalog-validate failed: ${child.stderr}`);
    const v = JSON.parse(child.stdout) as {
      valid: boolean;
      loadMs: number;
      convertMs: number;
      validateMs: number;
      totalMs: number;
      maxRssBytes: number;
      bundles: number;
    };
    if (!v.valid || v.bundles !== n) throw new Error(`generated catalog did not validate: ${child.stdout}`);
    log(
      `load ${(v.loadMs / 1000).toFixed(2)} s + convert ${(v.convertMs / 1000).toFixed(2)} s + validate ${(v.validateMs / 1000).toFixed(2)} s = ${(v.totalMs / 1000).toFixed(2)} s (goal ≤ 5 s); peak RSS ${mib(v.maxRssBytes)} (goal ≤ 1536 MiB)`,
    );
    rows.push({
      scenario: 'catalog',
      target: 'kplane',
      op: `load + validate ${n} bundles`,
      value: `${(v.totalMs / 1000).toFixed(2)} s`,
      goal: '≤ 5 s',
      met: v.totalMs <= 5000,
    });
    rows.push({
      scenario: 'catalog',
      target: 'kplane',
      op: `load + validate ${n} bundles, peak RSS`,
      value: mib(v.maxRssBytes),
      goal: '≤ 1536 MiB',
      met: v.maxRssBytes <= 1.5 * 2 ** 30,
    });

    // 2. serve, then GetBundleForChannel open loop
    const t0 = performance.now();
    // KPLANE_BENCH_SERVE_FLAGS: extra serve flags for experiments (e.g. "--log-calls=false")
    const extra = (process.env.KPLANE_BENCH_SERVE_FLAGS ?? '').split(' ').filter((x) => x !== '');
    // The server logs every call (as opm does). Its stderr goes to a file, as a container's log
    // would: through a pipe, a load generator too busy to drain it would block the server's
    // (synchronous) stderr writes and measure itself.
    const logFile = join(work, 'serve.log');
    const logFd = openSync(logFile, 'w');
    const proc = spawn(process.execPath, [kplane, 'catalog', 'serve', dir, '--port', '0', ...extra], { stdio: ['ignore', 'ignore', logFd] });
    closeSync(logFd);
    try {
      const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
      let exitCode: number | null | undefined;
      void exited.then((c) => (exitCode = c));
      let port = 0;
      for (const deadline = performance.now() + 120_000; port === 0; ) {
        const m = /msg="serving registry".* port=(\d+)/.exec(readFileSync(logFile, 'utf8'));
        if (m) port = Number(m[1]);
        else if (exitCode !== undefined) throw new Error(`serve exited ${exitCode}: ${readFileSync(logFile, 'utf8')}`);
        else if (performance.now() > deadline) throw new Error(`serve did not start: ${readFileSync(logFile, 'utf8')}`);
        else await new Promise((r) => setTimeout(r, 20));
      }
      const startMs = performance.now() - t0;
      log(`serve: "serving registry" after ${(startMs / 1000).toFixed(2)} s (process start, load, validate, index), peak RSS ${mib(peakRss(proc.pid!))}`);
      rows.push({ scenario: 'catalog', target: 'kplane', op: `serve start (${n} bundles)`, value: `${(startMs / 1000).toFixed(2)} s`, goal: '-', met: true });
      await checkRequests(port, o.packages);
      const cpu0 = procCpuMs(proc.pid!);
      const r = await getBundleForChannelLoad(port, o);
      const perCall = ((procCpuMs(proc.pid!) - cpu0) * 1000) / (r.sentPerSec * ((o.measureMs + o.warmMs) / 1000));
      // Every call is logged (as opm does): the server's own count of failed calls.
      const log2 = readFileSync(logFile, 'utf8');
      const failed = (log2.match(/msg="finished call"(?![^\n]*grpc\.code=OK)[^\n]*/g) ?? []).length;
      log(
        `kplane GetBundleForChannel at ${o.rate}/s offered (h2load, ${LOAD_BODIES} connections): ${describe(r)}, ${failed} failed calls in the server's log; ~${perCall.toFixed(0)} µs of server CPU per call; server peak RSS ${mib(peakRss(proc.pid!))}`,
      );
      rows.push({
        scenario: 'catalog',
        target: 'kplane',
        op: `GetBundleForChannel p99 at ${o.rate}/s open loop`,
        value: `${r.latency.p99.toFixed(2)} ms`,
        goal: '≤ 2 ms',
        met: r.latency.p99 <= 2 && r.errors === 0 && failed === 0,
        stats: r.latency,
        errors: r.errors + failed,
      });
    } finally {
      proc.kill('SIGTERM');
    }
    // Baselines under the same load: what grpc-js, Node's HTTP/2 and a C HTTP/2 server manage here.
    for (const [target, flag] of [
      ['bare grpc-js (one canned bundle)', '--bare-server'],
      ['node:http2 (canned gRPC answer)', '--http2-floor'],
    ] as const) {
      const base = await startBaseline(flag);
      try {
        const b = await getBundleForChannelLoad(base.port, o);
        log(`${target} at ${o.rate}/s: ${describe(b)}`);
        rows.push({
          scenario: 'catalog',
          target,
          op: `GetBundleForChannel p99 at ${o.rate}/s open loop`,
          value: `${b.latency.p99.toFixed(2)} ms`,
          goal: '-',
          met: true,
          stats: b.latency,
          errors: b.errors,
        });
      } finally {
        base.stop();
      }
    }
    const floor = await startNghttpd(2700);
    try {
      const f = await h2load({ url: floor.url, rate: o.rate, seconds: o.measureMs / 1000, warmSeconds: o.warmMs / 1000, connections: LOAD_BODIES });
      log(`nghttpd (C, a static 2.7 KB file) at ${o.rate}/s: ${describe(f)}`);
      rows.push({
        scenario: 'catalog',
        target: 'nghttpd (C)',
        op: `GET p99 at ${o.rate}/s open loop`,
        value: `${f.latency.p99.toFixed(2)} ms`,
        goal: '-',
        met: true,
        stats: f.latency,
        errors: f.errors,
      });
    } finally {
      floor.stop();
    }

    // 3. template render from a warm cache
    if (o.templateBundles > 0) rows.push(...(await templateRender(o, join(work, 'template'), log)));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return rows;
}

export function catalogRowsText(rows: CatalogBenchRow[]): string {
  const w = Math.max(...rows.map((r) => `${r.target}: ${r.op}`.length));
  return (
    rows
      .map((r) => `${`${r.target}: ${r.op}`.padEnd(w)}  ${r.value.padStart(10)}  goal ${r.goal}${r.goal === '-' ? '' : r.met ? '  met' : '  MISSED'}`)
      .join('\n') + '\n'
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // [--quick] [--rate N] [--template-bundles N (0 skips the template render)]
  const argv = process.argv.slice(2);
  const num = (flag: string): number | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 && argv[i + 1] !== undefined ? Number(argv[i + 1]) : undefined;
  };
  const base = argv.includes('--quick') ? CATALOG_QUICK : CATALOG_FULL;
  const rate = num('--rate');
  const templateBundles = num('--template-bundles');
  const rows = await runCatalogBench({ ...base, ...(rate !== undefined ? { rate } : {}), ...(templateBundles !== undefined ? { templateBundles } : {}) });
  process.stdout.write(catalogRowsText(rows));
}
