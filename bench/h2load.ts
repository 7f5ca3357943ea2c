// Open-loop load from h2load (nghttp2's load generator, written in C; Debian's nghttp2-client,
// unpacked into .tools/ by scripts/install-tools.sh). A Node load generator on this 2-core machine
// adds its own event-loop and GC pauses to every latency it measures (a bare grpc-js server gave
// p99 36–49 ms at 2,000 calls/s from a grpc-js client, 10 ms from h2load); h2load's are tens of µs.
//
// h2load sends at a fixed rate (`--rps` per connection) whatever the answers' latency, up to
// `maxStreams` requests in flight per HTTP/2 connection, and writes one line per request to
// `--log-file` (start time µs, HTTP status, duration µs), from which the percentiles are computed.
// With HTTP/2 and one connection the arrivals are evenly spaced; several connections started
// together fire together (bursts of `connections`), so rounds here use as few as the rate allows.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stats, type Stats } from './common.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const H2LOAD = join(root, '.tools', 'bin', 'h2load');
export const NGHTTPD = join(root, '.tools', 'bin', 'nghttpd');

export function assertH2Load(): void {
  if (!existsSync(H2LOAD)) throw new Error(`h2load not found at ${H2LOAD}; run: bash scripts/install-tools.sh`);
}

export interface H2LoadRound {
  /** the URL every request goes to (with `uris`, the scheme, host and port only matter) */
  readonly url: string;
  /** several paths, requested in turn (h2load's --input-file) */
  readonly uris?: readonly string[];
  /** requests per second offered, in total; without it, a closed loop (each connection keeps `maxStreams` requests in flight) */
  readonly rate?: number;
  readonly seconds: number;
  /** sent at the same rate before measuring, not counted */
  readonly warmSeconds: number;
  /** HTTP/2 connections (default 1); the rate is split evenly */
  readonly connections?: number;
  /** requests in flight per connection at most (default 256) */
  readonly maxStreams?: number;
  /** the request body (POST); without it requests are GETs */
  readonly body?: Buffer | string;
  readonly headers?: readonly string[];
  /** HTTP/1.1 instead of HTTP/2 (one request in flight per connection) */
  readonly h1?: boolean;
}

export interface H2LoadResult {
  /** latency of each answered request, ms, from its send (with the samples, to merge rounds) */
  readonly latency: StatsWithSamples;
  readonly answered: number;
  /** answers that were not 2xx, or requests that failed */
  readonly errors: number;
  /** the status codes seen, with counts */
  readonly statuses: Readonly<Record<string, number>>;
  /** requests started per second over the measured round */
  readonly sentPerSec: number;
  /** CPU time h2load itself used (user + system, s), warm-up included; with several rounds, their sum */
  readonly cpuSeconds: number;
}

