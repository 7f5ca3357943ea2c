// The test catalogue (research ccm.md §4): every test of the seed's list as a CcmTestCase.
import type { CcmTestCase } from '../types.js';

export const catalogue: readonly CcmTestCase[] = [];
