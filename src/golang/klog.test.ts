import assert from 'node:assert/strict';
import { test } from 'node:test';
import { asLogger, checkLoggingFlags, createKlog, isLogger } from './klog.js';

// 2026-12-05 15:04:05.123456 local time.
const at = new Date(2026, 11, 5, 15, 4, 5, 123).getTime() + 0.456;

function capture(opts: { verbosity?: number; format?: 'text' | 'json' }): { lines: string[]; log: ReturnType<typeof createKlog> } {
  const lines: string[] = [];
  return { lines, log: createKlog({ ...opts, write: (l) => lines.push(l), nowMs: () => at, pid: 12345 }) };
}

test('text: klog header, quoted message, key=value pairs; errors with E and err=', () => {
  const { lines, log } = capture({});
  log.withName('garbagecollector').info('Deleting item', 'item', '[v1/ConfigMap, namespace: a, name: b, uid: c]', 'count', 3, 'ok', true);
  log.error(new Error('connection refused'), 'Failed to list', 'resource', 'configmaps');
  log('plain "message"');
  assert.deepEqual(lines, [
    'I1205 15:04:05.123456   12345 garbagecollector] "Deleting item" item="[v1/ConfigMap, namespace: a, name: b, uid: c]" count=3 ok=true\n',
    'E1205 15:04:05.123456   12345 kplane] "Failed to list" err="connection refused" resource="configmaps"\n',
    'I1205 15:04:05.123456   12345 kplane] "plain \\"message\\""\n',
  ]);
});

test('verbosity: V(n) lines only from -v=n; errors always', () => {
  const quiet = capture({ verbosity: 0 });
  quiet.log.v(2).info('per object');
  quiet.log.v(2).error('boom', 'failed');
  assert.equal(quiet.log.v(2).enabled(), false);
  assert.equal(quiet.lines.length, 1);
  assert.match(quiet.lines[0]!, /^E.* "failed" err="boom"\n$/);
  const loud = capture({ verbosity: 2 });
  loud.log.v(2).info('per object');
  loud.log.v(5).info('more');
  assert.deepEqual(loud.lines.length, 1);
});

test('json: component-base shape, "v" on info lines, "err" on errors', () => {
  const { lines, log } = capture({ format: 'json', verbosity: 4 });
  log
    .withName('gc')
    .withValues('controller', 'gc')
    .v(4)
    .info('Stopping', 'resource', 'v1/configmaps', 'big', 2n ** 63n, 'odd');
  log.error(new Error('x'), 'Failed', 'n', 1);
  assert.deepEqual(
    lines.map((l) => JSON.parse(l) as unknown),
    [
      { ts: at, logger: 'gc', msg: 'Stopping', v: 4, controller: 'gc', resource: 'v1/configmaps', big: '9223372036854775808', odd: '(MISSING)' },
      { ts: at, msg: 'Failed', err: 'x', n: 1 },
    ],
  );
});

test('a plain function as the log: the structured part, V(0) only', () => {
  const got: string[] = [];
  const log = asLogger((m) => got.push(m));
  assert.equal(
    isLogger((m: string) => got.push(m)),
    false,
  );
  log.info('Starting workers', 'controller', 'namespace', 'workerCount', 1);
  log.v(2).info('Deleting item');
  log.error(new Error('e'), 'Failed');
  assert.deepEqual(got, ['"Starting workers" controller="namespace" workerCount=1', '"Failed" err="e"']);
  const k = createKlog({ write: () => {} });
  assert.equal(asLogger(k), k);
});

test('flags: --logging-format and -v as component-base checks them', () => {
  assert.deepEqual(checkLoggingFlags('json', '2'), { format: 'json', verbosity: 2 });
  assert.deepEqual(checkLoggingFlags('text', '-1'), { format: 'text', verbosity: 0 });
  assert.deepEqual(checkLoggingFlags('xml', '0'), {
    error: 'invalid argument "xml" for "--logging-format" flag: Unsupported log format; permitted formats: "json", "text"',
  });
  assert.deepEqual(checkLoggingFlags('text', 'two'), { error: 'invalid argument "two" for "-v, --v" flag: strconv.ParseInt: parsing "two": invalid syntax' });
});

test('a value JSON cannot hold still gives a line', () => {
  const { lines, log } = capture({ format: 'json' });
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  log.info('cycle', 'value', cyclic);
  assert.match((JSON.parse(lines[0]!) as { value: string }).value, /a: 1/);
  const text = capture({});
  text.log.info('cycle', 'value', cyclic);
  assert.match(text.lines[0]!, /"cycle" value="<ref \*1> \{ a: 1, self: \[Circular \*1\] \}"\n$/);
});

test('an error line without an error (klog.ErrorS(nil, …)) has no err key', () => {
  const text = capture({});
  text.log.error(undefined, 'Cache consistency check failed', 'resource', 'configmaps');
  assert.deepEqual(text.lines, ['E1205 15:04:05.123456   12345 kplane] "Cache consistency check failed" resource="configmaps"\n']);
  const json = capture({ format: 'json' });
  json.log.error(null, 'Cache consistency check failed', 'resource', 'configmaps');
  assert.deepEqual(JSON.parse(json.lines[0]!), { ts: at, msg: 'Cache consistency check failed', resource: 'configmaps' });
});