/** Runs one h2load round; resolves when h2load exits. */
export async function h2load(r: H2LoadRound): Promise<H2LoadResult> {
  assertH2Load();
  const dir = mkdtempSync(join(tmpdir(), 'kplane-h2load-'));
  try {
    const conns = r.connections ?? 1;
    const args = [
      '-c',
      String(conns),
      '-t',
      '1',
      '-m',
      String(r.h1 ? 1 : (r.maxStreams ?? 256)),
      ...(r.rate !== undefined ? ['--rps', String(r.rate / conns)] : []),
      '-D',
      `${Math.round(r.seconds * 1000)}ms`,
      '--warm-up-time',
      `${Math.round(r.warmSeconds * 1000)}ms`,
      '--log-file',
      join(dir, 'log'),
    ];
    if (r.h1) args.push('--h1');
    for (const h of r.headers ?? []) args.push('-H', h);
    if (r.body !== undefined) {
      writeFileSync(join(dir, 'body'), r.body);
      args.push('-d', join(dir, 'body'));
    }
    if (r.uris !== undefined) {
      const base = new URL(r.url);
      writeFileSync(join(dir, 'uris'), r.uris.map((p) => `${base.origin}${p}`).join('\n') + '\n');
      args.push('-i', join(dir, 'uris'));
    } else args.push(r.url);
    // bash's `times` prints the CPU its children used once h2load has exited: the generator's own cost.
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('bash', ['-c', '"$0" "$@"; s=$?; times; exit $s', H2LOAD, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('error', reject);
      // 'close', not 'exit': 'exit' may come before the last of stdout (the `times` line) was read.
      child.on('close', (code) => (code === 0 ? resolve(text) : reject(new Error(`h2load exited ${code}: ${text.slice(-2000)}`))));
    });
    return { ...parseLog(readFileSync(join(dir, 'log'), 'utf8'), r.seconds, out), cpuSeconds: childCpuSeconds(out) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The children's line of bash's `times` (the last line: `0m0.123s 0m0.045s`), user + system in s. */
function childCpuSeconds(output: string): number {
  const last = output.trim().split('\n').at(-1) ?? '';
  const m = /^(\d+)m([\d.]+)s (\d+)m([\d.]+)s$/.exec(last.trim());
  if (!m) throw new Error(`h2load: no CPU times in its output: ${output.slice(-500)}`);
  return Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4]);
}

/** Several h2load rounds at once (e.g. one per request body), merged as one. */
export async function h2loadMany(rounds: readonly H2LoadRound[]): Promise<H2LoadResult> {
  const results = await Promise.all(rounds.map((r) => h2load(r)));
  const all: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let sentPerSec = 0;
  let cpuSeconds = 0;
  for (const x of results) {
    all.push(...x.latency.samples);
    errors += x.errors;
    sentPerSec += x.sentPerSec;
    cpuSeconds += x.cpuSeconds;
    for (const [k, v] of Object.entries(x.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  }
  return { latency: withSamples(all), answered: all.length, errors, statuses, sentPerSec, cpuSeconds };
}

export type StatsWithSamples = Stats & { readonly samples: number[] };

function withSamples(samples: number[]): StatsWithSamples {
  // not enumerable: rows carrying these stats are written out with --json
  return Object.defineProperty(stats(samples), 'samples', { value: samples, enumerable: false }) as StatsWithSamples;
}

/**
 * Parses h2load's log file: `start-µs<TAB>status<TAB>duration-µs` per request. Requests still in
 * flight when the warm-up ends are logged first, with status 0, and are not counted; a status of 0
 * anywhere else, or any non-2xx status, is an error. When h2load's summary is in `output`, its
 * `failed` and `timeout` counts are the errors instead: the carried-over requests' start times
 * interleave with the first measured ones by microseconds (46 of them at 64 streams, the last
 * one 1 µs before the first measured request), so by the log alone a carried-over request can
 * look like a failed one (1-3 "errors" per etcd round; standalone h2load runs against the same
 * server reported 0 failed).
 */
export function parseLog(text: string, seconds: number, output = ''): Omit<H2LoadResult, 'cpuSeconds'> {
  const rows: { start: number; status: number; dur: number }[] = [];
  for (const line of text.split('\n')) {
    const [start, status, dur] = line.split('\t');
    if (start === undefined || status === undefined || dur === undefined) continue;
    rows.push({ start: Number(start), status: Number(status), dur: Number(dur) });
  }
  if (rows.length === 0) throw new Error(`h2load logged no requests: ${output.slice(-2000)}`);
  let firstMeasured = Infinity;
  for (const r of rows) if (r.status !== 0 && r.start < firstMeasured) firstMeasured = r.start;
  const ok: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let counted = 0;
  for (const r of rows) {
    if (r.status === 0 && r.start <= firstMeasured) continue; // carried over from the warm-up
    counted++;
    statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    if (r.status >= 200 && r.status < 300) ok.push(r.dur / 1000);
    else errors++;
  }
  const summary = /requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed, \d+ errored, (\d+) timeout/.exec(output);
  if (summary !== null) delete statuses['0']; // carried over from the warm-up, or counted by h2load as failed
  const failed = summary === null ? errors : Number(summary[1]) + Number(summary[2]);
  return { latency: withSamples(ok), answered: ok.length, errors: failed, statuses, sentPerSec: counted / seconds };
}

export interface Floor {
  readonly url: string;
  stop(): void;
}

/** nghttpd (C) serving one static file of `bytes` over HTTP/2 without TLS: the machine's floor. */
export async function startNghttpd(bytes: number): Promise<Floor> {
  if (!existsSync(NGHTTPD)) throw new Error(`nghttpd not found at ${NGHTTPD}; run: bash scripts/install-tools.sh`);
  const dir = mkdtempSync(join(tmpdir(), 'kplane-nghttpd-'));
  writeFileSync(join(dir, 'x'), Buffer.alloc(bytes, 'x'));
  // nghttpd takes a port, not 0: pick a free one by binding it first.
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const child = spawn(NGHTTPD, ['--no-tls', '-a', '127.0.0.1', '-d', dir, String(port)], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/x`;
  for (let i = 0; ; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1', () => (s.destroy(), resolve(true)));
      s.on('error', () => resolve(false));
    });
    if (up) break;
    if (i === 100) throw new Error(`nghttpd did not listen on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
