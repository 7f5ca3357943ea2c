// Shows the garbage-collection behaviour of node:http2 servers that bounds kplane's open-loop p99s:
// a bare server (no kplane code) answers h2load at 1,000 requests/s; halfway through, one full GC
// runs; the old generation's growth per scavenge is printed before and after, for node:http2 and,
// as the contrast, node:http (HTTP/1.1, keep-alive).
//
//   node --expose-gc --import tsx bench/h2-gc.ts
//
// On Node 20.20 and 22.23 (2026-11-22): before the full GC, scavenges promote ~5–15 KB and take
// ~0.5 ms; after it, every scavenge of the HTTP/2 server promotes 0.5–1.3 MB (nearly every request's
// objects survive: something a full GC promoted keeps later requests reachable until the next full
// GC) and takes 1.5–5 ms; the HTTP/1.1 server stays at ~5–20 KB and ~0.5 ms. Two forced minor GCs
// (promoting whatever is live) start it too. See docs/benchmarks.md.
//
// The cause (bench/map-tables.ts): node:http2's per-session stream Map and Set, rehashed every few
// streams, get old tables once a full GC has promoted the current one, and replaced old tables keep
// the streams they held. The third round runs the HTTP/2 server with kplane's workaround
// (src/runtime/http2-stream-tables.ts), which swaps those tables for young copies every 64 streams:
// after the full GC 33–52 KB per scavenge and 0.34–0.55 ms pauses, against 713–761 KB and 1.4–2.3 ms
// without (two runs, 2026-11-22).
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { h2load } from './h2load.js';
import { ScavengeGrowth, roundsInOwnProcesses } from './scavenge-growth.js';
import { keepStreamTablesYoung } from '../src/runtime/http2-stream-tables.js';

async function round(kind: 'http2' | 'http' | 'http2+tables'): Promise<void> {
  const body = Buffer.alloc(1300, 'x');
  const server =
    kind !== 'http'
      ? http2.createServer().on('stream', (s) => {
          s.respond({ ':status': 200, 'content-type': 'application/json' });
          s.end(body);
        })
      : http.createServer((_req, res) => {
          res.setHeader('content-type', 'application/json');
          res.end(body);
        });
  if (kind === 'http2+tables') keepStreamTablesYoung(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const gcs = new ScavengeGrowth();
  const timer = setTimeout(() => gcs.fullGc(), 6000);
  await h2load({ url, rate: 1000, seconds: 10, warmSeconds: 2, headers: [], h1: kind === 'http' });
  clearTimeout(timer);
  gcs.stop();
  server.close();
  for (const p of ['before', 'after'] as const) console.log(`${kind.padEnd(12)} ${p} the full GC: ${gcs.summary(p)}`);
}

await roundsInOwnProcesses(import.meta.url, ['http2', 'http', 'http2+tables'] as const, round);
