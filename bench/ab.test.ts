import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  bootstrapMedianCI,
  changeOfRatio,
  judge,
  MIN_PAIRS,
  orderStatisticMedianCI,
  pairRatios,
  parseAbArgs,
  runSlice,
  seededRandom,
  sidesOfPair,
  type PairedValue,
  type Side,
} from './ab.js';
import { UsageError } from './usage.js';

/**
 * Slices of a figure as bench:ab takes them: `pairs` pairs in ABBA order, every pair at a machine
 * speed of its own (drift: ±25 % between pairs, the same for both slices of a pair), the head's true
 * figure `headFactor` × the base's, each slice with its own noise of ±`noise` (uniform).
 */
function synthetic(pairs: number, headFactor: number, noise: number, seed: number, drift = 0.25): PairedValue[] {
  const rnd = seededRandom(seed);
  const out: PairedValue[] = [];
  for (let pair = 0; pair < pairs; pair++) {
    const machine = 1000 * (1 + drift * (2 * rnd() - 1));
    for (const side of sidesOfPair(pair)) out.push({ pair, side, value: machine * (side === 'head' ? headFactor : 1) * (1 + noise * (2 * rnd() - 1)) });
  }
  return out;
}

describe('bench:ab', () => {
  it('runs the sides in ABBA order, pair by pair, shifted for every other figure', () => {
    const order = (figure: number): Side[] => [0, 1, 2, 3].flatMap((p) => [...sidesOfPair(p, figure)]);
    assert.deepEqual(order(0), ['base', 'head', 'head', 'base', 'base', 'head', 'head', 'base']);
    assert.deepEqual(order(1), ['head', 'base', 'base', 'head', 'head', 'base', 'base', 'head']);
    // Every pair has one slice of each side.
    for (let p = 0; p < 8; p++) assert.deepEqual([...sidesOfPair(p, p % 3)].sort(), ['base', 'head']);
  });

  it('pairs each head slice with the base slice of its pair, whatever the order, and drops incomplete pairs', () => {
    const r = pairRatios([
      { pair: 1, side: 'head', value: 90 },
      { pair: 0, side: 'base', value: 100 },
      { pair: 1, side: 'base', value: 100 },
      { pair: 0, side: 'head', value: 110 },
      { pair: 2, side: 'base', value: 100 }, // its head slice is missing
      { pair: 3, side: 'base', value: 0 }, // no ratio to a zero
      { pair: 3, side: 'head', value: 5 },
      { pair: 4, side: 'base', value: 100 },
      { pair: 4, side: 'head', value: NaN }, // a slice without answers has no latency
    ]);
    assert.deepEqual(r, [1.1, 0.9]);
    assert.throws(
      () =>
        pairRatios([
          { pair: 0, side: 'base', value: 1 },
          { pair: 0, side: 'base', value: 2 },
        ]),
      /two base slices/,
    );
  });

  it('reads a head 10 % slower as worse, through a drift of ±25 % between pairs', () => {
    const ratios = pairRatios(synthetic(10, 0.9, 0.02, 7));
    const j = judge(ratios, true, 5);
    assert.equal(j.kind, 'worse', j.text);
    assert.ok(Math.abs(j.changePct + 10) < 2, `median change ${j.changePct}`);
    assert.match(j.text, /^worse by \d+\.\d %$/);
    // The same drift without pairing (medians of each side's slices) would not tell: the sides' own
    // spreads overlap.
    const all = synthetic(10, 0.9, 0.02, 7);
    const side = (s: Side): number[] => all.filter((v) => v.side === s).map((v) => v.value);
    assert.ok(Math.min(...side('base')) < Math.max(...side('head')));
  });

  it('reads equal figures with small noise as within the tolerance', () => {
    const j = judge(pairRatios(synthetic(10, 1, 0.02, 11)), true, 5);
    assert.equal(j.kind, 'within', j.text);
    assert.equal(j.text, 'within 5 %');
    assert.ok(j.worstPct >= -5 && j.bestPct <= 5, `${j.worstPct} … ${j.bestPct}`);
  });

  it('reads huge noise as inconclusive, even with equal figures', () => {
    const j = judge(pairRatios(synthetic(10, 1, 0.4, 3)), true, 5);
    assert.equal(j.kind, 'inconclusive', `${j.text}: ${j.worstPct} … ${j.bestPct}`);
  });

  it('takes latencies and CPU per request as lower-is-better', () => {
    // p99 10 % higher on the head: worse; 10 % lower: within.
    assert.equal(judge(pairRatios(synthetic(10, 1.1, 0.02, 5)), false, 5).kind, 'worse');
    assert.equal(judge(pairRatios(synthetic(10, 0.9, 0.02, 5)), false, 5).kind, 'within');
    assert.ok(Math.abs(changeOfRatio(1.1, false) + 10) < 1e-9);
    assert.ok(Math.abs(changeOfRatio(1.1, true) - 10) < 1e-9);
    // A faster head is no reason for "worse" on ops/s.
    assert.equal(judge(pairRatios(synthetic(10, 1.1, 0.02, 5)), true, 5).kind, 'within');
  });

  it('gives no verdict without pairs, nor from fewer than MIN_PAIRS', () => {
    const j = judge([], true, 5);
    assert.equal(j.kind, 'inconclusive');
    assert.equal(j.pairs, 0);
    // Four pairs all 20 % slower: still no interval to judge by.
    const few = judge([0.8, 0.8, 0.8, 0.8].slice(0, MIN_PAIRS - 1), true, 5);
    assert.equal(few.kind, 'inconclusive');
    assert.match(few.text, /4 pairs/);
    assert.equal(
      judge(
        Array.from({ length: MIN_PAIRS }, () => 0.8),
        true,
        5,
      ).kind,
      'worse',
    );
  });

  it('bootstraps the same interval for the same seed, around the median', () => {
    const xs = pairRatios(synthetic(12, 0.97, 0.05, 9));
    const a = bootstrapMedianCI(xs, { seed: 42 });
    assert.deepEqual(bootstrapMedianCI(xs, { seed: 42 }), a);
    const sorted = [...xs].sort((x, y) => x - y);
    const m = (sorted[5]! + sorted[6]!) / 2;
    assert.ok(a[0] <= m && m <= a[1], `${a[0]} ≤ ${m} ≤ ${a[1]}`);
    assert.ok(a[0] >= sorted[0]! && a[1] <= sorted[11]!);
    // More noise: a wider interval.
    const wide = bootstrapMedianCI(pairRatios(synthetic(12, 0.97, 0.3, 9)), { seed: 42 });
    assert.ok(wide[1] - wide[0] > a[1] - a[0]);
  });

  it("gives the median's distribution-free interval from order statistics", () => {
    const xs = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5];
    const os = orderStatisticMedianCI(xs)!;
    // n = 10: [x(2), x(9)], coverage 1 − 2 × 11/1024.
    assert.deepEqual(os.ci, [2, 9]);
    assert.ok(Math.abs(os.coverage - (1 - 22 / 1024)) < 1e-12);
    assert.deepEqual(orderStatisticMedianCI([1, 2, 3, 4, 5, 6])!.ci, [1, 6]);
    assert.equal(orderStatisticMedianCI([1, 2, 3, 4, 5]), undefined);
  });

  it('counts the answers of the window only: not the warm-up, not the drain', async () => {
    let started = 0;
    const v = await runSlice({
      concurrency: 4,
      warmupMs: 100,
      windowMs: 300,
      serverPid: process.pid,
      request: async () => {
        started++;
        await new Promise((r) => setTimeout(r, 10));
      },
    });
    assert.equal(v.errors, 0);
    assert.ok(v.seconds >= 0.29 && v.seconds < 0.5, `window ${v.seconds} s`);
    // 4 workers × ~one answer per 10+ ms over 0.3 s: at most 120 counted, and fewer than were sent.
    assert.ok(v.ops > 20 && v.ops <= 124, `${v.ops} counted`);
    assert.ok(v.ops < started - 4, `${v.ops} counted of ${started} sent`);
    assert.ok(v.drained <= 4);
    assert.ok(v.p50 >= 9, `p50 ${v.p50}`);
    assert.ok(Number.isFinite(v.cpuMsPerOp) && v.cpuMsPerOp >= 0);
  });

  it('counts failed requests', async () => {
    const v = await runSlice({
      concurrency: 2,
      warmupMs: 0,
      windowMs: 100,
      serverPid: process.pid,
      request: (i) => (i % 2 ? Promise.reject(new Error('HTTP 500')) : new Promise((r) => setTimeout(r, 5))),
    });
    assert.ok(v.errors > 0);
    assert.equal(v.firstError, 'HTTP 500');
  });

  it('answers bad arguments with a usage error naming the flag', () => {
    const bad = (argv: string[], re: RegExp): void =>
      assert.throws(
        () => parseAbArgs(argv),
        (e: unknown) => e instanceof UsageError && re.test(e.message),
      );
    bad([], /--base/);
    bad(['--base', 'x', '--slices', '3'], /--slices must be even/);
    bad(['--base', 'x', '--slices', 'many'], /--slices must be a positive integer/);
    bad(['--base', 'x', '--ops', 'create,delete'], /--ops: unknown op 'delete'/);
    bad(['--base', 'x', '--concurrency', '1,0'], /--concurrency/);
    bad(['--base', 'x', '--slice-ms', '-5'], /--slice-ms/);
    bad(['--base', 'x', '--tolerance', 'abc'], /--tolerance/);
    bad(['--base', 'x', '--json'], /--json needs a value/);
    bad(['--base', 'x', '--rounds', '3'], /unknown argument '--rounds'/);
    const a = parseAbArgs(['--base=deb126d', '--ops', 'update,create', '--concurrency', '16', '--slices', '8', '--slice-ms', '1500']);
    assert.deepEqual(a.ops, ['create', 'update']);
    assert.deepEqual(a.concurrency, [16]);
    assert.equal(a.slices, 8);
    assert.equal(a.sliceMs, 1500);
    assert.equal(a.tolerancePct, 5);
  });
});
