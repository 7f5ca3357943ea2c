// Turns off V8's allocation-site pretenuring for this process.
//
// Why: V8 remembers, for each object or array literal in the code (an "allocation site"), how many
// of the objects it made survived a scavenge. When nearly all did, V8 decides that the site makes
// long-lived objects and from then on allocates its objects directly in the old generation. V8
// takes that back only after a full GC that frees over 90 % of the old generation, which does not
// happen in a server whose old generation is its watch cache. A literal that serves long-lived and
// short-lived objects alike then puts the short-lived ones in the old generation too, and an old
// object that points to a young one keeps it alive through every scavenge (the scavenger treats
// old-to-young pointers as roots) until the next full GC, dead or not.
//
// node:streams is such a case: every Readable and Writable gets its `_events` table from one
// literal. Once enough long-lived streams existed (sockets of many keep-alive clients, watch
// connections; in a plain node process 100,000 PassThrough streams did it, though whether V8
// decides at all depends on when its scavenges fall), every later stream's `_events` is born
// old, and each HTTP/2 request's stream, request, response and the listeners they hold survive the
// scavenges and are promoted. Their own literals then show the same survival and are pretenured
// too. In kplane this showed after HTTP/1.1 traffic: an HTTP/2 get round at 1,000 requests/s then
// promoted ~1.2 MB per scavenge, with 3-7 ms scavenge pauses and a get p99 above 5 ms, whatever
// the earlier workaround (http2-stream-tables.ts) and full GCs did; without pretenuring ~120-220 KB
// and ~1 ms (bench/pretenuring.ts shows it with an in-process control plane).
//
// The cost: objects that really are long-lived (the watch cache's) are allocated young and copied
// once or twice by the scavenger before they reach the old generation.
//
// V8 reads the flag when it processes survival feedback, so setting it once the process runs takes
// effect from then on; sites already decided stay decided, hence this runs as early as possible
// (the CLI calls it first; createControlPlane and serveCatalog, the library entries, call it again,
// which is then a no-op). KPLANE_V8_PRETENURING=1 in the environment keeps V8's default (for comparisons).
import v8 from 'node:v8';

let applied = false;

/** Sets V8's `--no-allocation-site-pretenuring` unless KPLANE_V8_PRETENURING=1; true when it is off. */
export function disableAllocationSitePretenuring(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.KPLANE_V8_PRETENURING === '1') return applied;
  if (!applied) {
    v8.setFlagsFromString('--no-allocation-site-pretenuring');
    applied = true;
  }
  return true;
}
