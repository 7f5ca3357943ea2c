import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import { AbortLinks } from './abort-links.js';

test('AbortLinks: one listener on the signal however many links, all fired on abort', () => {
  const links = new AbortLinks();
  const ctrl = new AbortController();
  const fired: number[] = [];
  const releases = Array.from({ length: 20 }, (_, i) => links.link(ctrl.signal, () => fired.push(i)));
  assert.equal(getEventListeners(ctrl.signal, 'abort').length, 1);
  releases[3]!();
  ctrl.abort();
  assert.deepEqual(
    fired,
    [...Array(20).keys()].filter((i) => i !== 3),
  );
  for (const r of releases) r(); // releasing after the abort is harmless
  assert.equal(getEventListeners(ctrl.signal, 'abort').length, 0);
});

test('AbortLinks: the listener goes with the last release, and a later link adds it again', () => {
  const links = new AbortLinks();
  const ctrl = new AbortController();
  const a = links.link(ctrl.signal, () => assert.fail('released'));
  const b = links.link(ctrl.signal, () => assert.fail('released'));
  a();
  assert.equal(getEventListeners(ctrl.signal, 'abort').length, 1);
  b();
  b();
  assert.equal(getEventListeners(ctrl.signal, 'abort').length, 0);
  let fired = 0;
  links.link(ctrl.signal, () => fired++);
  ctrl.abort();
  assert.equal(fired, 1);
});
