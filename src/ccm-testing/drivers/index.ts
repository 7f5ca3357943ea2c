// The drivers kplane ships, by the name a capability file's `driver:` gives.
import type { DriverFactory } from './context.js';
import { fakeDriver } from './fake.js';
import { loopbackDriver } from './loopback.js';

export type { DriverContext, DriverFactory } from './context.js';

export const builtinDrivers: Readonly<Record<string, DriverFactory>> = {
  fake: fakeDriver,
  loopback: loopbackDriver,
};

export { fakeDriver } from './fake.js';
export { loopbackDriver, LOOPBACK_CAPABILITIES } from './loopback.js';
export { localExternalClient } from './external.js';
export { apiServerPodClient, directPodClient } from './pod-client.js';
export { KubeletStopEmulation } from './kubelet-stop.js';
export { LOCAL_TIMEOUTS, localTimeouts } from './timeouts.js';
