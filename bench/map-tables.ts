// Shows, without any server, the V8 behaviour behind bench/h2-gc.ts: a long-lived Map whose
// entries come and go (like node:http2's per-session stream table) rehashes every few operations;
// V8 allocates each new hash table in the generation of the one it replaces, and a replaced table
// keeps its entries. Once a full GC has moved the current table to the old generation, every later
// table is old and the values it held survive the scavenges that follow: nearly everything is
// promoted. Replacing the Map by a copy (what src/runtime/http2-stream-tables.ts does for node:http2)
// gives it a young table again.
//
//   node --expose-gc --import tsx bench/map-tables.ts
//
// Node 20.20 (2026-11-22, each round in its own process): before the full GC 3 KB per scavenge;
// after it 3.0 MB (pauses 0.35 → 8.6 ms); with a copy of the Map made after the full GC, 6 KB.
import { ScavengeGrowth, roundsInOwnProcesses } from './scavenge-growth.js';

async function round(kind: 'same' | 'copied'): Promise<void> {
  const copyAfterGc = kind === 'copied';
  let table = new Map<number, object>();
  const inFlight: number[] = [];
  let id = 0;
  const gcs = new ScavengeGrowth();
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
  gcs.fullGc(() => {
    if (copyAfterGc) table = new Map(table);
  });
  await new Promise((r) => setTimeout(r, 4000));
  clearInterval(timer);
  gcs.stop();
  const label = copyAfterGc ? 'Map copied after the full GC' : 'same Map throughout';
  for (const p of ['before', 'after'] as const) console.log(`${label.padEnd(28)} ${p} the full GC: ${gcs.summary(p)}`);
}

await roundsInOwnProcesses(import.meta.url, ['same', 'copied'] as const, round);
