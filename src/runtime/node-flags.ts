// The node (V8) command-line flags kplane's processes run with: `npm start` and bin/kplane.js pass
// them (V8 reads them when the heap is made, and node refuses them in NODE_OPTIONS, so they cannot
// be set from inside the process); the benchmark starts its servers with the same ones, and
// node-flags.test.ts keeps those places in step with this list.
//
// --initial-old-space-size=256: the old generation may reach 256 MiB before a full (mark-compact)
// GC, and that stays the floor of V8's limit after every full GC. V8's default starts small and
// sets each next limit from the live size, so a server whose old generation is its watch cache
// (tens of MiB of long-lived objects) ran a full GC every second or two while it took writes: pauses
// of 15-29 ms with 15-17 ms more of incremental marking each, the tail of its write latency (the
// open-loop create round after 65,000 stored objects: p99 44.97 and 56.81 ms with 2-3 full GCs in
// 10 s; with the flag 16.34 ms and none). The cost is memory: garbage may build up to the floor
// before it is collected (RSS after forced GCs, empty / with 100,000 ConfigMaps: 155 / 358 MiB
// without it, 160 / 361 and 163 / 364 MiB in two runs with it; docs/benchmarks.md). Run
// `node <flags> bin/kplane.js serve` to choose another value.
export const NODE_FLAGS: readonly string[] = ['--initial-old-space-size=256'];
