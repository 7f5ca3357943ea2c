// npm run soak [-- --minutes 30] [--storage sqlite,etcd] [--watches 1000] [--writers 4] [--window 500] [--sample-seconds 60] [--out DIR]
//                [--heap-snapshots 6,12,18] [--help]   (a bad flag: one line naming it, the usage, exit 2)
//
// The soak of issue 21 (not in CI): a mixed load (creates, updates, deletes through the kplane
// client; each writer deletes what it created `--window` rounds before, so the stored set stays
// bounded and a growing RSS means a leak, not more data) plus `--watches` watches that resume from their last resourceVersion, for `--minutes`,
// against one `kplane serve` on SQLite and against two `kplane serve` on a 3-member etcd cluster
// (loopback, .tools/bin/etcd). Every minute it records, per server, RSS, CPU (share of one core),
// the event loop's p99 delay (from the server's own /metrics) and the load's p99 write latency,
// into <out>/soak.csv, and draws each figure per storage as SVG (bench/plot.ts's renderer).
// RSS should plateau: the last third's mean against the middle third's is printed. Beside RSS, the
// V8 heap in use and the memory outside it (`external`: Buffers, ArrayBuffers) are recorded, and
// `--heap-snapshots` has each server write a V8 heap snapshot into <out> after those samples
// (`--heapsnapshot-signal`), to compare what grows (Chrome DevTools' Comparison view).
import { mkdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { renderSvg } from '../bench/plot.js';
import { asUsageError, exitWithUsage, UsageError } from '../bench/usage.js';
import type { Figure, Point } from '../bench/figures.js';
import { createHttpsClient } from '../src/client/https.js';
import type { KubeClient } from '../src/client/types.js';
import { freePort } from '../test/support/etcd.js';
import { adminCredentials, RawClient } from '../test/support/https.js';
import { startEtcdCluster, type EtcdCluster } from '../test/support/etcd-cluster.js';
import { CONFIGMAPS, kplaneChildren, mixedLoad, quantile, startHaControlPlane, type HaControlPlane } from '../test/support/etcd-cluster-ha.js';
import { ensureTools } from '../test/support/tools.js';

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };
const NS = 'soak';

const USAGE = `usage: npm run soak -- [--minutes 30] [--storage sqlite,etcd] [--watches 1000] [--writers 4] [--window 500]
                     [--sample-seconds 60] [--out DIR] [--heap-snapshots 6,12,18] [--help]`;

