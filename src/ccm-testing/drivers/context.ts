// What a driver factory receives (kept apart from index.ts so that drivers import it without a cycle).
import type { KubeClient } from '../../client/index.js';
import type { CcmTestDriver } from '../types.js';

/** What a driver factory receives: the cluster's client and the capability file's `config:` map. */
export interface DriverContext {
  readonly client: KubeClient;
  readonly config: Readonly<Record<string, unknown>>;
}

export type DriverFactory = (ctx: DriverContext) => Promise<CcmTestDriver>;
