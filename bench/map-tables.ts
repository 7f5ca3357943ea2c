// Shows, without any server, the V8 behaviour behind bench/h2-gc.ts: a long-lived Map whose
// entries come and go (like node:http2's per-session stream table) rehashes every few operations;
// V8 allocates each new hash table in the generation of the one it replaces, and a replaced table
// keeps its entries. Once a full GC has moved the current table to the old generation, every later
// table is old and the values it held survive the scavenges that follow: nearly everything is
// promoted. Replacing the Map by a copy (what src/server/http2-stream-tables.ts does for node:http2)
// gives it a young table again.
//
//   node --expose-gc --import tsx bench/map-tables.ts
//
// Node 20.20 (2026-11-22): before the full GC ~3 KB per scavenge; after it ~1.6 MB; with a copy of
// the Map made after the full GC, back to a few KB.
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

const exposed = (globalThis as { gc?: () => void }).gc;
if (!exposed) throw new Error('run with node --expose-gc');
const gc: () => void = exposed;
const oldSpaceUsed = (): number => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;

async function round(copyAfterGc: boolean): Promise<void> {
  let table = new Map<number, object>();
  const inFlight: number[] = [];
  let id = 0;
  const growth: Record<'before' | 'after', number[]> = { before: [], after: [] };
  let phase: 'before' | 'after' = 'before';
  let last = oldSpaceUsed();
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const now = oldSpaceUsed();
      if ((e as unknown as { detail: { kind: number } }).detail.kind === 1) growth[phase].push(now - last);
      last = now;
    }
  });
  obs.observe({ entryTypes: ['gc'] });
  // Five "requests" per millisecond, each kept in the Map while two more are in flight.
  const timer = setInterval(() => {
    for (let i = 0; i < 5; i++) {
      const k = ++id;
      table.set(k, { payload: Array.from({ length: 100 }, (_, j) => ({ j })) });
      inFlight.push(k);
      if (inFlight.length > 2) table.delete(inFlight.shift()!);
    }
  }, 1);
  await new Promise((r) => setTimeout(r, 3000));
  phase = 'after';
  gc();
  if (copyAfterGc) table = new Map(table);
  last = oldSpaceUsed();
  await new Promise((r) => setTimeout(r, 4000));
  clearInterval(timer);
  obs.disconnect();
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const kb = (xs: number[]): string => `${(median(xs) / 1024).toFixed(0)} KB`;
  console.log(
    `${copyAfterGc ? 'Map copied after the full GC' : 'same Map throughout         '}: old generation per scavenge (median) before the full GC ${kb(growth.before)} (${growth.before.length} scavenges), after it ${kb(growth.after)} (${growth.after.length})`,
  );
}

await round(false);
await round(true);
