// `kplane/ccm-testing`: the provider-neutral CCM test kit (issue 26) as a library, for a provider
// repository's own test runner. `kplane ccm-test` is the same through the command line.
export type * from './types.js';
export { CAPABILITIES } from './types.js';
export { runSuite, readyNodeCount, effectiveTimeouts, DEFAULT_CCM_TIMEOUTS, type RunOptions } from './runner.js';
export { planSuite, listLines, skipReason, isSelected, type PlannedHalf, type PlanOptions, type Half } from './plan.js';
export { loadCapabilityFile, parseCapabilityFile, CcmTestConfigError, TIMEOUT_KEYS, type CapabilityFile } from './capability-file.js';
export { loadDriver, checkDriver, withCapabilityFile, DRIVER_EXPORTS, type LoadDriverOptions } from './driver-loader.js';
export { connectCluster, type Cluster } from './cluster.js';
export { junitReport, junitName, type JUnitOptions } from './junit.js';
export { catalogue } from './catalogue/index.js';
export { builtinDrivers, type DriverContext, type DriverFactory } from './drivers/index.js';
