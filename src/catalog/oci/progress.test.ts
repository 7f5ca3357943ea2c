import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatBytes, progressPrinter } from './progress.js';

function sink(isTTY: boolean) {
  const out = {
    isTTY,
    text: '',
    write(s: string) {
      out.text += s;
    },
  };
  return out;
}

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;

test('quiet when stderr is not a terminal, unless asked', () => {
  const saved = process.env.KPLANE_PROGRESS;
  delete process.env.KPLANE_PROGRESS;
  try {
    assert.equal(progressPrinter('auto', sink(false)), undefined);
    assert.equal(progressPrinter('none', sink(true)), undefined);
    assert.notEqual(progressPrinter('auto', sink(true)), undefined);
  } finally {
    if (saved !== undefined) process.env.KPLANE_PROGRESS = saved;
  }
});

test('on a terminal: one line per layer with bytes / total, redrawn in place', () => {
  const out = sink(true);
  const p = progressPrinter('tty', out)!;
  p({
    kind: 'resolved',
    ref: 'r.io/a:b',
    digest: D1,
    layers: [
      { digest: D1, size: 2048, cached: true },
      { digest: D2, size: 3 * 1024 * 1024, cached: false },
    ],
  });
  p({ kind: 'layer', digest: D2, size: 3 * 1024 * 1024, bytes: 3 * 1024 * 1024, done: true, cached: false });
  assert.match(out.text, /^Pulling r\.io\/a:b \(sha256:111111111111\): 2 layers, 3\.0 MiB\n/);
  assert.match(out.text, /\x1b\[2Ksha256:111111111111 {2}2\.0 KiB \/ 2\.0 KiB {2}cached\n\x1b\[2Ksha256:222222222222 {2}0 B \/ 3\.0 MiB {2}downloading\n/);
  assert.match(out.text, /\x1b\[2A\x1b\[2Ksha256:111111111111 .*\n\x1b\[2Ksha256:222222222222 {2}3\.0 MiB \/ 3\.0 MiB {2}done\n$/);
});

test('byte units', () => {
  assert.deepEqual([0, 1023, 1024, 1536, 10 * 1024 * 1024, 5 * 1024 ** 3].map(formatBytes), ['0 B', '1023 B', '1.0 KiB', '1.5 KiB', '10 MiB', '5.0 GiB']);
});
