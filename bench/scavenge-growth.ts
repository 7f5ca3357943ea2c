// How much each scavenge (minor GC) moves into V8's old generation, before and after one forced
// full GC: the measurement of bench/h2-gc.ts and bench/map-tables.ts (run with node --expose-gc).
import { execFileSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';

type Phase = 'before' | 'after';

const oldSpaceUsed = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;

export class ScavengeGrowth {
  private readonly growth: Record<Phase, number[]> = { before: [], after: [] };
  private readonly pauses: Record<Phase, number[]> = { before: [], after: [] };
  private phase: Phase = 'before';
  private last = oldSpaceUsed();
  private readonly gc: () => void;
  private readonly obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const now = oldSpaceUsed();
      if ((e as unknown as { detail: { kind: number } }).detail.kind === 1) {
        this.growth[this.phase].push(now - this.last);
        this.pauses[this.phase].push(e.duration);
      }
      this.last = now;
    }
  });

  constructor() {
    const gc = (globalThis as { gc?: () => void }).gc;
    if (!gc) throw new Error('run with node --expose-gc');
    this.gc = gc;
    this.obs.observe({ entryTypes: ['gc'] });
  }

  /** Runs one full GC (then `after`, uncounted) and counts later scavenges as "after". */
  fullGc(after?: () => void): void {
    this.phase = 'after';
    this.gc();
    after?.();
    this.last = oldSpaceUsed();
  }

  stop(): void {
    this.obs.disconnect();
  }

  /** "N scavenges, old generation +X KB per scavenge (median), pause median Y ms" for a phase. */
  summary(phase: Phase): string {
    const g = this.growth[phase];
    return `${g.length} scavenges, old generation +${(median(g) / 1024).toFixed(0)} KB per scavenge (median), pause median ${median(this.pauses[phase]).toFixed(2)} ms`;
  }
}

/**
 * Runs `round(name)` for each name, each in a process of its own (an earlier round's heap growth
 * would change a later one's scavenges): without an argument this script re-runs itself once per
 * name; with a name as its argument it runs that round.
 */
export async function roundsInOwnProcesses<N extends string>(script: string, names: readonly N[], round: (name: N) => Promise<void>): Promise<void> {
  const only = process.argv[2];
  if (only === undefined) {
    for (const name of names) execFileSync(process.execPath, [...process.execArgv, fileURLToPath(script), name], { stdio: 'inherit' });
    return;
  }
  const name = names.find((n) => n === only);
  if (name === undefined) throw new Error(`unknown round ${only}; one of ${names.join(', ')}`);
  await round(name);
}
