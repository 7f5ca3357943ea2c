// The `loopback` cloud provider, registered under that name on import. `--cloud-config` is a
// JSON object: LoopbackCloudOptions plus `adminAddress` ("127.0.0.1:<port>") for the admin
// interface, served from `initialize` until the manager stops.
import { cloudProviderNames, type ControllerClientBuilder, registerCloudProvider } from '../provider.js';
import { serveCloudAdmin } from './admin.js';
import { LoopbackCloud, type LoopbackCloudOptions, PROVIDER_NAME } from './cloud.js';

export { LoopbackCloud, CloudAdminError, PROVIDER_NAME, PROVIDER_ID_PREFIX } from './cloud.js';
export type { LoopbackCloudOptions, Instance, InstanceState, LoadBalancerInfo } from './cloud.js';
export { serveCloudAdmin } from './admin.js';
export type { HealthCheckOptions } from './health.js';

export interface LoopbackCloudConfig extends LoopbackCloudOptions {
  /** host:port of the admin interface (127.0.0.0/8 only); absent: no HTTP admin interface. */
  readonly adminAddress?: string;
}

/** Serves the admin interface from `initialize` until the manager stops; the load balancers stay (a cloud outlives its controllers). */
class LoopbackCloudWithAdmin extends LoopbackCloud {
  constructor(
    opts: LoopbackCloudOptions,
    private readonly adminHost: string,
    private readonly adminPort: number,
  ) {
    super(opts);
  }

  override async initialize(_clients: ControllerClientBuilder, stop: AbortSignal): Promise<void> {
    const srv = await serveCloudAdmin(this, this.adminHost, this.adminPort);
    this.adminUrl = srv.url;
    stop.addEventListener('abort', () => void srv.close(), { once: true });
  }
}

/** The provider as `--cloud-provider=loopback --cloud-config=<file>` builds it. */
export function loopbackCloudFromConfig(config: string | undefined): LoopbackCloud {
  let cfg: LoopbackCloudConfig = {};
  if (config?.trim()) {
    let v: unknown;
    try {
      v = JSON.parse(config);
    } catch (e) {
      throw new Error(`loopback cloud config is not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('loopback cloud config must be a JSON object');
    cfg = v;
  }
  const admin = cfg.adminAddress;
  if (!admin) return new LoopbackCloud(cfg);
  const i = admin.lastIndexOf(':');
  const host = admin.slice(0, i);
  const port = Number(admin.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid adminAddress ${JSON.stringify(admin)}`);
  return new LoopbackCloudWithAdmin(cfg, host, port);
}

if (!cloudProviderNames().includes(PROVIDER_NAME)) registerCloudProvider(PROVIDER_NAME, loopbackCloudFromConfig);
