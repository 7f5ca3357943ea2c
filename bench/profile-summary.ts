// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof`): self time by function and by
// file, and inclusive time of the project's own functions.
//   node --import tsx bench/profile-summary.ts bench/profiles/CPU.*.cpuprofile [--top 30]
import { readFileSync } from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

// The checkout the profiled server ran from (any worktree): its path is cut from file names, and
// its src/ files count as the project's.
const ROOT = /^(?:file:\/\/)?.*\/(?=(?:src|node_modules|bench|examples)\/)/;
const PROJECT_SRC = /^file:\/\/.*\/src\/(?!.*node_modules)/;

const args = process.argv.slice(2);
const topIdx = args.indexOf('--top');
const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 25;
const files = args.filter((a, i) => !a.startsWith('--') && (topIdx < 0 || i !== topIdx + 1));

for (const file of files) {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Self time per node from samples and their time deltas (µs).
  const self = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const label = (n: Node): string => {
    const url = n.callFrame.url.replace(/^file:\/\//, '').replace(ROOT, '');
    return `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
  };
  const selfByFn = new Map<string, number>();
  const selfByFile = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, t] of self) {
    const n = byId.get(id)!;
    selfByFn.set(label(n), (selfByFn.get(label(n)) ?? 0) + t);
    const f = n.callFrame.url.replace(ROOT, '') || `(${n.callFrame.functionName})`;
    selfByFile.set(f, (selfByFile.get(f) ?? 0) + t);
    // Inclusive: count t once for each distinct project function on the stack.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const c = byId.get(cur)!;
      if (!PROJECT_SRC.test(c.callFrame.url) && !c.callFrame.url.includes('node:')) continue;
      const l = label(c);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + t);
    }
  }
  const pct = (t: number): string => `${((t / total) * 100).toFixed(1).padStart(5)}%`;
  const print = (title: string, m: Map<string, number>): void => {
    console.log(`\n${title}`);
    for (const [k, t] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(t)}  ${(t / 1000).toFixed(0).padStart(6)} ms  ${k}`);
  };
  console.log(`# ${file}: ${(total / 1e6).toFixed(1)} s sampled`);
  print('self time by function', selfByFn);
  print('self time by file', selfByFile);
  print('inclusive time (project and node: frames)', inclusive);
}
