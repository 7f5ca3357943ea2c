// The audit log's rotation as lumberjack's: backup names, the size bound, MaxBackups and MaxAge.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatBackupTime, RotatingFile } from './rotating-file.js';

const MB = 1024 * 1024;

test('rotates before a write would pass maxSize; keeps maxBackups newest; drops backups past maxAge', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kplane-rotate-'));
  try {
    let now = Date.UTC(2026, 11, 5, 18, 0, 0, 7);
    // An old backup, 10 days old by its name, and a file that is not a backup.
    writeFileSync(join(dir, `audit-${formatBackupTime(new Date(now - 10 * 86400_000))}.log`), 'old\n');
    writeFileSync(join(dir, 'other.txt'), 'x');
    const f = new RotatingFile({ filename: join(dir, 'audit.log'), maxSizeMB: 1, maxBackups: 2, maxAgeDays: 7, now: () => new Date(now) });
    const chunk = 'x'.repeat(MB / 2 - 1) + '\n';
    for (let i = 0; i < 7; i++) {
      f.write(chunk);
      now += 1000;
    }
    await f.settled();
    f.close();
    const names = readdirSync(dir).sort();
    // Files fill at two chunks: rotations at 2, 4 and 6 s; the two newest backups stay.
    assert.deepEqual(names, ['audit-2026-12-05T18-00-04.007.log', 'audit-2026-12-05T18-00-06.007.log', 'audit.log', 'other.txt']);
    for (const n of names.filter((x) => x.startsWith('audit'))) assert.ok(readFileSync(join(dir, n)).length <= MB);
    assert.equal(readFileSync(join(dir, 'audit.log')).length, MB / 2, 'the last chunk opened a new file');
    assert.throws(() => f.write('y'.repeat(MB + 1)), { message: `write length ${MB + 1} exceeds maximum file size ${MB}` });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an existing file is appended to, and rotated at start when the next write does not fit', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kplane-rotate-'));
  try {
    writeFileSync(join(dir, 'a.log'), 'first\n');
    const f = new RotatingFile({ filename: join(dir, 'a.log'), maxSizeMB: 1, now: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600)) });
    f.write('second\n');
    f.close();
    assert.equal(readFileSync(join(dir, 'a.log'), 'utf8'), 'first\nsecond\n');
    writeFileSync(join(dir, 'a.log'), 'z'.repeat(MB - 2));
    const g = new RotatingFile({ filename: join(dir, 'a.log'), maxSizeMB: 1, now: () => new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600)) });
    g.write('abc\n');
    g.close();
    assert.deepEqual(readdirSync(dir).sort(), ['a-2026-01-02T03-04-05.600.log', 'a.log']);
    assert.equal(readFileSync(join(dir, 'a.log'), 'utf8'), 'abc\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
