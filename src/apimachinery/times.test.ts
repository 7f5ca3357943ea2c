import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Definitions } from './schema.js';
import { refTo } from './schema.js';
import { normalizeTimes, rfc3339 } from './times.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const defs: Definitions = {
  [`${META}Time`]: { type: 'string', format: 'date-time' },
  [`${META}MicroTime`]: { type: 'string', format: 'date-time' },
  Spec: {
    type: 'object',
    properties: {
      renewTime: { ...refTo(`${META}MicroTime`), description: 'x' },
      firstTimestamp: refTo(`${META}Time`),
      times: { type: 'array', items: refTo(`${META}Time`) },
      name: { type: 'string' },
      nested: { type: 'object', additionalProperties: refTo(`${META}MicroTime`) },
    },
  },
};

function norm(v: Record<string, unknown>): Record<string, unknown> {
  normalizeTimes(v, refTo('Spec'), defs);
  return v;
}

test('MicroTime gets six fractional digits in UTC (Date.toISOString() input included)', () => {
  assert.deepEqual(norm({ renewTime: '2025-01-02T03:04:05.123Z' }), { renewTime: '2025-01-02T03:04:05.123000Z' });
  assert.deepEqual(norm({ renewTime: '2025-01-02T03:04:05Z' }), { renewTime: '2025-01-02T03:04:05.000000Z' });
  assert.deepEqual(norm({ renewTime: '2025-01-02T03:04:05.123456789Z' }), { renewTime: '2025-01-02T03:04:05.123456Z' });
  assert.deepEqual(norm({ renewTime: '2025-01-02T04:04:05.5+01:00' }), { renewTime: '2025-01-02T03:04:05.500000Z' });
  assert.deepEqual(norm({ nested: { a: '2025-01-02T03:04:05.1Z' } }), { nested: { a: '2025-01-02T03:04:05.100000Z' } });
});

test('Time is truncated to whole seconds in UTC, as Go marshals metav1.Time', () => {
  assert.deepEqual(norm({ firstTimestamp: '2025-01-02T03:04:05.999Z' }), { firstTimestamp: '2025-01-02T03:04:05Z' });
  assert.deepEqual(norm({ firstTimestamp: '2025-01-02T05:04:05+02:00' }), { firstTimestamp: '2025-01-02T03:04:05Z' });
  assert.deepEqual(norm({ times: ['2025-01-02T03:04:05.1Z'] }), { times: ['2025-01-02T03:04:05Z'] });
});

test('non-time fields and nulls are left alone', () => {
  assert.deepEqual(norm({ name: '2025-01-02T03:04:05.123Z', renewTime: null }), { name: '2025-01-02T03:04:05.123Z', renewTime: null });
});

test("a time that does not parse is a 400, as in kube's decoder", () => {
  assert.throws(
    () => norm({ firstTimestamp: 'yesterday' }),
    (e: unknown) => {
      const err = e as { code?: number; message?: string };
      assert.equal(err.code, 400);
      assert.match(err.message ?? '', /^parsing time "yesterday" as "2006-01-02T15:04:05Z07:00"/);
      return true;
    },
  );
  assert.throws(() => norm({ times: ['2025-01-02T03:04:05Z', 'junk'] }), /parsing time "junk"/);
});

test("a time that does not parse: time.Parse's own error, the element or range it failed on", () => {
  const err = (v: string): string => {
    try {
      norm({ firstTimestamp: v });
    } catch (e) {
      return (e as Error).message;
    }
    return 'no error';
  };
  assert.equal(err('2025-01-02 03:04:05Z'), 'parsing time "2025-01-02 03:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 03:04:05Z" as "T"');
  assert.equal(err('2025-13-02T03:04:05Z'), 'parsing time "2025-13-02T03:04:05Z": month out of range');
  assert.equal(err('ü'), 'parsing time "\\xc3\\xbc" as "2006-01-02T15:04:05Z07:00": cannot parse "\\xc3\\xbc" as "2006"');
});

test('rfc3339: second precision, UTC, the right text after the second changes', () => {
  assert.equal(rfc3339(new Date('2026-11-22T06:59:59.999Z')), '2026-11-22T06:59:59Z');
  assert.equal(rfc3339(new Date('2026-11-22T06:59:59.001Z')), '2026-11-22T06:59:59Z', 'the same second, kept text');
  assert.equal(rfc3339(new Date('2026-11-22T07:00:00.000Z')), '2026-11-22T07:00:00Z');
  assert.equal(rfc3339(new Date('2026-11-22T06:59:59.500Z')), '2026-11-22T06:59:59Z', 'an earlier second again');
  assert.equal(rfc3339(new Date(-1500)), '1969-12-31T23:59:58Z', 'before the epoch: the second it falls in');
  assert.throws(() => rfc3339(new Date(Number.NaN)), RangeError);
});
