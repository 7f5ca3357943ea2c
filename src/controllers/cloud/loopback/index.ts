// The `loopback` cloud provider, registered under that name on import. `--cloud-config` is a
// JSON object: LoopbackCloudOptions (`stateDir` among them) plus `adminAddress` ("127.0.0.1:<port>")
// for the admin interface, served from `initialize` until the manager stops, and `adminURLFile`.
import { renameSync, writeFileSync } from 'node:fs';
import { cloudProviderNames, type ControllerClientBuilder, registerCloudProvider } from '../provider.js';
import { serveCloudAdmin } from './admin.js';
import { LoopbackCloud, type LoopbackCloudOptions, PROVIDER_NAME } from './cloud.js';

export { LoopbackCloud, CloudAdminError, PROVIDER_NAME, PROVIDER_ID_PREFIX } from './cloud.js';
export type { LoopbackCloudOptions, Instance, InstanceState, LoadBalancerInfo } from './cloud.js';
export { serveCloudAdmin } from './admin.js';
export type { HealthCheckOptions } from './health.js';

export interface LoopbackCloudConfig extends LoopbackCloudOptions {
  /** host:port of the admin interface (127.0.0.0/8 only; port 0 picks one); absent: no HTTP admin interface. */
  readonly adminAddress?: string;
  /** The admin interface's URL is written to this file once it listens (for a script or test to read). */
  readonly adminURLFile?: string;
}

/** Serves the admin interface from `initialize` until the manager stops; the load balancers stay (a cloud outlives its controllers). */
class LoopbackCloudWithAdmin extends LoopbackCloud {
  constructor(
    opts: LoopbackCloudOptions,
    private readonly adminHost: string,
    private readonly adminPort: number,
    private readonly adminURLFile: string | undefined,
  ) {
    super(opts);
  }

  override async initialize(clients: ControllerClientBuilder, stop: AbortSignal): Promise<void> {
    await super.initialize(clients, stop);
    const srv = await serveCloudAdmin(this, this.adminHost, this.adminPort);
    this.adminUrl = srv.url;
    if (this.adminURLFile) {
      writeFileSync(`${this.adminURLFile}.tmp`, `${srv.url}\n`);
      renameSync(`${this.adminURLFile}.tmp`, this.adminURLFile);
    }
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
  if (cfg.stateDir !== undefined && (typeof cfg.stateDir !== 'string' || !cfg.stateDir))
    throw new Error('loopback cloud config: stateDir must be a directory name');
  if (cfg.ingressIPMode !== undefined && cfg.ingressIPMode !== 'Proxy' && cfg.ingressIPMode !== 'VIP')
    throw new Error(`loopback cloud config: ingressIPMode must be Proxy or VIP, not ${JSON.stringify(cfg.ingressIPMode)}`);
  const admin = cfg.adminAddress;
  if (!admin) return new LoopbackCloud(cfg);
  const i = admin.lastIndexOf(':');
  const host = admin.slice(0, i);
  const port = Number(admin.slice(i + 1));
  if (i < 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid adminAddress ${JSON.stringify(admin)}`);
  if (cfg.adminURLFile !== undefined && typeof cfg.adminURLFile !== 'string') throw new Error('loopback cloud config: adminURLFile must be a file name');
  return new LoopbackCloudWithAdmin(cfg, host, port, cfg.adminURLFile);
}

if (!cloudProviderNames().includes(PROVIDER_NAME)) registerCloudProvider(PROVIDER_NAME, loopbackCloudFromConfig);
