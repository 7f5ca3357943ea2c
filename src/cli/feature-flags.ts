// `--feature-gates` and `--emulated-version` as every kplane component parses them (serve,
// controller-manager): component-base's syntax and pflag's message for a bad value. The caller
// decides how to stop (pflag exits 2).
import type { Logger } from '../golang/klog.js';
import { type FeatureGate, KUBE_BINARY_VERSION, newKubeFeatureGate, parseEmulatedVersionFlag, validateEmulationVersion } from '../featuregate/index.js';

/** kplane's gate at `--emulated-version`, with each `--feature-gates` value set in order; or the flag error. */
export function featureGateFromFlags(emulated: string | undefined, gates: readonly string[] | undefined, log: Logger): FeatureGate | { error: string } {
  let version = KUBE_BINARY_VERSION;
  if (emulated !== undefined) {
    const parsed = parseEmulatedVersionFlag(emulated);
    if ('error' in parsed) return { error: `invalid argument ${JSON.stringify(emulated)} for "--emulated-version" flag: ${parsed.error}` };
    const invalid = validateEmulationVersion(KUBE_BINARY_VERSION, parsed);
    if (invalid) return { error: invalid };
    version = parsed;
  }
  const gate = newKubeFeatureGate(version, { log });
  for (const value of gates ?? []) {
    try {
      gate.set(value);
    } catch (e) {
      return { error: `invalid argument ${JSON.stringify(value)} for "--feature-gates" flag: ${(e as Error).message}` };
    }
  }
  return gate;
}
