// The loopback driver's `upgrade` on an environment started by `kplane ccm-test env up` (config
// `envDir`): "another version" is the same kplane restarted with other flags. upgradeControlPlane
// restarts `kplane serve` (same data directory and port) with `upgradeServeArgs` added;
// upgradeCcm / downgradeCcm restart the cloud-controller-manager with `upgradeCcmArgs` /
// `downgradeCcmArgs` added. Each waits until the restarted part is ready again: the server answers
// through the kit's client; the CCM's loopback cloud knows the instances and load balancers it had.
import type { KubeClient } from '../../client/index.js';
import { type EnvPart, readEnvRecord, restartPart } from '../local-env.js';
import type { UpgradeInfra } from '../types.js';
import { type AdminHttp, adminOK } from './admin-http.js';

/** Flags added for each action unless the capability file's config names others. */
export const ENV_UPGRADE_DEFAULTS = {
  upgradeServeArgs: ['--max-requests-inflight', '800'],
  upgradeCcmArgs: ['--concurrent-service-syncs', '4'],
  downgradeCcmArgs: ['--concurrent-service-syncs', '1'],
} as const;

const RESTART_TIMEOUT_MS = 120_000;
const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

function argsFrom(config: Readonly<Record<string, unknown>>, key: keyof typeof ENV_UPGRADE_DEFAULTS): readonly string[] {
  const v = config[key];
  if (v === undefined) return ENV_UPGRADE_DEFAULTS[key];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string'))
    throw new Error(`driver loopback: config.${key} must be a list of strings, got ${JSON.stringify(v)}`);
  return v;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`${what} within ${timeoutMs / 1000} s${last ? `: ${(last as Error).message}` : ''}`);
    await sleep(200);
  }
}

interface CloudState {
  instances: { name: string; state: string }[];
  loadBalancers: { service: string }[];
}

/**
 * The upgrade infra for the environment in `config.envDir`, or undefined without one. Reads
 * DIR/env.json now, so that a folder `env up` did not write is refused before any test runs.
 */
export async function envUpgrade(config: Readonly<Record<string, unknown>>, client: KubeClient, admin: AdminHttp): Promise<UpgradeInfra | undefined> {
  const dir = config.envDir;
  if (dir === undefined) return undefined;
  if (typeof dir !== 'string' || !dir)
    throw new Error(`driver loopback: config.envDir must be the folder of kplane ccm-test env up, got ${JSON.stringify(dir)}`);
  const record = await readEnvRecord(dir);
  const extra = {
    upgradeServeArgs: argsFrom(config, 'upgradeServeArgs'),
    upgradeCcmArgs: argsFrom(config, 'upgradeCcmArgs'),
    downgradeCcmArgs: argsFrom(config, 'downgradeCcmArgs'),
  };
  const restart = (part: EnvPart, flags: readonly string[]) => restartPart(dir, part, [...record.args[part], ...flags], RESTART_TIMEOUT_MS);

  const restartCcm = async (flags: readonly string[]): Promise<void> => {
    // The loopback cloud lives in the CCM's process: the new one learns the instances from the
    // Nodes and recreates the load balancers from the Services. Ready again is when it has both.
    const before = await adminOK<CloudState>(admin, 'GET', '/instances');
    const lbsBefore = await adminOK<CloudState>(admin, 'GET', '/loadbalancers');
    const running = before.instances.filter((i) => i.state === 'running').map((i) => i.name);
    const services = lbsBefore.loadBalancers.map((l) => l.service);
    await restart('cloud-controller-manager', flags);
    await until(`the restarted cloud-controller-manager's loopback cloud did not know instances ${running.join(', ')} again`, RESTART_TIMEOUT_MS, async () => {
      const now = new Set((await adminOK<CloudState>(admin, 'GET', '/instances')).instances.map((i) => i.name));
      return running.every((n) => now.has(n));
    });
    await until(`the restarted cloud-controller-manager did not recreate the load balancers of ${services.join(', ')}`, RESTART_TIMEOUT_MS, async () => {
      const now = new Set((await adminOK<CloudState>(admin, 'GET', '/loadbalancers')).loadBalancers.map((l) => l.service));
      return services.every((s) => now.has(s));
    });
  };

  return {
    async upgradeControlPlane() {
      await restart('serve', extra.upgradeServeArgs);
      await until('the restarted kplane serve did not answer', RESTART_TIMEOUT_MS, async () => {
        await client.list(NAMESPACES, undefined, { limit: 1 });
        return true;
      });
    },
    upgradeCcm: () => restartCcm(extra.upgradeCcmArgs),
    downgradeCcm: () => restartCcm(extra.downgradeCcmArgs),
  };
}
