// A kplane API server in a process of its own, for tests that kill it with SIGKILL (a leader of
// KEP-0007's feature flow dying mid-task): argv[2] is its JSON configuration (etcd endpoint, port,
// data directory, gate values, the flow's timings); it prints one JSON line `{"url": ...}` once it
// serves, and stops on SIGTERM. Run with `node --import tsx --conditions=kplane-source`.
import { newKubeFeatureGate } from '../../src/featuregate/index.js';
import { startTestServer } from './server.js';

interface Config {
  readonly etcd: string;
  readonly port: number;
  readonly dataDir: string;
  readonly gates: Record<string, boolean>;
  readonly featureFlow: { intervalMs: number; livenessMs: number; identityRenewIntervalMs: number; evaluationPeriodSeconds: number; pageSize: number };
}

const cfg = JSON.parse(process.argv[2] ?? '{}') as Config;
const gate = newKubeFeatureGate();
gate.setFromMap(cfg.gates);
const s = await startTestServer({
  storage: { etcd: cfg.etcd },
  dataDir: cfg.dataDir,
  port: cfg.port,
  featureGates: gate,
  reportFeatures: true,
  featureFlow: cfg.featureFlow,
});
process.stdout.write(`${JSON.stringify({ url: s.url })}\n`);
process.once('SIGTERM', () => {
  void s.stop().then(() => process.exit(0));
});
