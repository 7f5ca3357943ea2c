// Scenario "micro": in-process microbenchmarks of hot helpers, reported (no goals of an issue):
//   parseJson (duplicate-key-aware JSON reader) against JSON.parse on a 1 KiB ConfigMap body;
//   CEL evaluation of 2 rules on a 20-field object (the custom resource bench's shape; aim ≤ 20 µs);
//   server-side apply of an unchanged 50-field ConfigMap, merge only (aim well under 1 ms);
//   a feature gate's enabled() (issue 24's goal: ≤ 50 ns per call).
// They were timing assertions in unit tests; timing lives here, where a slow machine cannot fail CI.
import { builtinDefinitions } from '../src/registry/builtin.js';
import { apply } from '../src/apimachinery/apply/merge.js';
import { parseJson } from '../src/apimachinery/json.js';
import type { KubeObject } from '../src/apimachinery/types.js';
import { compileRules, evaluate } from '../src/apiextensions/cel/index.js';
import { twentyFieldRules } from '../test/support/cel-bench-schema.js';
import { newKubeFeatureGate } from '../src/featuregate/index.js';

/** Mean ns per call over `n` calls after a warm-up. */
function nsPerCall(f: () => void, n = 20_000): number {
  for (let i = 0; i < n / 10; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  return Number(process.hrtime.bigint() - t0) / n;
}

export interface MicroRow {
  readonly op: string;
  readonly value: string;
}

export function runMicroBench(): MicroRow[] {
  const body = JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cfg', namespace: 'default', labels: { app: 'web', tier: 'front' }, annotations: { note: 'x'.repeat(200) } },
    data: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`key-${i}`, `value-${i}-${'v'.repeat(10)}`])),
  });
  const base = nsPerCall(() => JSON.parse(body) as unknown);
  const ours = nsPerCall(() => parseJson(body));

  const { schema, spec: obj } = twentyFieldRules();
  const rules = compileRules(schema, { path: 'spec.versions[0].schema.openAPIV3Schema' });
  if (rules.issues.length) throw new Error(`micro bench: CEL rules do not compile: ${JSON.stringify(rules.issues)}`);
  const cr = { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'a' }, spec: obj };
  const cel = nsPerCall(() => evaluate(rules.compiled, cr));

  // The merge of an apply that changes nothing: the live object already holds the config.
  const data = Object.fromEntries(Array.from({ length: 46 }, (_, i) => [`key-${i}`, `value-${i}`]));
  const config: KubeObject = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'cm', namespace: 'default', labels: { app: 'bench', tier: 'x' }, annotations: { note: 'n' } },
    data,
  };
  const applyOpts = {
    manager: 'bench',
    schema: { $ref: '#/definitions/io.k8s.api.core.v1.ConfigMap' },
    defs: builtinDefinitions,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    now: '2024-01-01T00:00:00Z',
  };
  const live = apply({ live: undefined, config, ...applyOpts }).object;
  const ssa = nsPerCall(() => apply({ live, config, ...applyOpts }), 2_000);

  // enabled() as the request path calls it: a known gate of the kube gate set, after flags were set.
  const gate = newKubeFeatureGate();
  gate.set('KplaneWatchCache=true');
  const gateNames = ['KplaneWatchCache', 'WatchList', 'KplaneCELCostLimits', 'CoordinatedLeaderElection'];
  let on = 0;
  const enabledNs =
    nsPerCall(() => {
      for (let i = 0; i < 100; i++) if (gate.enabled(gateNames[i & 3]!)) on++;
    }, 20_000) / 100;
  if (on < 0) throw new Error('unreachable');

  return [
    { op: 'feature gate enabled() of a known gate (goal ≤ 50 ns, issue 24)', value: `${enabledNs.toFixed(1)} ns per call` },
    { op: `parseJson of a ${body.length}-byte ConfigMap vs JSON.parse`, value: `${ours.toFixed(0)} vs ${base.toFixed(0)} ns (${(ours / base).toFixed(2)}x)` },
    { op: 'CEL: 2 rules on a 20-field object', value: `${(cel / 1000).toFixed(2)} µs per evaluation` },
    { op: 'server-side apply merge of an unchanged 50-field ConfigMap', value: `${(ssa / 1000).toFixed(1)} µs per apply` },
  ];
}
