// Table output as upstream's table convertors build it: the wire form of column definitions
// (metav1.TableColumnDefinition's `format` has no omitempty), the default convertor
// (rest.NewDefaultTableConvertor: Name, Created At), duration.HumanDuration, RFC 3339 parsing as
// metav1.Time's, and the printers.go handlers' cells (events, service accounts, leases).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { leaseStrategy } from './coordination/leases/strategy.js';
import { coreEventStrategy } from './core/events/strategy.js';
import { serviceAccountStrategy } from './core/serviceaccounts/strategy.js';
import { eventsV1Strategy } from './events/events/strategy.js';
import type { Strategy } from './strategy.js';
import { ageSince, CREATION_TIMESTAMP_DESCRIPTION, formatTimeCell, humanDuration, NAME_DESCRIPTION, parseTimeMillis, toTable } from './table.js';

const plain: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: () => [],
  validateUpdate: () => [],
};

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number): string => new Date(Date.now() - ms).toISOString();

describe('table', () => {
  it('the default convertor: Name and Created At, the time as RFC 3339 in whole seconds', () => {
    const t = toTable(
      plain,
      [
        { apiVersion: 'v1', kind: 'X', metadata: { name: 'a', creationTimestamp: '2021-03-04T05:06:07Z' } },
        { apiVersion: 'v1', kind: 'X', metadata: { name: 'b' } },
      ],
      {},
    );
    assert.deepEqual(t.columnDefinitions, [
      { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 },
      { name: 'Created At', type: 'date', format: '', description: CREATION_TIMESTAMP_DESCRIPTION, priority: 0 },
    ]);
    assert.deepEqual(
      t.rows.map((r) => r.cells),
      [
        ['a', '2021-03-04T05:06:07Z'],
        ['b', '0001-01-01T00:00:00Z'],
      ],
    );
    assert.equal(formatTimeCell('2021-03-04T05:06:07.123456+02:00'), '2021-03-04T03:06:07Z');
  });

  it('every column definition carries format, "" when the column has none', () => {
    for (const s of [serviceAccountStrategy, leaseStrategy, coreEventStrategy]) {
      const cols = toTable(s, [], {}).columnDefinitions ?? [];
      for (const c of cols) assert.deepEqual(Object.keys(c), ['name', 'type', 'format', 'description', 'priority']);
      assert.equal(cols.find((c) => c.name === 'Name')?.format, 'name');
      assert.ok(cols.filter((c) => c.name !== 'Name').every((c) => c.format === ''));
    }
  });

  it('humanDuration truncates toward zero like int(d.Seconds())', () => {
    assert.equal(humanDuration(-1999), '0s');
    assert.equal(humanDuration(-2000), '<invalid>');
    assert.equal(humanDuration(119_999), '119s');
    assert.equal(humanDuration(3 * 60_000 + 30_000), '3m30s');
    assert.equal(humanDuration(5 * HOUR + 7 * 60_000), '5h7m');
    assert.equal(humanDuration(3 * DAY + 4 * HOUR), '3d4h');
    assert.equal(humanDuration(3 * 365 * DAY + 10 * DAY), '3y10d');
  });

  it('times parse as RFC 3339 only; the zero time is <unknown>', () => {
    assert.equal(parseTimeMillis('2020-01-01'), undefined);
    assert.equal(parseTimeMillis('2020-02-30T00:00:00Z'), undefined);
    assert.equal(parseTimeMillis('2020-01-01T00:00:00'), undefined);
    assert.equal(parseTimeMillis('2020-01-01T01:00:00+01:00'), Date.UTC(2020, 0, 1));
    assert.equal(ageSince('0001-01-01T00:00:00Z'), '<unknown>');
    assert.equal(ageSince(null), '<unknown>');
  });

  it('service accounts count secrets, leases show the holder or ""', () => {
    const sa = toTable(
      serviceAccountStrategy,
      [{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 's', creationTimestamp: ago(10 * DAY) }, secrets: [{ name: 'a' }, { name: 'b' }] }],
      {},
    );
    assert.deepEqual(sa.rows[0]!.cells, ['s', 2, '10d']);
    assert.match(
      sa.columnDefinitions![1]!.description,
      /^Secrets is a list of the secrets in the same namespace .* More info: https:\/\/kubernetes.io\/docs\/concepts\/configuration\/secret$/,
    );
    const lease = toTable(
      leaseStrategy,
      [{ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l', creationTimestamp: ago(5 * HOUR) }, spec: {} }],
      {},
    );
    assert.deepEqual(lease.rows[0]!.cells, ['l', '', '5h']);
  });
});

describe('event table (printEvent, always wide)', () => {
  const cells = (s: Strategy, o: Record<string, unknown>): unknown[] =>
    toTable(s, [{ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' }, ...o }], {}).rows[0]!.cells;

  it('the columns in upstream order and priorities', () => {
    const cols = toTable(coreEventStrategy, [], {}).columnDefinitions!;
    assert.deepEqual(
      cols.map((c) => [c.name, c.priority]),
      [
        ['Last Seen', 0],
        ['Type', 0],
        ['Reason', 0],
        ['Object', 0],
        ['Subobject', 1],
        ['Source', 1],
        ['Message', 0],
        ['First Seen', 1],
        ['Count', 1],
        ['Name', 1],
      ],
    );
    assert.equal(cols[1]!.description, 'Type of this event (Normal, Warning), new types could be added in the future');
    assert.equal(cols[3]!.description, 'The object that this event is about.');
  });

  it('no lastTimestamp: Last Seen is First Seen; no name: the object is the kind; count 0 is 1', () => {
    assert.deepEqual(cells(coreEventStrategy, { involvedObject: { kind: 'Node' }, firstTimestamp: ago(10 * DAY + HOUR), count: 0, message: '  hi \n' }), [
      '10d',
      '',
      '',
      'node',
      '',
      '',
      'hi',
      '10d',
      1,
      'e',
    ]);
  });

  it('a series wins for Last Seen and Count, even unset', () => {
    assert.deepEqual(
      cells(coreEventStrategy, {
        involvedObject: { kind: 'Pod', name: 'p' },
        lastTimestamp: ago(DAY * 20),
        firstTimestamp: ago(DAY * 30),
        count: 7,
        series: { count: 4, lastObservedTime: ago(3 * DAY + 5 * HOUR + 60_000) },
      }).slice(0, 9),
      ['3d5h', '', '', 'pod/p', '', '', '', '30d', 4],
    );
    assert.deepEqual(
      cells(coreEventStrategy, { involvedObject: { kind: 'Pod', name: 'p' }, lastTimestamp: ago(DAY * 20), count: 7, series: {} })[0],
      '<unknown>',
    );
    assert.equal(cells(coreEventStrategy, { involvedObject: {}, series: {} })[8], 0);
  });

  it('source: component or reportingController, then host or reportingInstance after ", "', () => {
    assert.equal(cells(coreEventStrategy, { source: { host: 'n1' } })[5], ', n1');
    assert.equal(cells(coreEventStrategy, { reportingComponent: 'ctl', reportingInstance: 'i1' })[5], 'ctl, i1');
    assert.equal(cells(coreEventStrategy, { source: { component: 'kubelet' }, reportingInstance: 'i1' })[5], 'kubelet, i1');
  });

  it('events.k8s.io/v1: eventTime for both times, regarding as the object', () => {
    assert.deepEqual(
      cells(eventsV1Strategy, {
        regarding: { kind: 'Pod', name: 'p' },
        note: 'n',
        reason: 'R',
        type: 'Normal',
        eventTime: ago(9 * DAY + HOUR),
        reportingController: 'c',
        reportingInstance: 'i',
      }),
      ['9d', 'Normal', 'R', 'pod/p', '', 'c, i', 'n', '9d', 1, 'e'],
    );
  });
});
