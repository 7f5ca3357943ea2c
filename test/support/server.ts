// Starts a real kplane control plane (in this process, HTTPS on 127.0.0.1, port 0) for tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createControlPlane, type ControlPlane, type ControlPlaneOptions, type StorageFactory } from '../../src/controlplane/controlplane.js';
import { memory, sqlite, etcd } from '../../src/storage/factories.js';
import { APIServerIdentity, newKubeFeatureGate } from '../../src/featuregate/index.js';

export interface TestServer {
  readonly cp: ControlPlane;
  readonly url: string;
  readonly kubeconfig: string;
  readonly dataDir: string;
  stop(): Promise<void>;
}

/** How often test servers run the watch cache self-check (it is off by default elsewhere). */
export const TEST_CONSISTENCY_CHECK_INTERVAL_MS = 2_000;

/**
 * kplane's gates, but without the identity Lease renewed every 10 s: most tests read resource
 * versions and lists of a server nothing else writes to. Tests of the lease pass their own gates.
 */
export function quietFeatureGates(): ReturnType<typeof newKubeFeatureGate> {
  const g = newKubeFeatureGate();
  g.setFromMap({ [APIServerIdentity]: false });
  return g;
}

export async function startTestServer(
  opts: { storage?: 'sqlite' | 'memory' | { etcd: string } | StorageFactory; dataDir?: string } & Partial<
    Omit<ControlPlaneOptions, 'storage' | 'dataDir'>
  > = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'kplane-test-')));
  const kind = opts.storage ?? 'sqlite';
  const storage: StorageFactory =
    kind === 'sqlite' ? sqlite({ dir: dataDir }) : kind === 'memory' ? memory() : 'etcd' in kind ? etcd({ endpoints: [kind.etcd] }) : kind;
  const { storage: _s, dataDir: _d, ...rest } = opts;
  const cp = await createControlPlane({
    port: 0,
    watchCacheConsistencyCheckIntervalMs: TEST_CONSISTENCY_CHECK_INTERVAL_MS,
    featureGates: quietFeatureGates(),
    // Feature uses are written in the background at start: tests of them turn it on.
    reportFeatures: false,
    ...rest,
    storage,
    dataDir,
  });
  await cp.start();
  return {
    cp,
    url: cp.url,
    kubeconfig: cp.kubeconfigPath,
    dataDir,
    async stop() {
      await cp.stop();
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}
