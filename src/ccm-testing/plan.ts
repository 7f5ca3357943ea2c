// Which halves of which tests a run selects, in what order, and why a selected half cannot run
// with this driver. Pure: the runner and `kplane ccm-test --list` both read it, so the list shows
// exactly what a run would do.
import type { CcmTestCase, CcmTestDriver, InfraNeed } from './types.js';

export type Half = 'controlPlane' | 'dataPlane';

export interface PlannedHalf {
  readonly test: CcmTestCase;
  readonly half: Half;
  /** Why it cannot run (missing capability, infra or nodes); undefined when it can. */
  readonly skip?: string;
}

export interface PlanOptions {
  /** Ids or labels: a test is selected when one is a substring of its id or equals one of its labels. */
  readonly focus?: readonly string[];
  readonly skip?: readonly string[];
  /** Ready schedulable Nodes in the cluster (runner.ts readyNodeCount); undefined: not known, minNodes is not checked (e.g. --list without a cluster). */
  readonly nodeCount?: number;
}

/** What a driver offers, as the plan reads it. */
export type DriverOffer = Pick<CcmTestDriver, 'capabilities' | 'nodes' | 'loadBalancers' | 'externalClient' | 'upgrade' | 'podClient'>;

export const hasHalf = (test: CcmTestCase, half: Half): boolean => typeof test[half] === 'function';

/** A focus or skip entry matches a test by id substring or exact label (ginkgo's --focus on the text, --label-filter on labels). */
export function matches(test: CcmTestCase, patterns: readonly string[]): boolean {
  return patterns.some((p) => test.id.includes(p) || (test.labels ?? []).includes(p));
}

export function isSelected(test: CcmTestCase, opts: PlanOptions): boolean {
  if (opts.focus?.length && !matches(test, opts.focus)) return false;
  return !(opts.skip?.length && matches(test, opts.skip));
}

/** Why `half` of `test` cannot run with `driver`, or undefined. Every missing thing is named. */
export function skipReason(test: CcmTestCase, half: Half, driver: DriverOffer, nodeCount?: number): string | undefined {
  const reasons: string[] = [];
  const needed = [...test.needs.capabilities];
  if (half === 'dataPlane') for (const c of ['dataPlane' as const, ...(test.needs.dataPlane?.capabilities ?? [])]) if (!needed.includes(c)) needed.push(c);
  const missing = needed.filter((c) => !driver.capabilities.has(c));
  if (missing.length) reasons.push(`missing capability ${missing.join(', ')}`);
  const infra: InfraNeed[] = [...(test.needs.infra ?? [])];
  if (half === 'dataPlane') for (const i of ['externalClient' as const, ...(test.needs.dataPlane?.infra ?? [])]) if (!infra.includes(i)) infra.push(i);
  const lacking = infra.filter((i) => driver[i] === undefined);
  if (lacking.length) reasons.push(`driver has no ${lacking.join(', ')} infra`);
  const min = test.needs.minNodes ?? 0;
  if (nodeCount !== undefined && nodeCount < min) reasons.push(`needs ${min} ready schedulable nodes, the cluster has ${nodeCount}`);
  return reasons.length ? reasons.join('; ') : undefined;
}

/**
 * The halves a run executes, in order: the control-plane halves of the non-disruptive tests, then
 * their data-plane halves (research ccm.md §5.5), then each disruptive test (both halves), one at
 * a time, last. Within a group the catalogue's order is kept, so the list is stable.
 */
export function planSuite(tests: readonly CcmTestCase[], driver: DriverOffer, opts: PlanOptions = {}): PlannedHalf[] {
  const selected = tests.filter((t) => isSelected(t, opts));
  const plan = (t: CcmTestCase, half: Half): PlannedHalf => {
    const skip = skipReason(t, half, driver, opts.nodeCount);
    return skip ? { test: t, half, skip } : { test: t, half };
  };
  const calm = selected.filter((t) => !t.needs.disruptive);
  const disruptive = selected.filter((t) => t.needs.disruptive);
  return [
    ...calm.filter((t) => hasHalf(t, 'controlPlane')).map((t) => plan(t, 'controlPlane')),
    ...calm.filter((t) => hasHalf(t, 'dataPlane')).map((t) => plan(t, 'dataPlane')),
    ...disruptive.flatMap((t) => (['controlPlane', 'dataPlane'] as const).filter((h) => hasHalf(t, h)).map((h) => plan(t, h))),
  ];
}

/** One line per test of `--list`: id, halves, needs, and per half whether it runs or why not. Stable for a given catalogue and driver. */
export function listLines(tests: readonly CcmTestCase[], driver: DriverOffer, opts: PlanOptions = {}): string[] {
  const rows: string[][] = [['ID', 'NEEDS', 'CONTROL PLANE', 'DATA PLANE']];
  for (const t of tests) {
    if (!isSelected(t, opts)) continue;
    const needs = [
      ...t.needs.capabilities,
      ...(t.needs.infra ?? []).map((i) => `infra:${i}`),
      ...(t.needs.dataPlane?.capabilities ?? []).map((c) => `dataPlane:${c}`),
      ...(t.needs.dataPlane?.infra ?? []).map((i) => `dataPlane:infra:${i}`),
      ...(t.needs.minNodes ? [`nodes>=${t.needs.minNodes}`] : []),
      ...(t.needs.disruptive ? ['disruptive'] : []),
      ...(t.needs.slow ? ['slow'] : []),
    ];
    const cell = (h: Half): string => {
      if (!hasHalf(t, h)) return '-';
      const why = skipReason(t, h, driver, opts.nodeCount);
      return why ? `skip (${why})` : 'runs';
    };
    rows.push([t.id, needs.join(',') || '-', cell('controlPlane'), cell('dataPlane')]);
  }
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => (i < 3 ? c.padEnd(widths[i]! + 2) : c))
      .join('')
      .trimEnd(),
  );
}
