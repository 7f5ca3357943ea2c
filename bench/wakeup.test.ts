import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeWakeup, wakeupRoundTrip } from './wakeup.js';

test('wakeupRoundTrip: every message is answered, and the round trip is no shorter than the send', { timeout: 30_000 }, async () => {
  const w = await wakeupRoundTrip(30, 1);
  assert.equal(w.n, 30);
  for (const v of [w.roundTripP50, w.roundTripP99, w.sendP50]) assert.ok(Number.isFinite(v) && v > 0, `not a duration: ${v}`);
  assert.ok(w.roundTripP99 >= w.roundTripP50);
  assert.ok(w.roundTripP50 >= w.sendP50);
  assert.match(describeWakeup(w), /^thread wake-up round trip p50 \d+ µs, p99 \d+ µs \(postMessage itself p50 \d+ µs; 30 messages/);
});
