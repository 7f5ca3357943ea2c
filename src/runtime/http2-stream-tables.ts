// Keeps node:http2's per-session stream tables in V8's young generation.
//
// Why: a JavaScript Map or Set keeps its entries in a hash table that V8 replaces ("rehashes")
// whenever enough entries were added and removed. V8 allocates the replacement in the generation
// of the table it replaces (OrderedHashTable::Rehash), and the replaced table keeps its entries and
// a pointer to its successor. node:http2 keeps each session's open streams in a Map (and streams
// waiting for an id in a Set) that are rehashed every few requests. While the current table is
// young, the replaced ones die young. Once a full GC (or two scavenges while the table happened to
// survive) has moved the current table to the old generation, every later table is allocated old,
// and each of them, dead or not, holds the streams that were open when it was replaced: the
// scavenger treats old-to-young pointers as roots, so those streams, everything they reference,
// and the next tables survive every scavenge and are promoted, until the next full GC, which
// promotes the then-current table and starts it again. A bare node:http2 server answering 1,000
// requests/s promotes ~7 KB per scavenge before its first full GC and ~730 KB after it
// (bench/h2-gc.ts); a plain Map with the same churn does the same (bench/map-tables.ts).
//
// What this does: every `every` streams of a session, it replaces the session's Map and Set with
// copies, whose tables are young, so the rehashes that follow allocate young tables again. The
// 'stream' event is emitted from a process.nextTick callback, so no node:http2 frame holds the
// old Map while it is swapped; node:http2 reads `session[kState].streams` anew on every use.
//
// node:http2's session state is internal (a symbol-keyed object). If a Node version lays it out
// differently, the sessions are left alone: the server works as before, only without the
// workaround. KPLANE_HTTP2_YOUNG_TABLES=0 in the environment turns it off (for comparisons).
import type { EventEmitter } from 'node:events';
import { types } from 'node:util';

/** Streams of a session between two swaps. */
const DEFAULT_EVERY = 64;

export interface StreamTables {
  streams: Map<unknown, unknown>;
  pendingStreams: Set<unknown>;
}

const kCount = Symbol('kplane.streamsSinceSwap');

/** The session's internal state object, when it has the Map and Set this module swaps. */
export function streamTablesOf(session: object): StreamTables | undefined {
  for (const sym of Object.getOwnPropertySymbols(session)) {
    if (sym.description !== 'state') continue;
    const st = (session as Record<symbol, unknown>)[sym];
    if (typeof st !== 'object' || st === null) return undefined;
    const t = st as Partial<StreamTables>;
    // node's SafeMap/SafeSet have null-prototype prototypes, so `instanceof Map` is false for them.
    return types.isMap(t.streams) && types.isSet(t.pendingStreams) ? (t as StreamTables) : undefined;
  }
  return undefined;
}

/** Replaces the session's stream Map and pending-stream Set with copies (same classes, same entries). */
export function swapStreamTables(session: object): boolean {
  const t = streamTablesOf(session);
  if (t === undefined) return false;
  // Node's SafeMap/SafeSet: the copy keeps the class, so every method node:http2 calls is the same.
  const MapClass = t.streams.constructor as new (entries: Iterable<[unknown, unknown]>) => Map<unknown, unknown>;
  const SetClass = t.pendingStreams.constructor as new (values: Iterable<unknown>) => Set<unknown>;
  t.streams = new MapClass(t.streams);
  t.pendingStreams = new SetClass(t.pendingStreams);
  return true;
}

const installed = new WeakSet<EventEmitter>();

type Session = EventEmitter & { [kCount]?: number };

/**
 * Installs the workaround on a node:http2 server (`http2.createServer`/`createSecureServer`, also
 * one that grpc-js made): each new session's stream tables are swapped every `every` streams.
 * Sessions whose state does not have the expected fields (another Node version) are left alone.
 */
export function keepStreamTablesYoung(server: EventEmitter, every = DEFAULT_EVERY): void {
  if (installed.has(server) || process.env.KPLANE_HTTP2_YOUNG_TABLES === '0') return;
  installed.add(server);
  server.on('session', (session: Session) => {
    if (streamTablesOf(session) === undefined) return;
    session[kCount] = 0;
    session.on('stream', () => {
      const n = (session[kCount] ?? 0) + 1;
      if (n < every) {
        session[kCount] = n;
        return;
      }
      session[kCount] = 0;
      swapStreamTables(session);
    });
  });
}
