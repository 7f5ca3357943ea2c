// The serve library: start the registry gRPC server over a catalog directory from code (tests, other
// commands). `kplane catalog serve` (../cli/serve.ts) adds flags, the cache dir and signal handling.
import { catalogFromDir } from './catalog.js';
import { createLogger, type Logger } from './log.js';
import { createRegistryServer, listen, shutdown } from './server.js';
import { disableAllocationSitePretenuring } from '../../runtime/v8-pretenuring.js';

export { catalogFromDir, type ServedCatalog } from './catalog.js';
export { JsonCache } from './cache.js';
export { createRegistryServer, listen, shutdown } from './server.js';
export { RegistryIndex, RegistryQueryError } from './registry-index.js';
export { modelBundleToApi } from './api-bundle.js';

export interface ServeCatalogOptions {
  /** default 127.0.0.1 */
  host?: string;
  /** default 0: any free port */
  port?: number;
  /** default: discard */
  logger?: Logger;
  /** log each call as opm does (default false here; the CLI logs them) */
  logCalls?: boolean;
}

export interface RunningCatalogServer {
  port: number;
  /** host:port for a gRPC client */
  address: string;
  stop(graceMs?: number): Promise<void>;
}

/** Loads, validates and serves dir; throws the load error (opm's message) when the catalog is invalid. */
export async function serveCatalog(dir: string, opts: ServeCatalogOptions = {}): Promise<RunningCatalogServer> {
  // Before the catalog is loaded, as createControlPlane does (see runtime/v8-pretenuring.ts).
  disableAllocationSitePretenuring();
  const host = opts.host ?? '127.0.0.1';
  const served = await catalogFromDir(dir);
  const logger = opts.logger ?? createLogger({ write: () => {} });
  const server = createRegistryServer({ ...served, logger, logCalls: opts.logCalls ?? false });
  const port = await listen(server, host, opts.port ?? 0);
  return {
    port,
    address: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
    stop: (graceMs = 5000) => shutdown(server, graceMs),
  };
}
