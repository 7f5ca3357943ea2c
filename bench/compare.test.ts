import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import { ServerPinner, figuresOf, isHarnessProcess, serverCpuMsPerOp, withWindowVariables } from './compare.js';
import type { Row } from './results.js';

const round = (extra: Partial<Row>): Row => ({ scenario: '1-crud', target: 'kplane', op: 'create', concurrency: '64', opsPerSec: 2000, n: 12_000, ...extra });

describe('bench:compare', () => {
  it("gives the server's CPU per request from the round's CPU time, or from a base's printed share of a core", () => {
    assert.equal(serverCpuMsPerOp(round({ serverCpuMs: 6000, note: 'server 99%, loadgen 80%' })), 0.5);
    // deb126d prints only "server N%" of one core over the window: 90 % at 2,000 ops/s is 0.45 ms per request.
    assert.equal(serverCpuMsPerOp(round({ note: 'server 90%, loadgen 80%' })), 0.45);
    assert.equal(serverCpuMsPerOp(round({ note: '100 items/response; server 90%, loadgen 80%' })), 0.45);
    assert.equal(serverCpuMsPerOp(round({ note: 'no kplane' })), undefined);
    const f = figuresOf(round({ serverCpuMs: 6000 })).find((x) => x.label === 'create c=64 server CPU ms/op');
    assert.ok(f, 'a figure of its own');
    assert.equal(f.higherIsBetter, false);
  });

  it("writes the window variables into an older harness's FULL configuration, and leaves a newer one alone", () => {
    // deb126d's bench/run.ts, as far as it matters.
    const old =
      'const FULL: Config = {\n  concurrency: [1, 16, 64],\n  warmMs: 1000,\n  measureMs: 3000,\n  maxOps: 50_000,\n};\nconst QUICK: Config = {\n  warmMs: 200,\n  measureMs: 600,\n};\n';
    const patched = withWindowVariables(old);
    assert.ok(patched);
    assert.match(
      patched,
      /warmMs: Number\(process\.env\.KPLANE_BENCH_WARM_MS \?\? 1000\),\n {2}measureMs: Number\(process\.env\.KPLANE_BENCH_MEASURE_MS \?\? 3000\),/,
    );
    assert.match(patched, /warmMs: 200,\n {2}measureMs: 600,/, 'the quick configuration keeps its own');
    assert.equal(withWindowVariables(patched), patched);
    assert.equal(withWindowVariables('export const x = 1;\n'), undefined);
  });

  it('tells the harness from the servers it starts', () => {
    assert.equal(isHarnessProcess(['npm', 'run', 'bench']), true);
    assert.equal(isHarnessProcess(['sh', '-c', 'node --import tsx bench/run.ts']), true);
    assert.equal(isHarnessProcess(['/usr/bin/node', '--import', 'tsx', '/work/x/bench/run.ts', '--only', 'create']), true);
    assert.equal(isHarnessProcess(['/work/x/.tools/bin/h2load', '-c', '1']), true);
    assert.equal(isHarnessProcess(['/usr/bin/node', '--import', 'tsx', '--expose-gc', '/work/x/bench/server.ts']), false);
    assert.equal(isHarnessProcess(['/work/x/.tools/bin/etcd', '--data-dir', '/tmp/e']), false);
  });

  it('--pin: puts every thread of a server under the harness on CPU 0', { skip: availableParallelism() < 2 ? 'needs 2 CPUs' : false }, async () => {
    // A "harness" (npm's shell and the shell under it, on CPU 1 as taskset starts them) with one "server" under it (sleep).
    const harness = spawn('taskset', ['-c', '1', 'sh', '-c', `sh -c 'sleep 30 & echo $$ $!; wait'`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let serverPid = 0;
    try {
      const [innerShell, server] = await new Promise<number[]>((ok) =>
        harness.stdout.once('data', (b: Buffer) => ok(b.toString().trim().split(' ').map(Number))),
      );
      serverPid = server!;
      const cpus = (pid: number): string => /Cpus_allowed_list:\s*(\S+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
      assert.equal(cpus(serverPid), '1', 'inherited from the harness');
      const pinner = new ServerPinner(harness.pid!);
      try {
        // Until pinned; the bound only keeps a broken pinner from hanging the test.
        for (const until = Date.now() + 10_000; cpus(serverPid) !== '0' && Date.now() < until; ) await new Promise((r) => setTimeout(r, 20));
      } finally {
        pinner.stop();
      }
      assert.equal(cpus(serverPid), '0');
      assert.equal(pinner.failure, undefined);
      assert.equal(cpus(innerShell!), '1', 'the harness stays where it was');
    } finally {
      if (serverPid) process.kill(serverPid);
      harness.kill();
    }
  });
});
