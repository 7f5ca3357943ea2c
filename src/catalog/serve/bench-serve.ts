// Serve benchmark (the issue's goal: a 300 × 100 = 30,000-bundle catalog; GetBundleForChannel p99
// within 2 ms at 2,000 requests/s; load within 5 s and 1.5 GB). Standalone:
//   node --import tsx src/catalog/serve/bench-serve.ts [--packages 300] [--bundles 100] [--rate 2000] [--seconds 10] [--log-calls=false]
// Generates the catalog into a temp dir, starts `kplane catalog serve` as its own process, measures the
// time to "serving registry" and the server's peak RSS, then sends GetBundleForChannel open-loop (at the
// offered rate, whatever the answers' latency) from a grpc-js client and prints the latency percentiles,
// beside the same load against a bare grpc-js server answering one canned bundle (the baseline).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { getEncoders, loadPackageDefinition } from '../api/api.js';
import { writeBenchCatalog } from './bench-catalog.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
const { values } = parseArgs({
  args: isMain ? process.argv.slice(2) : [],
  options: {
    packages: { type: 'string', default: '300' },
    bundles: { type: 'string', default: '100' },
    rate: { type: 'string', default: '2000' },
    seconds: { type: 'string', default: '10' },
    'log-calls': { type: 'string', default: 'true' },
    'bare-server': { type: 'boolean', default: false },
  },
});
const PACKAGES = Number(values.packages);
const BUNDLES = Number(values.bundles);
const RATE = Number(values.rate);
const SECONDS = Number(values.seconds);
const LOG_CALLS = values['log-calls'] !== 'false';

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Open-loop load: a request every 1/rate s regardless of answers; latency measured per request. */
export async function load(port: number, rate: number, seconds: number, pick: (i: number) => { pkgName: string; channelName: string }) {
  const def = loadPackageDefinition();
  const Registry = grpc.makeGenericClientConstructor(def['api.Registry'] as grpc.ServiceDefinition, 'Registry');
  const client = new Registry(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as {
    GetBundleForChannel(req: object, cb: (err: Error | null) => void): void;
    close(): void;
  };
  // warm-up
  await Promise.all(Array.from({ length: 200 }, (_, i) => new Promise<void>((r) => client.GetBundleForChannel(pick(i), () => r()))));
  const total = rate * seconds;
  const lat: number[] = [];
  let errors = 0;
  const start = performance.now();
  await new Promise<void>((resolve) => {
    let sent = 0;
    let done = 0;
    const tick = (): void => {
      const due = Math.min(total, Math.floor(((performance.now() - start) / 1000) * rate));
      while (sent < due) {
        const t0 = performance.now();
        client.GetBundleForChannel(pick(sent), (err) => {
          if (err) errors++;
          lat.push(performance.now() - t0);
          if (++done === total) resolve();
        });
        sent++;
      }
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const elapsed = (performance.now() - start) / 1000;
  client.close();
  lat.sort((a, b) => a - b);
  return { rps: total / elapsed, p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), max: lat[lat.length - 1]!, errors };
}

/** CPU seconds (user + system) the process has used so far. */
function cpuOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return 0;
  }
}

function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kplane-serve-bench-'));
  try {
    writeBenchCatalog(dir, PACKAGES, BUNDLES);
    console.log(`machine: ${process.platform} ${process.arch}, node ${process.version}; catalog: ${PACKAGES} packages × ${BUNDLES} bundles = ${PACKAGES * BUNDLES}`);

    const t0 = performance.now();
    const proc = spawn(process.execPath, [join(root, 'bin/kplane.js'), 'catalog', 'serve', dir, '--port', '0', ...(LOG_CALLS ? [] : ['--log-calls=false'])], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    // start-up output, kept for the error message; each chunk's complete lines are scanned once
    let err = '';
    let partialLine = '';
    let started = false;
    let logBytes = 0;
    const port = await new Promise<number>((resolve, reject) => {
      proc.stderr!.on('data', (d: Buffer) => {
        logBytes += d.length;
        if (started) return; // past start-up: the call logs are only drained
        const text = d.toString();
        err += text;
        const lines = (partialLine + text).split('\n');
        partialLine = lines.pop()!;
        for (const line of lines) {
          const m = /msg="serving registry".* port=(\d+)/.exec(line);
          if (m) {
            started = true;
            resolve(Number(m[1]));
            return;
          }
        }
      });
      proc.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
    });
    const startup = (performance.now() - t0) / 1000;
    console.log(`serve: load + validate + index to "serving registry": ${startup.toFixed(2)} s (goal ≤ 5 s), peak RSS ${(rssOf(proc.pid!) / 2 ** 20).toFixed(0)} MiB (goal ≤ 1536)`);

    const pick = (i: number) => {
      const p = (i * 7919) % PACKAGES;
      return { pkgName: `operator-${String(p).padStart(3, '0')}`, channelName: i % 2 ? 'stable' : 'fast' };
    };
    const cpu0 = cpuOf(proc.pid!);
    const r = await load(port, RATE, SECONDS, pick);
    const cpuPerCall = ((cpuOf(proc.pid!) - cpu0) / (RATE * SECONDS + 200)) * 1e6;
    console.log(
      `kplane GetBundleForChannel at ${RATE}/s offered: ${r.rps.toFixed(0)}/s achieved, p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms (goal ≤ 2 ms), max ${r.max.toFixed(1)} ms, errors ${r.errors}; peak RSS ${(rssOf(proc.pid!) / 2 ** 20).toFixed(0)} MiB; call logs ${LOG_CALLS ? `on (${(logBytes / 2 ** 20).toFixed(1)} MiB)` : 'off'}; server CPU ${cpuPerCall.toFixed(0)} µs per call (${((cpuPerCall * RATE) / 1e4).toFixed(0)}% of a core at ${RATE}/s)`,
    );
    proc.kill('SIGTERM');

    // baseline: bare grpc-js in its own process, answering one canned, pre-encoded bundle
    const bare = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--bare-server'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const barePort = await new Promise<number>((resolve, reject) => {
      bare.stdout!.once('data', (d: Buffer) => resolve(Number(d.toString().trim())));
      bare.on('exit', (code) => reject(new Error(`bare server exited ${code}`)));
    });
    const bareCpu0 = cpuOf(bare.pid!);
    const b = await load(barePort, RATE, SECONDS, pick);
    const bareCpuPerCall = ((cpuOf(bare.pid!) - bareCpu0) / (RATE * SECONDS + 200)) * 1e6;
    bare.kill('SIGTERM');
    console.log(
      `bare grpc-js server at ${RATE}/s: p50 ${b.p50.toFixed(2)} ms, p99 ${b.p99.toFixed(2)} ms, server CPU ${bareCpuPerCall.toFixed(0)} µs per call; ` +
        `kplane/bare: p99 ${(r.p99 / b.p99).toFixed(2)}x, CPU per call ${(cpuPerCall / bareCpuPerCall).toFixed(2)}x`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The baseline server: grpc-js with no logic, answering GetBundleForChannel with one pre-encoded bundle. */
export async function startBareServer(): Promise<{ port: number; stop(): void }> {
  const canned = getEncoders().bundle({
    csvName: 'x', packageName: 'x', channelName: 'x', csvJson: 'x'.repeat(2000), object: [], bundlePath: 'x', providedApis: [], requiredApis: [],
    version: '1.0.0', skipRange: '', dependencies: [], properties: [], replaces: '', skips: [],
  });
  const svc = loadPackageDefinition()['api.Registry'] as grpc.ServiceDefinition;
  const raw = Object.fromEntries(Object.entries(svc).map(([k, m]) => [k, { ...m, responseSerialize: (v: Buffer) => v }]));
  const server = new grpc.Server();
  server.addService(raw as grpc.ServiceDefinition, { GetBundleForChannel: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, canned) });
  const port = await new Promise<number>((res, rej) => server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
  return { port, stop: () => server.forceShutdown() };
}

/** --bare-server: the baseline in a process of its own, printing its port. */
async function bareServer(): Promise<void> {
  const { port, stop } = await startBareServer();
  process.stdout.write(`${port}\n`);
  process.on('SIGTERM', stop);
}

if (isMain) await (values['bare-server'] ? bareServer() : main());