function parseSoakArgs(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: {
        minutes: { type: 'string', default: '30' },
        storage: { type: 'string', default: 'sqlite,etcd' },
        watches: { type: 'string', default: '1000' },
        writers: { type: 'string', default: '4' },
        window: { type: 'string', default: '500' },
        'sample-seconds': { type: 'string', default: '60' },
        out: { type: 'string' },
        'heap-snapshots': { type: 'string', default: '' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw asUsageError(err);
  }
  const { values } = parsed;
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  /** The flag's number, at least `min` (0: not negative; undefined: above 0). */
  const numberOf = (flag: string, value: string, min?: number): number => {
    const n = Number(value);
    const ok = value.trim() !== '' && (min === undefined ? n > 0 : n >= min);
    if (!ok) throw new UsageError(`--${flag} must be ${min === undefined ? 'a positive number' : `a number of at least ${min}`}, not '${value}'`);
    return n;
  };
  const storages = values.storage.split(',').filter(Boolean);
  for (const s of storages) if (s !== 'sqlite' && s !== 'etcd') throw new UsageError(`--storage: unknown '${s}'; use sqlite, etcd or both`);
  if (storages.length === 0) throw new UsageError('--storage: name sqlite, etcd or both');
  const snapshotAt = new Set(values['heap-snapshots'].split(',').filter(Boolean).map(Number));
  for (const m of snapshotAt) if (!(m > 0)) throw new UsageError(`--heap-snapshots: not a list of sample numbers: '${values['heap-snapshots']}'`);
  return {
    minutes: numberOf('minutes', values.minutes),
    watchCount: numberOf('watches', values.watches, 0),
    writers: numberOf('writers', values.writers, 1),
    window: numberOf('window', values.window, 0),
    sampleMs: numberOf('sample-seconds', values['sample-seconds']) * 1000,
    storages,
    out: values.out,
    snapshotAt,
    heapSnapshots: values['heap-snapshots'],
  };
}

let args: ReturnType<typeof parseSoakArgs>;
try {
  args = parseSoakArgs(process.argv.slice(2));
} catch (err) {
  if (err instanceof UsageError) exitWithUsage('soak', USAGE, err.message);
  throw err;
}
const { minutes, watchCount, writers, sampleMs, storages, snapshotAt } = args;
const outDir = resolve(args.out ?? join(tmpdir(), `kplane-soak-${new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19)}`));
mkdirSync(outDir, { recursive: true });
// Inherited by every kplane child: SIGUSR2 writes Heap.<date>.<pid>.<n>.heapsnapshot into outDir.
if (snapshotAt.size > 0) process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${outDir}`.trim();

interface Sample {
  storage: string;
  server: string;
  minute: number;
  rssMiB: number;
  heapUsedMiB: number;
  externalMiB: number;
  cpuPct: number;
  eventLoopP99Ms: number;
  writeP99Ms: number;
  writes: number;
  watchEvents: number;
  failures: number;
}

interface Target {
  readonly name: string;
  readonly servers: { readonly name: string; readonly raw: RawClient; readonly pid: () => number | undefined }[];
  /** A failing-over client per server, for the load and the watches. */
  readonly loadClients: KubeClient[];
  stop(): Promise<void>;
}

async function sqliteTarget(): Promise<Target> {
  const procs = kplaneChildren();
  const dataDir = await mkdtemp(join(tmpdir(), 'kplane-soak-'));
  const port = await freePort();
  await procs.start(['serve', '--data-dir', dataDir, '--secure-port', String(port)], /^kplane is serving on https:\/\/\S+/m);
  const client = createHttpsClient(join(dataDir, 'admin.kubeconfig'));
  const raw = new RawClient(`https://127.0.0.1:${port}`, adminCredentials(dataDir));
  return {
    name: 'sqlite',
    servers: [{ name: 'server-0', raw, pid: () => procs.children[0]?.pid }],
    loadClients: [client],
    async stop() {
      await client.close();
      raw.close();
      procs.killAll();
      await sleep(500);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function etcdTarget(): Promise<Target> {
  const etcd: EtcdCluster = await startEtcdCluster();
  const ha: HaControlPlane = await startHaControlPlane(etcd, { servers: 2, controllerManagers: 1, consistencyCheckInterval: '5m' });
  const own = ha.servers.map((s) => ({ name: s.name, raw: new RawClient(s.url, adminCredentials(s.dataDir)), pid: () => s.proc?.child.pid }));
  return {
    name: 'etcd',
    servers: own,
    loadClients: ha.servers.map((_, i) => ha.client(i)),
    async stop() {
      for (const s of own) s.raw.close();
      await ha.stop();
      await etcd.stop();
    },
  };
}

/** One figure of a /metrics text (the first sample of `name`, labels ignored). */
function metric(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

async function scrape(raw: RawClient): Promise<string> {
  const res = await raw.request({ path: '/metrics', timeoutMs: 10_000 });
  return res.text();
}

/** `watchCount` watches spread over the clients, each resuming from its last resourceVersion; counts events. */
function startWatches(clients: readonly KubeClient[], fromRv: string): { events: () => number; stop(): void } {
  const stop = new AbortController();
  let events = 0;
  for (let i = 0; i < watchCount; i++) {
    const client = clients[i % clients.length]!;
    void (async () => {
      let rv = fromRv;
      while (!stop.signal.aborted) {
        try {
          for await (const ev of client.watch(CONFIGMAPS, NS, { resourceVersion: rv, allowWatchBookmarks: true, timeoutSeconds: 300, signal: stop.signal })) {
            rv = ev.object.metadata?.resourceVersion ?? rv;
            if (ev.type !== 'BOOKMARK') events++;
          }
        } catch {
          // resumed below
        }
        if (!stop.signal.aborted) await sleep(200);
      }
    })();
  }
  return { events: () => events, stop: () => stop.abort() };
}

async function soak(target: Target, samples: Sample[]): Promise<void> {
  const main = target.loadClients[0]!;
  await main.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } }).catch(() => undefined);
  const start = await main.list(CONFIGMAPS, NS);
  const watches = startWatches(target.loadClients, start.metadata?.resourceVersion ?? '0');
  const load = mixedLoad(target.loadClients, NS, { writersPerClient: Math.max(1, Math.round(writers / target.loadClients.length)), pauseMs: 10, window: args.window });
  const cpuBefore = new Map<string, number>();
  for (const s of target.servers) cpuBefore.set(s.name, metric(await scrape(s.raw), 'process_cpu_seconds_total'));
  let lastWatchEvents = 0;
  let lastFailures = 0;
  let lastWrites = 0;
  try {
    for (let minute = 1; minute <= Math.ceil((minutes * 60_000) / sampleMs); minute++) {
      await sleep(sampleMs);
      const latencies = load.latenciesMs.splice(0);
      const writesNow = load.counts.creates + load.counts.updates + load.counts.deletes;
      for (const s of target.servers) {
        const text = await scrape(s.raw).catch(() => '');
        const cpu = metric(text, 'process_cpu_seconds_total');
        const sample: Sample = {
          storage: target.name,
          server: s.name,
          minute,
          rssMiB: metric(text, 'process_resident_memory_bytes') / 2 ** 20,
          heapUsedMiB: metric(text, 'nodejs_heap_size_used_bytes') / 2 ** 20,
          externalMiB: metric(text, 'nodejs_external_memory_bytes') / 2 ** 20,
          cpuPct: ((cpu - (cpuBefore.get(s.name) ?? cpu)) / (sampleMs / 1000)) * 100,
          eventLoopP99Ms: metric(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
          writeP99Ms: quantile(latencies, 0.99),
          writes: writesNow - lastWrites,
          watchEvents: watches.events() - lastWatchEvents,
          failures: load.counts.failures - lastFailures,
        };
        cpuBefore.set(s.name, cpu);
        samples.push(sample);
        const pid = s.pid();
        if (snapshotAt.has(minute) && pid !== undefined) process.kill(pid, 'SIGUSR2');
        console.log(
          `[soak] ${target.name} ${s.name} sample ${minute}: RSS ${sample.rssMiB.toFixed(0)} MiB (heap ${sample.heapUsedMiB.toFixed(0)}, external ${sample.externalMiB.toFixed(0)}), CPU ${sample.cpuPct.toFixed(0)} %, event loop p99 ${sample.eventLoopP99Ms.toFixed(1)} ms, write p99 ${sample.writeP99Ms.toFixed(0)} ms, ${sample.writes} writes, ${sample.watchEvents} watch events, ${sample.failures} failed writes`,
        );
      }
      lastWrites = writesNow;
      lastWatchEvents = watches.events();
      lastFailures = load.counts.failures;
      writeOutputs(samples);
    }
  } finally {
    await load.stop();
    watches.stop();
  }
}

const COLUMNS: (keyof Sample)[] = ['storage', 'server', 'minute', 'rssMiB', 'heapUsedMiB', 'externalMiB', 'cpuPct', 'eventLoopP99Ms', 'writeP99Ms', 'writes', 'watchEvents', 'failures'];
const PLOTS: { key: keyof Sample; title: string; unit: string }[] = [
  { key: 'rssMiB', title: 'RSS', unit: 'MiB' },
  { key: 'heapUsedMiB', title: 'V8 heap used', unit: 'MiB' },
  { key: 'externalMiB', title: 'external memory (Buffers, ArrayBuffers)', unit: 'MiB' },
  { key: 'cpuPct', title: 'CPU (one core = 100 %)', unit: '%' },
  { key: 'eventLoopP99Ms', title: 'event-loop delay p99', unit: 'ms' },
  { key: 'writeP99Ms', title: 'write latency p99 (client side)', unit: 'ms' },
];

function writeOutputs(samples: readonly Sample[]): void {
  const num = (v: unknown): string => (typeof v === 'number' ? (Number.isFinite(v) ? String(Math.round(v * 100) / 100) : '') : String(v));
  writeFileSync(join(outDir, 'soak.csv'), `${COLUMNS.join(',')}\n${samples.map((s) => COLUMNS.map((c) => num(s[c])).join(',')).join('\n')}\n`);
  const t0 = Date.now();
  for (const series of new Set(samples.map((s) => `${s.storage}/${s.server}`))) {
    const rows = samples.filter((s) => `${s.storage}/${s.server}` === series);
    for (const p of PLOTS) {
      const figure: Figure = { id: `soak-${p.key}`, title: `soak, ${series}: ${p.title} per sample`, unit: p.unit, value: () => undefined };
      const points: Point[] = rows
        .filter((r) => Number.isFinite(r[p.key] as number))
        .map((r) => ({ date: new Date(t0 + r.minute * sampleMs).toISOString(), commit: `#${r.minute}`, value: r[p.key] as number }));
      if (points.length === 0) continue;
      // bench/plot.ts's subtitle speaks of bench runs; a soak's x axis is its samples.
      const svg = renderSvg(figure, points)
        .replace(
          /(<text x="\d+" y="40" font-size="11" fill="#666">)[^<]*(<\/text>)/,
          `$1${points.length} samples, one every ${sampleMs / 1000} s, ${watchCount} watches, ${writers} writers; scripts/soak.ts$2`,
        )
        .replace('run (UTC date and time of its start)', 'sample (#n, and the UTC time it was taken)');
      writeFileSync(join(outDir, `soak-${series.replace('/', '-')}-${p.key}.svg`), svg);
    }
  }
}

async function main(): Promise<void> {
  ensureTools();
  console.log(`[soak] ${minutes} min per storage (${storages.join(', ')}), ${watchCount} watches, ${writers} writers; output in ${outDir}`);
  const samples: Sample[] = [];
  for (const name of storages) {
    const target = name === 'sqlite' ? await sqliteTarget() : await etcdTarget();
    try {
      await soak(target, samples);
    } finally {
      await target.stop();
    }
    for (const server of new Set(samples.filter((s) => s.storage === name).map((s) => s.server))) {
      const rss = samples.filter((s) => s.storage === name && s.server === server).map((s) => s.rssMiB);
      const third = Math.max(1, Math.floor(rss.length / 3));
      const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      const middle = mean(rss.slice(third, rss.length - third).length ? rss.slice(third, rss.length - third) : rss);
      const last = mean(rss.slice(-third));
      console.log(`[soak] ${name} ${server}: RSS last third ${last.toFixed(0)} MiB vs middle third ${middle.toFixed(0)} MiB (${(((last - middle) / middle) * 100).toFixed(1)} %)`);
    }
  }
  writeOutputs(samples);
  console.log(`[soak] wrote ${join(outDir, 'soak.csv')} and the SVG plots beside it`);
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
