// Storage baseline, in its own process: raw better-sqlite3 writes at kplane's durability (WAL,
// synchronous=FULL, exclusive locking), same tables (log holds each value once, kv points at it; 1 KiB values), no HTTP, no JSON.
// Prints one JSON line per mode: one transaction (one fsync) per write, and group commit of
// `batch` writes per transaction.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const maxMs = Number(args.get('ms') ?? 2000);
const maxOps = Number(args.get('ops') ?? 100_000);
const batches = (args.get('batches') ?? '1,16,64').split(',').map(Number);
const dir = mkdtempSync(join(args.get('dir') ?? tmpdir(), 'kplane-bench-sqlite-'));

try {
  const db = new Database(join(dir, 'raw.db'));
  db.pragma('locking_mode = EXCLUSIVE');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec(`CREATE TABLE kv (key TEXT PRIMARY KEY, create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE log (rev INTEGER PRIMARY KEY, key TEXT NOT NULL, deleted INTEGER NOT NULL, value BLOB NOT NULL, create_rev INTEGER NOT NULL,
  prev_value BLOB, prev_create_rev INTEGER, prev_mod_rev INTEGER);`);
  const insertKv = db.prepare('INSERT INTO kv (key, create_rev, mod_rev) VALUES (?, ?, ?)');
  const insertLog = db.prepare('INSERT INTO log (rev, key, deleted, value, create_rev) VALUES (?, ?, 0, ?, ?)');
  const value = Buffer.alloc(1024, 'x');
  let rev = 0;
  const txn = db.transaction((n: number) => {
    for (let i = 0; i < n; i++) {
      rev++;
      const key = `/registry/configmaps/raw/cm-${rev}`;
      insertKv.run(key, rev, rev);
      insertLog.run(rev, key, value, rev);
    }
  });
  for (const batch of batches) {
    // warm-up
    for (let i = 0; i < 20; i++) txn.immediate(batch);
    const commitMs: number[] = [];
    let ops = 0;
    const t0 = performance.now();
    while (ops < maxOps && performance.now() - t0 < maxMs) {
      const s = performance.now();
      txn.immediate(batch);
      commitMs.push(performance.now() - s);
      ops += batch;
    }
    const seconds = (performance.now() - t0) / 1000;
    commitMs.sort((a, b) => a - b);
    const p = (q: number): number => commitMs[Math.min(commitMs.length - 1, Math.ceil(q * commitMs.length) - 1)] ?? NaN;
    process.stdout.write(JSON.stringify({ batch, ops, seconds, opsPerSec: ops / seconds, commitP50: p(0.5), commitP99: p(0.99) }) + '\n');
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
