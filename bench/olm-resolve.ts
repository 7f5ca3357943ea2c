// OLM dependency resolution (issue 27's speed goal): one Subscription resolved over a generated
// catalog of 500 packages and 30,000 bundles, within 1 s. Each package has one channel of 60
// bundles along a replaces chain (every fifth one also skipping its predecessor's predecessor, the
// head carrying a skipRange), provides its own API and, from the 10th package on, requires two
// lower packages: one by olm.package.required with a range, one by olm.gvk.required. Subscribing
// to the last package pulls its whole dependency tree (a few dozen packages, ~2,000 candidate
// bundles into the SAT problem). The time includes reading the snapshot (every bundle's properties
// parsed), as each resolution in the install flow does. Baseline, in the same run: only that read
// (JSON.parse of every property of every bundle), the floor of any resolver over this snapshot.
// Standalone: node --import tsx bench/olm-resolve.ts [--quick]
import { fileURLToPath } from 'node:url';
import type { ApiBundle, TypedValue } from '../src/catalog/api/api.js';
import { resolve } from '../src/catalog/olm/resolver/resolve.js';
import type { CatalogSnapshot, ResolveInput } from '../src/catalog/olm/resolver/types.js';

export interface ResolveBenchOptions {
  packages?: number;
  bundlesPerPackage?: number;
  rounds?: number;
}

export interface ResolveBenchRow {
  readonly op: string;
  readonly target: string;
  readonly value: string;
  readonly ms: number;
  readonly goal?: { readonly target: string; readonly met: boolean };
}

export const RESOLVE_FULL: Required<ResolveBenchOptions> = { packages: 500, bundlesPerPackage: 60, rounds: 5 };
export const RESOLVE_QUICK: Required<ResolveBenchOptions> = { packages: 500, bundlesPerPackage: 60, rounds: 2 };

const pkgName = (i: number): string => `operator-${String(i).padStart(3, '0')}`;
const gvkOf = (i: number): { group: string; version: string; kind: string } => ({ group: `p${i}.bench.example.com`, version: 'v1', kind: `Kind${i}` });

/** The generated catalog: `packages` packages of `bundlesPerPackage` bundles each. */
export function benchCatalog(packages: number, bundlesPerPackage: number): CatalogSnapshot {
  const bundles: ApiBundle[] = [];
  const defaultChannels: Record<string, string> = {};
  for (let i = 0; i < packages; i++) {
    const pkg = pkgName(i);
    defaultChannels[pkg] = 'stable';
    const g = gvkOf(i);
    for (let j = 0; j < bundlesPerPackage; j++) {
      const version = `1.${j}.0`;
      const name = `${pkg}.v${version}`;
      const properties: TypedValue[] = [
        { type: 'olm.gvk', value: JSON.stringify(g) },
        { type: 'olm.package', value: JSON.stringify({ packageName: pkg, version }) },
      ];
      const dependencies: TypedValue[] = [];
      if (i >= 10) {
        const a = Math.floor(i / 2);
        const b = Math.floor(i / 3);
        const range = `>=1.${Math.min(j, bundlesPerPackage - 1) >> 1}.0 <2.0.0`;
        properties.push({ type: 'olm.package.required', value: JSON.stringify({ packageName: pkgName(a), versionRange: range }) });
        dependencies.push({ type: 'olm.package', value: JSON.stringify({ packageName: pkgName(a), version: range }) });
        properties.push({ type: 'olm.gvk.required', value: JSON.stringify(gvkOf(b)) });
        dependencies.push({ type: 'olm.gvk', value: JSON.stringify(gvkOf(b)) });
      }
      bundles.push({
        csvName: name,
        packageName: pkg,
        channelName: 'stable',
        csvJson: '',
        object: [],
        bundlePath: `registry.bench.example/${pkg}-bundle:v${version}`,
        providedApis: [g],
        requiredApis: i >= 10 ? [gvkOf(Math.floor(i / 3))] : [],
        version,
        skipRange: j === bundlesPerPackage - 1 ? `>=1.0.0 <${version}` : '',
        dependencies,
        properties,
        replaces: j > 0 ? `${pkg}.v1.${j - 1}.0` : '',
        skips: j > 1 && j % 5 === 0 ? [`${pkg}.v1.${j - 2}.0`] : [],
      });
    }
  }
  return { key: { name: 'bench', namespace: 'olm' }, priority: 0, bundles, defaultChannels };
}

function readSnapshot(c: CatalogSnapshot): number {
  let n = 0;
  for (const b of c.bundles) for (const p of b.properties) if (JSON.parse(p.value) !== null) n++;
  return n;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function runResolveBench(opts: ResolveBenchOptions = {}, log: (line: string) => void = console.log): Promise<ResolveBenchRow[]> {
  const o = { ...RESOLVE_FULL, ...opts };
  const cat = benchCatalog(o.packages, o.bundlesPerPackage);
  const top = pkgName(o.packages - 1);
  const input: ResolveInput = {
    namespace: 'olm',
    subscriptions: [{ name: top, namespace: 'olm', package: top, channel: 'stable', source: 'bench', sourceNamespace: 'olm' }],
    installed: [],
    catalogs: [cat],
  };
  log(`catalog: ${o.packages} packages, ${cat.bundles.length} bundles; one Subscription to ${top}`);
  const times: number[] = [];
  const cpu: number[] = [];
  const base: number[] = [];
  let steps = 0;
  for (let r = 0; r <= o.rounds; r++) {
    let t = performance.now();
    readSnapshot(cat);
    const b = performance.now() - t;
    t = performance.now();
    const c0 = process.cpuUsage();
    const res = await resolve(input);
    const ms = performance.now() - t;
    const c = process.cpuUsage(c0);
    if (!res.ok) throw new Error(`resolution failed: ${res.message}`);
    steps = res.steps.length;
    // round 0 warms the JIT
    if (r > 0) {
      times.push(ms);
      cpu.push((c.user + c.system) / 1000);
      base.push(b);
    }
  }
  const p50 = median(times);
  const max = Math.max(...times);
  const b50 = median(base);
  const cpu50 = median(cpu);
  log(`resolve: ${steps} bundles to install; p50 ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms over ${times.length} rounds (CPU p50 ${cpu50.toFixed(0)} ms)`);
  log(`baseline (parse every property of the snapshot): p50 ${b50.toFixed(0)} ms; resolve/baseline ${(p50 / b50).toFixed(1)}x`);
  return [
    {
      op: `resolve 1 Subscription, ${cat.bundles.length} bundles`,
      target: 'kplane',
      value: `p50 ${p50.toFixed(0)} ms, max ${max.toFixed(0)} ms, CPU p50 ${cpu50.toFixed(0)} ms (${steps} bundles)`,
      ms: max,
      goal: { target: '≤ 1 s', met: max <= 1000 },
    },
    { op: `read snapshot, ${cat.bundles.length} bundles`, target: 'baseline', value: `p50 ${b50.toFixed(0)} ms (${(p50 / b50).toFixed(1)}x)`, ms: b50 },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const quick = process.argv.includes('--quick');
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  await runResolveBench(quick ? RESOLVE_QUICK : RESOLVE_FULL);
}
