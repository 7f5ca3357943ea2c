import { test } from 'node:test';
import assert from 'node:assert/strict';
import { junitXML, runCase, suiteText, type TestSuite } from './report.js';

test('runCase: pass, fail from a throw, warn', async () => {
  assert.equal((await runCase('a', async () => {})).status, 'pass');
  const f = await runCase('b', async () => {
    throw new Error('boom');
  });
  assert.deepEqual([f.status, f.message], ['fail', 'boom']);
  assert.equal((await runCase('c', async () => ({ status: 'warn', message: 'w' }))).status, 'warn');
});

test('junitXML: counts, failures, warnings as system-out, escaping', () => {
  const s: TestSuite = {
    name: 'interoperability',
    timestamp: '2026-01-01T00:00:00.000Z',
    cases: [
      { name: 'ok', status: 'pass', durationMs: 1 },
      { name: 'a <b> & "c"', status: 'fail', message: 'line1 <x>\nline2', durationMs: 2 },
      { name: 'cand', status: 'warn', message: 'candidate only', durationMs: 0 },
      { name: 'cand2', status: 'warn', message: 'warning: already marked', durationMs: 0 },
      { name: 'sk', status: 'skip', message: 'no platform', durationMs: 0 },
    ],
  };
  const x = junitXML([s]);
  assert.match(
    x,
    /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="kplane catalog test" tests="5" failures="1" errors="0" skipped="1" time="0.003">/,
  );
  assert.match(x, /<testsuite name="interoperability" tests="5" failures="1" errors="0" skipped="1" time="0.003" timestamp="2026-01-01T00:00:00.000Z">/);
  assert.match(
    x,
    /<testcase classname="interoperability" name="a &lt;b&gt; &amp; &quot;c&quot;" time="0.002">\n {6}<failure message="line1 &lt;x&gt;" type="failure">line1 &lt;x&gt;\nline2<\/failure>/,
  );
  assert.match(x, /<system-out>warning: candidate only<\/system-out>/);
  assert.match(x, /<system-out>warning: already marked<\/system-out>/);
  assert.match(x, /<skipped message="no platform"\/>/);
  assert.match(x, /<property name="warnings" value="2"\/>/);
  const t = suiteText(s);
  assert.match(t, /^interoperability: 1 passed, 1 failed, 2 warnings, 1 skipped/);
  assert.match(t, /\n {2}FAIL {2}a <b> & "c"\n {8}line1 <x>\n {8}line2\n/);
});
