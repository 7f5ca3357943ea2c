// The test catalogue (research ccm.md §4): every test of the seed's list as a CcmTestCase, each
// naming the upstream test it comes from. Order: Services, load balancers, then the disruptive
// node and upgrade tests (the runner also runs disruptive ones last).
import type { CcmTestCase } from '../types.js';
import { loadBalancerTests } from './loadbalancers.js';
import { nodeTests } from './nodes.js';
import { serviceTests } from './services.js';
import { upgradeTests } from './upgrade.js';

export const catalogue: readonly CcmTestCase[] = [...serviceTests, ...loadBalancerTests, ...nodeTests, ...upgradeTests];

export { serviceTests, loadBalancerTests, nodeTests, upgradeTests };
export { externalIPFor } from './services.js';
export { CcmTestFailure } from './support.js';
