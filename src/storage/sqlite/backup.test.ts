// Backup and restore at the storage level: what SqliteStorage serves after a restore (the CLI and
// real clients are in test/e2e/backup-restore.test.ts).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { ExpiredError } from '../storage.js';
import { BackupError, backupDatabase, inspectDatabase, restoreDatabase } from './backup.js';
import { openSqliteStorage } from './sqlite-storage.js';

describe('sqlite backup and restore', () => {
  const dirs: string[] = [];
  const tmp = async (): Promise<string> => {
    const d = await mkdtemp(join(tmpdir(), 'kplane-backup-unit-'));
    dirs.push(d);
    return d;
  };
  after(async () => {
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('restores with the revision bumped and marked compacted: old revisions are Expired, objects keep theirs', async () => {
    const work = await tmp();
    const s = await openSqliteStorage({ path: join(work, 'a', 'kplane.db') });
    const kept = await s.create('/r/kept', Buffer.from('1'));
    await s.update('/r/kept', Buffer.from('2'), kept.modRevision);
    const backup = await backupDatabase({ source: join(work, 'a', 'kplane.db'), output: join(work, 'b.db') });
    assert.equal(backup.revision, 2);
    const lost = await s.create('/r/lost', Buffer.from('x'));
    await s.close();

    const r = await restoreDatabase({ input: join(work, 'b.db'), dataDir: join(work, 'a'), force: true, bumpRevision: 1000 });
    assert.equal(r.replacedRevision, lost.modRevision);
    assert.equal(r.revision, lost.modRevision + 1000);
    const t = await openSqliteStorage({ path: join(work, 'a', 'kplane.db') });
    try {
      assert.equal(await t.currentRevision(), r.revision);
      assert.equal(await t.oldestRevision(), r.revision + 1);
      assert.equal((await t.get('/r/kept'))?.modRevision, 2);
      assert.equal(await t.get('/r/lost'), undefined);
      await assert.rejects(t.list('/r/', { revision: lost.modRevision }), ExpiredError);
      const events = t.watch('/r/', { afterRevision: lost.modRevision, signal: AbortSignal.timeout(5_000) });
      await assert.rejects(
        (async () => {
          for await (const _ of events) break;
        })(),
        ExpiredError,
      );
      assert.equal((await t.create('/r/new', Buffer.from('n'))).modRevision, r.revision + 1);
      // An object restored with its old resourceVersion can still be updated from it.
      assert.equal((await t.update('/r/kept', Buffer.from('3'), 2)).modRevision, r.revision + 2);
    } finally {
      await t.close();
    }
  });

  it('restores a database of the earlier layout without leaving a compaction over every bumped revision', async () => {
    const work = await tmp();
    const file = join(work, 'v1.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB NOT NULL, create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE log (rev INTEGER PRIMARY KEY, key TEXT NOT NULL, deleted INTEGER NOT NULL, value BLOB NOT NULL, create_rev INTEGER NOT NULL,
  prev_value BLOB, prev_create_rev INTEGER, prev_mod_rev INTEGER);
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO kv VALUES ('/r/a', x'61', 1, 3);
INSERT INTO log VALUES (3, '/r/a', 0, x'61', 1, x'60', 1, 1);
INSERT INTO meta VALUES ('revision', 3), ('compacted', 2);`);
    db.close();
    assert.equal(inspectDatabase(file).layout, 'v1');
    const r = await restoreDatabase({ input: file, dataDir: join(work, 'd') });
    const s = await openSqliteStorage({ path: join(work, 'd', 'kplane.db') });
    try {
      assert.equal(await s.currentRevision(), r.revision);
      assert.equal((await s.get('/r/a'))?.value.toString(), 'a');
      const meta = new Database(join(work, 'd', 'kplane.db'), { readonly: true });
      const done = meta.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'compaction_done'").get()?.value;
      meta.close();
      assert.equal(done, r.revision);
    } finally {
      await s.close();
    }
  });

  it('refuses a data directory a server holds, and a file that is not a kplane database', async () => {
    const work = await tmp();
    const s = await openSqliteStorage({ path: join(work, 'd', 'kplane.db') });
    try {
      await backupDatabase({ source: join(work, 'd', 'kplane.db'), output: join(work, 'b.db') });
      await assert.rejects(restoreDatabase({ input: join(work, 'b.db'), dataDir: join(work, 'd'), force: true }), (e: unknown) => {
        assert.ok(e instanceof BackupError);
        assert.equal(e.code, 'in-use');
        return true;
      });
    } finally {
      await s.close();
    }
    new Database(join(work, 'other.db')).exec('CREATE TABLE kv (key TEXT)').close();
    assert.throws(() => inspectDatabase(join(work, 'other.db')), /other\.db is not a kplane database: table "kv" lacks "create_rev", "mod_rev"/);
  });
});
