// A kplane server for the feature-flow benches (bench/scenarios/features.ts), in its own process:
// argv[2] is its JSON configuration (data directory, gate values, library features to add, Leases
// to preload); it prints one JSON line `{"url": ...}` once it serves (and preloaded), and stops on
// SIGTERM.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { createControlPlane } from '../src/controlplane/controlplane.js';
import { sqlite } from '../src/storage/factories.js';
import { Beta, newKubeFeatureGate } from '../src/featuregate/index.js';

interface Config {
  readonly dataDir: string;
  readonly gates: Record<string, boolean>;
  /** Library features Bench000… (Beta, on by default) added to the gate. */
  readonly benchFeatures?: number;
  readonly preloadLeases?: number;
  readonly evaluationPeriodSeconds: number;
  readonly intervalMs: number;
  /** Where a profile of the span the bench measures goes (its `profile-start`/`profile-stop` messages). */
  readonly profileDir?: string;
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const gate = newKubeFeatureGate();
const bench: Record<string, { default: boolean; preRelease: typeof Beta }> = {};
for (let i = 0; i < (cfg.benchFeatures ?? 0); i++) bench[benchFeature(i)] = { default: true, preRelease: Beta };
gate.add(bench);
gate.setFromMap(cfg.gates);

export function benchFeature(i: number): string {
  return `Bench${String(i).padStart(3, '0')}`;
}

const cp = await createControlPlane({
  port: 0,
  dataDir: cfg.dataDir,
  storage: sqlite({ dir: cfg.dataDir }),
  featureGates: gate,
  featureFlow: {
    intervalMs: cfg.intervalMs,
    livenessMs: 5_000,
    identityRenewIntervalMs: 1_000,
    evaluationPeriodSeconds: cfg.evaluationPeriodSeconds,
    pageSize: 500,
  },
});
await cp.start();
if (cfg.preloadLeases) {
  const c = cp.loopbackClient();
  const gvr = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < cfg.preloadLeases!; i = next++)
      await c.create(gvr, 'default', {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: `bench-${i}`, namespace: 'default' },
        spec: { holderIdentity: 'h', strategy: 'OldestEmulationVersion', preferredHolder: 'p' },
      });
  };
  await Promise.all(Array.from({ length: 256 }, worker));
}
// The bench asks for this process's CPU time (every thread: the SQLite writer's too) and the main
// thread's event-loop utilisation, to figure the cost per object apart from the machine's load;
// with `profileDir`, it starts and stops a CPU profile of the span it measures (no start-up in it).
const profiler = new Session();
process.on('message', (m) => {
  if (m === 'cpu') process.send?.({ cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() });
  if (m === 'profile-start' && cfg.profileDir) {
    profiler.connect();
    void profiler.post('Profiler.enable').then(() => profiler.post('Profiler.start'));
  }
  if (m === 'profile-stop' && cfg.profileDir) {
    void profiler.post('Profiler.stop').then(({ profile }) => {
      const file = join(cfg.profileDir!, `CPU.feature-server.${Date.now()}.cpuprofile`);
      writeFileSync(file, JSON.stringify(profile));
      profiler.disconnect();
      process.send?.({ profile: file });
    });
  }
});
process.stdout.write(`${JSON.stringify({ url: cp.url })}\n`);
process.on('SIGTERM', () => {
  void cp.stop().then(() => process.exit(0));
});
