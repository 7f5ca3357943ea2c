import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FIGURES, figureById, seriesOf } from './figures.js';
import { RESULTS_SCHEMA, withAmount, type BenchResults, type Row } from './results.js';

function run(date: string, commit: string | null, rows: Row[], config: BenchResults['config'] = 'full'): BenchResults {
  return { schema: RESULTS_SCHEMA, date, commit, dirty: false, machine: {}, config, scenarios: [], rows: rows.map(withAmount), goals: [] };
}

const fig = (id: string) => {
  const f = figureById(id);
  assert.ok(f, id);
  return f;
};

describe('figures', () => {
  it('have distinct ids', () => {
    assert.equal(new Set(FIGURES.map((f) => f.id)).size, FIGURES.length);
  });

  it('read a ratio row from its ratio, or from its printed per cent when it has none', () => {
    const a = run('2026-11-28T09:34:00.000Z', 'a3e988c', [
      { scenario: '1-crud', target: 'kplane/bare', op: 'create', concurrency: '64', value: '62%', ratio: 0.625 },
    ]);
    const b = run('2026-11-28T07:45:00.000Z', '52b9b01', [{ scenario: '1-crud', target: 'kplane/bare', op: 'create', concurrency: '64', value: '66%' }]);
    assert.equal(fig('create-c64-ratio').value(a), 62.5);
    assert.equal(fig('create-c64-ratio').value(b), 66);
    assert.equal(fig('create-c16-ratio').value(a), undefined);
  });

  it('read latencies, converting RSS from MiB to MB and times to seconds', () => {
    const r = run('2026-11-28T09:34:00.000Z', 'a3e988c', [
      { scenario: '1b-openloop', target: 'kplane', op: 'create', concurrency: '1000/s', p50: 7.05, p99: 19.8 },
      { scenario: '1b-openloop', target: 'bare-https', op: 'create', concurrency: '1000/s', p99: 10.17 },
      { scenario: '5-rss', target: 'kplane', op: 'RSS, 100000 objects', concurrency: '-', value: '363 MiB' },
      { scenario: '7-nsdelete', target: 'kplane', op: 'delete namespace (10000 cm + 1000 CRs)', concurrency: '-', value: '2.60 s' },
      { scenario: '9-idlecm', target: 'kplane controller-manager', op: 'idle CPU, 100000 objects', concurrency: '-', value: '0.17%' },
    ]);
    assert.equal(fig('openloop-create-p99').value(r), 19.8);
    assert.equal(Math.round(fig('rss-100k').value(r)!), 381);
    assert.equal(fig('nsdelete-s').value(r), 2.6);
    assert.equal(fig('idlecm-cpu').value(r), 0.17);
  });

  it('take the worst custom-resource ratio', () => {
    const r = run('2026-11-28T09:34:00.000Z', null, [
      { scenario: 'cr', target: 'CR/configmap', op: 'create', concurrency: '1', value: '80%' },
      { scenario: 'cr', target: 'CR/configmap', op: 'create', concurrency: '64', value: '69%' },
      { scenario: 'cr', target: 'kplane CR', op: 'create', concurrency: '64', value: '12%' },
    ]);
    assert.equal(fig('cr-worst-ratio').value(r), 69);
  });

  it('give a history oldest first, without quick runs or runs that did not measure the figure', () => {
    const row = (p99: number): Row => ({ scenario: '1b-openloop', target: 'kplane', op: 'get', concurrency: '1000/s', p99 });
    const runs = [
      run('2026-11-28T09:34:00.000Z', 'a3e988c', [row(5.71)]),
      run('2026-11-22T01:00:00.000Z', null, [row(3.1)], 'partial'),
      run('2026-11-28T10:00:00.000Z', 'ffff000', [row(1)], 'quick'),
      run('2026-11-27T20:21:00.000Z', 'unknown', []),
    ];
    const s = seriesOf(fig('openloop-get-p99'), runs);
    assert.deepEqual(
      s.map((p) => [p.date.slice(0, 10), p.commit, p.value]),
      [
        ['2026-11-22', null, 3.1],
        ['2026-11-28', 'a3e988c', 5.71],
      ],
    );
  });
});

describe('plot labels', () => {
  it('keep the zeros of whole numbers and drop those after the point', async () => {
    const { num } = await import('./plot.js');
    assert.deepEqual([100, 250, 25, 2.5, 0.17, 19.8, 0].map(num), ['100', '250', '25', '2.5', '0.17', '19.8', '0']);
  });
});
