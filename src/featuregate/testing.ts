// featuregate/testing: set a gate for the length of one test and put it back afterwards, as
// upstream's SetFeatureGateDuringTest does with tb.Cleanup. Takes node:test's TestContext (or
// anything with `after`).
import type { FeatureGate } from './feature-gate.js';

interface Cleanup {
  after(fn: () => void): void;
}

export function setFeatureGateDuringTest(t: Cleanup, gate: FeatureGate, feature: string, value: boolean): void {
  const wasExplicit = gate.explicitlySet(feature);
  const before = gate.enabled(feature);
  gate.setFromMap({ [feature]: value });
  t.after(() => {
    if (wasExplicit) gate.setFromMap({ [feature]: before });
    else gate.resetFeatureValueToDefault(feature);
  });
}

export function setFeatureGatesDuringTest(t: Cleanup, gate: FeatureGate, features: Readonly<Record<string, boolean>>): void {
  for (const [f, v] of Object.entries(features)) setFeatureGateDuringTest(t, gate, f, v);
}
