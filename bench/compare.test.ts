import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { describe, it } from 'node:test';
import {
  ServerPinner,
  collectSlot,
  compareRounds,
  figuresOf,
  isHarnessProcess,
  serverCpuMsPerOp,
  sidesInOrder,
  slotFigures,
  verdictOf,
  withWindowVariables,
  type FigureRounds,
} from './compare.js';
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

  it('runs the sides in ABBA order, round after round, each group starting where the last left off', () => {
    const slots = (group: number): string => [0, 1, 2, 3].map((r) => sidesInOrder(r, group).join(' ')).join(' | ');
    assert.equal(slots(0), 'base head | head base | base head | head base');
    assert.equal(slots(1), 'head base | base head | head base | base head');
  });

  it("takes each kplane figure ÷ the same figure of its own slot's bare baseline", () => {
    const bare = (extra: Partial<Row>): Row => round({ target: 'bare-https', ...extra });
    const figures = slotFigures([
      round({ opsPerSec: 2000, p99: 30 }),
      bare({ opsPerSec: 4000, p99: 10 }),
      round({ op: 'update', opsPerSec: 1500 }),
      bare({ op: 'update', concurrency: '16', opsPerSec: 3000 }),
      { scenario: '1-crud', target: 'kplane/bare', op: 'create', concurrency: '64', value: '50%' },
    ]);
    const get = (target: string, label: string) => figures.find((f) => f.target === target && f.label === label);
    assert.equal(get('kplane', 'create c=64 ops/s')?.vsBare, 0.5);
    assert.equal(get('kplane', 'create c=64 p99 ms')?.vsBare, 3);
    assert.equal(get('kplane', 'create c=64 p99 ms')?.higherIsBetter, false, 'a ratio keeps the figure’s direction');
    assert.equal(get('kplane', 'update c=64 ops/s')?.vsBare, undefined, 'no baseline at that concurrency');
    assert.equal(get('bare-https', 'create c=64 ops/s')?.vsBare, undefined);
    assert.equal(get('kplane/bare', 'create c=64 %')?.vsBare, undefined);
  });

  it('gives a verdict from the rounds’ changes: within, worse beyond spread, or inconclusive', () => {
    assert.equal(verdictOf([-1, 2, -3], 5).text, 'within 5 %');
    assert.equal(verdictOf([-4.9], 5).kind, 'within');
    const worse = verdictOf([-8, -7, -9], 5);
    assert.equal(worse.text, 'worse by 8.0 % beyond spread');
    assert.deepEqual([worse.changePct, worse.minPct, worse.maxPct], [-8, -9, -7]);
    assert.equal(verdictOf([-6], 5).kind, 'worse', 'one round: no spread to hide behind');
    assert.equal(verdictOf([-7, -2, -6], 5).kind, 'inconclusive', 'a median beyond the tolerance is not enough: one round was within');
    assert.equal(verdictOf([-10, 4], 5).text, 'inconclusive: spread 14.0 % > tolerance');
    assert.equal(verdictOf([-6, 10, 1], 5).kind, 'inconclusive', 'one bad round of three is not "within"');
    assert.equal(verdictOf([-6, -3], 5).text, 'inconclusive: rounds \u22126.0 % \u2026 \u22123.0 % on both sides of \u22125 %');
    assert.equal(verdictOf([-6, -3], 10).kind, 'within', 'the tolerance is a parameter');
  });

  it("compares each round's head with the same round's base, and judges on the ratio to the slot's bare baseline", () => {
    const slot = (kplane: number, bare: number): Row[] => [round({ opsPerSec: kplane }), round({ target: 'bare-https', opsPerSec: bare })];
    const base = new Map<string, FigureRounds>();
    const head = new Map<string, FigureRounds>();
    // The machine is 20 % slower in round 2, for both sides and their baselines; head is 1 % slower than base.
    collectSlot(base, 0, slot(1000, 2000));
    collectSlot(head, 0, slot(990, 2000));
    collectSlot(head, 1, slot(792, 1600));
    collectSlot(base, 1, slot(800, 1600));
    const [f] = compareRounds(base, head, 5).filter((x) => x.figure === 'kplane create c=64 ops/s');
    assert.ok(f);
    assert.deepEqual(
      f.raw.roundChangesPct.map((x) => +x.toFixed(2)),
      [-1, -1],
      "round by round: not round 2's head against round 1's base",
    );
    assert.equal(f.raw.verdict.kind, 'within');
    assert.equal(f.vsBare?.before, 0.5);

    // The drift hits only head's slot of round 2 (and its baseline): raw says worse, the ratio to the bare baseline does not.
    const base2 = new Map<string, FigureRounds>();
    const head2 = new Map<string, FigureRounds>();
    collectSlot(base2, 0, slot(1000, 2000));
    collectSlot(head2, 0, slot(1000, 2000));
    collectSlot(head2, 1, slot(700, 1400));
    collectSlot(base2, 1, slot(1000, 2000));
    const [g] = compareRounds(base2, head2, 5).filter((x) => x.figure === 'kplane create c=64 ops/s');
    assert.ok(g?.vsBare);
    assert.equal(g.raw.verdict.kind, 'inconclusive');
    assert.deepEqual(g.vsBare.roundChangesPct, [0, 0]);
    assert.equal(g.verdict.text, 'within 5 %', 'the verdict is the one on the ratio');
    // A latency is judged on itself: the bare server's p99 swinging by half must not make kplane's "worse".
    const p99 = (kplane: number, bare: number): Row[] => [round({ p99: kplane }), round({ target: 'bare-https', p99: bare })];
    const base3 = new Map<string, FigureRounds>();
    const head3 = new Map<string, FigureRounds>();
    collectSlot(base3, 0, p99(10, 3));
    collectSlot(head3, 0, p99(10, 2));
    collectSlot(head3, 1, p99(10, 2));
    collectSlot(base3, 1, p99(10, 3));
    const [h] = compareRounds(base3, head3, 5).filter((x) => x.figure === 'kplane create c=64 p99 ms');
    assert.ok(h?.vsBare, 'p99 has a ratio to the bare baseline');
    assert.equal(h.vsBare.verdict.kind, 'worse');
    assert.equal(h.verdict.kind, 'within', 'the verdict on a latency is the raw one');
    const [bareFigure] = compareRounds(base2, head2, 5).filter((x) => x.figure === 'bare-https create c=64 ops/s');
    assert.equal(bareFigure?.baseline, true);
  });
});
