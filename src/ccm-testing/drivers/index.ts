// The drivers kplane ships, by the name a capability file's `driver:` gives.
import type { KubeClient } from '../../client/index.js';
import type { CcmTestDriver } from '../types.js';

/** What a driver factory receives: the cluster's client and the capability file's `config:` map. */
export interface DriverContext {
  readonly client: KubeClient;
  readonly config: Readonly<Record<string, unknown>>;
}

export type DriverFactory = (ctx: DriverContext) => Promise<CcmTestDriver>;

export const builtinDrivers: Readonly<Record<string, DriverFactory>> = {};
