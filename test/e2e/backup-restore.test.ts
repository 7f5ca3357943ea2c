// `kplane backup` and `kplane restore` (SQLite), through the CLI against real servers: a backup
// taken during a create load is a consistent database; restore refuses what it must; and clients
// that watched the server before a restore get 410 and relist (a client-node informer, kubectl 1.33
// `get -w`), instead of resuming into a history that diverged, as after an etcd restore with
// `etcdutl snapshot restore --bump-revision --mark-compacted`.
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import Database from 'better-sqlite3';
import { eventually } from '../support/eventually.js';
import { kplaneProcesses, type KplaneProcess } from '../support/kplane-process.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { repoRoot, run, tools, type RunResult } from '../support/tools.js';
import { SCHEMA } from '../../src/storage/sqlite/writer-core.js';

const SERVING = /kplane is serving on (https:\/\/127\.0\.0\.1:\d+)/;
const CMS = '/api/v1/namespaces/default/configmaps';

function kplane(args: readonly string[]): Promise<RunResult> {
  return run(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), ...args], { timeoutMs: 120_000 });
}

const processes = kplaneProcesses({ startTimeoutMs: 120_000 });
type Served = Pick<KplaneProcess, 'child' | 'exited'>;

/** `kplane serve` as a child process; waits for its "serving" line (a loaded machine can take long). */
async function serve(dataDir: string, port = 0): Promise<{ proc: Served; url: string }> {
  const proc = await processes.start(['serve', '--data-dir', dataDir, '--secure-port', String(port), '--controllers=false'], SERVING);
  return { proc, url: SERVING.exec(proc.firstLine)![1]! };
}

async function stop(proc: Served): Promise<void> {
  proc.child.kill('SIGTERM');
  await proc.exited;
}

async function createConfigMap(client: RawClient, name: string): Promise<number> {
  const r = await client.request({
    method: 'POST',
    path: CMS,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: name } }),
  });
  assert.equal(r.status, 201, r.text());
  return Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
}

async function names(client: RawClient): Promise<string[]> {
  const r = await client.request({ path: CMS });
  assert.equal(r.status, 200, r.text());
  return r
    .json<{ items: { metadata: { name: string } }[] }>()
    .items.map((i) => i.metadata.name)
    .sort();
}

const modeOf = async (path: string): Promise<number> => (await stat(path)).mode & 0o777;

describe('kplane backup and restore (SQLite)', { timeout: 600_000 }, () => {
  const dirs: string[] = [];
  const tmp = async (prefix: string): Promise<string> => {
    const d = await mkdtemp(join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
  after(async () => {
    processes.killAll();
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  });

  it('backs up during a create load, and restores what it must and refuses what it must not', async () => {
    const work = await tmp('kplane-backup-');
    const dataDir = join(work, 'data');
    const { proc, url } = await serve(dataDir);
    const client = new RawClient(url, adminCredentials(dataDir));
    for (let i = 0; i < 20; i++) await createConfigMap(client, `seed-${i}`);

    // Creates keep going while the backup runs; every one is acknowledged.
    let loading = true;
    let created = 0;
    const load = (async () => {
      while (loading) await createConfigMap(client, `load-${created++}`);
    })();
    const out = join(work, 'out.db');
    const b = await kplane(['backup', '--data-dir', dataDir, out]);
    loading = false;
    await load;
    assert.equal(b.code, 0, b.stderr);
    assert.match(b.stdout, /^kplane: backed up .*kplane\.db to .*out\.db: \d+ keys at revision \d+/);
    assert.equal(await modeOf(out), 0o600);
    assert.ok(created > 0, 'creates ran during the backup');

    // The copy is one consistent revision: the creates were sequential, so it holds exactly a prefix
    // of them, every object's value is there, and none is newer than the recorded revision.
    const db = new Database(out, { readonly: true });
    const revision = db.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'revision'").get()!.value;
    const maxMod = db.prepare<[], { m: number }>('SELECT MAX(mod_rev) AS m FROM kv').get()!.m;
    const orphans = db.prepare<[], { n: number }>('SELECT COUNT(*) AS n FROM kv LEFT JOIN log ON log.rev = kv.mod_rev WHERE log.rev IS NULL').get()!.n;
    const loadKeys = db
      .prepare<[], { key: string }>("SELECT key FROM kv WHERE key LIKE '/registry/configmaps/default/load-%'")
      .all()
      .map((r) => Number(r.key.slice(r.key.lastIndexOf('-') + 1)))
      .sort((a, b) => a - b);
    db.close();
    assert.ok(maxMod <= revision, `objects up to ${maxMod} in a copy at ${revision}`);
    assert.equal(orphans, 0);
    assert.deepEqual(
      loadKeys,
      loadKeys.map((_, i) => i),
      'the copy holds load-0 … load-N without a gap',
    );
    assert.equal(Number(/at revision (\d+)/.exec(b.stdout)![1]), revision);

    // An existing output is kept unless --force.
    const again = await kplane(['backup', '--data-dir', dataDir, out]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /out\.db already exists; choose another name, or pass --force to replace it/);
    assert.equal((await kplane(['backup', '--data-dir', dataDir, '--force', out])).code, 0);
    const none = await kplane(['backup', '--data-dir', join(work, 'nothing'), join(work, 'x.db')]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^kplane: no kplane database at .*nothing\/kplane\.db/);

    // Restore refuses a directory a server is using, even with --force.
    const busy = await kplane(['restore', '--data-dir', dataDir, '--force', out]);
    assert.equal(busy.code, 1);
    assert.match(busy.stderr, /is in use by a running kplane server; stop it first/);
    // ... a file that is no kplane database ...
    const notDb = join(work, 'notes.txt');
    await writeFile(notDb, 'hello');
    const bad = await kplane(['restore', '--data-dir', join(work, 'fresh'), notDb]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /notes\.txt is not a kplane database: file is not a database/);
    const other = join(work, 'other.db');
    new Database(other).exec('CREATE TABLE t (x)').close();
    const wrong = await kplane(['restore', '--data-dir', join(work, 'fresh'), other]);
    assert.match(wrong.stderr, /other\.db is not a kplane database: it has no table "kv"/);
    await stop(proc);
    // ... and a directory that is not empty, unless --force.
    const full = await kplane(['restore', '--data-dir', dataDir, out]);
    assert.equal(full.code, 1);
    assert.match(full.stderr, /data is not empty \(.*\); restore into a new directory, or pass --force/);

    // Into a new directory: 0700, the database 0600, and the next step printed.
    const fresh = join(work, 'fresh');
    const r = await kplane(['restore', '--data-dir', fresh, out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /restored .*out\.db into .*fresh\/kplane\.db: \d+ keys at revision \d+\./);
    assert.match(r.stdout, /Next: kplane serve --data-dir .*fresh/);
    assert.equal(await modeOf(fresh), 0o700);
    assert.equal(await modeOf(join(fresh, 'kplane.db')), 0o600);
    const restored = await serve(fresh);
    const names2 = await names(new RawClient(restored.url, adminCredentials(fresh)));
    assert.equal(names2.filter((n) => n.startsWith('seed-')).length, 20);
    // The --force backup ran after the load: every acknowledged create is in it.
    assert.equal(names2.length, 20 + created);
    await stop(restored.proc);
  });

  it('after a restore, a watch from before gets 410 and an informer relists to the restored state', async () => {
    const work = await tmp('kplane-restore-rv-');
    const dataDir = join(work, 'data');
    const first = await serve(dataDir);
    const port = Number(new URL(first.url).port);
    const client = new RawClient(first.url, adminCredentials(dataDir));
    for (const n of ['kept-1', 'kept-2', 'kept-3']) await createConfigMap(client, n);
    const backupFile = join(work, 'backup.db');
    assert.equal((await kplane(['backup', '--data-dir', dataDir, backupFile])).code, 0);
    const backupRevision = new Database(backupFile, { readonly: true })
      .prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'revision'")
      .get()!.value;
    // Written after the backup: lost by the restore.
    let lastRv = 0;
    for (let i = 1; i <= 5; i++) lastRv = await createConfigMap(client, `lost-${i}`);

    const kc = new k8s.KubeConfig();
    kc.loadFromFile(join(dataDir, 'admin.kubeconfig'));
    const core = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer<k8s.V1ConfigMap>(kc, CMS, () => core.listNamespacedConfigMap({ namespace: 'default' }));
    let stopped = false;
    // client-node's ListWatch stops on an error other than 410 (the server is down); restarting it
    // is the caller's job, as its README shows.
    informer.on('error', () => {
      if (!stopped) setTimeout(() => void informer.start().catch(() => undefined), 200);
    });
    const cached = (): string[] =>
      informer
        .list('default')
        .map((o) => o.metadata!.name!)
        .sort();
    try {
      await informer.start();
      await eventually(10_000, 'the informer has every object', async () => cached().length === 8 || undefined);
      await stop(first.proc);

      assert.equal((await kplane(['restore', '--data-dir', dataDir, '--force', backupFile])).code, 0);
      // Back on the informer's address. Once its watch is registered again (resumed from its old
      // resourceVersion, or relisted after a 410), new writes pass the revisions it saw before.
      const second = await serve(dataDir, port);
      const client2 = new RawClient(second.url, adminCredentials(dataDir));
      await eventually(60_000, 'the informer watches again', async () => {
        const m = await client2.request({ path: '/metrics' });
        return /^apiserver_registered_watchers\{[^}]*kind="ConfigMap"[^}]*\} [1-9]/m.test(m.text()) || undefined;
      });
      for (let i = 1; i <= lastRv - backupRevision + 2; i++) await createConfigMap(client2, `new-${i}`);
      const expected = await names(client2);
      assert.deepEqual(
        expected.filter((n) => !n.startsWith('new-')),
        ['kept-1', 'kept-2', 'kept-3'],
      );
      await eventually(30_000, `the informer converges on ${expected.join(',')}`, async () => (cached().join(',') === expected.join(',') ? true : undefined), {
        context: () => `the informer has ${cached().join(',')}`,
      });

      // kubectl watching from a resourceVersion of the old server: 410, never the new history.
      const home = await tmp('kplane-restore-kubectl-');
      const w = await run(tools.kubectl, ['get', '--raw', `${CMS}?watch=1&resourceVersion=${lastRv}&timeoutSeconds=10`], {
        env: { KUBECONFIG: join(dataDir, 'admin.kubeconfig'), HOME: home },
        timeoutMs: 60_000,
      });
      assert.equal(w.code, 0, w.stderr);
      const events = w.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: { code?: number; reason?: string; message?: string } });
      assert.equal(events.length, 1, w.stdout);
      assert.equal(events[0]!.type, 'ERROR');
      assert.equal(events[0]!.object.code, 410);
      assert.equal(events[0]!.object.reason, 'Expired');
      assert.match(events[0]!.object.message ?? '', new RegExp(`^too old resource version: ${lastRv} \\(\\d+\\)$`));
      await stop(second.proc);
    } finally {
      stopped = true;
      await informer.stop();
    }
  });

  it('says so when the disk is full, and leaves nothing behind (no server running)', async (t) => {
    const work = await tmp('kplane-backup-full-');
    const dataDir = join(work, 'data');
    // A kplane database of ~3 MiB, as a stopped server leaves it.
    await run('mkdir', ['-m', '700', dataDir]);
    const db = new Database(join(dataDir, 'kplane.db'));
    db.exec(SCHEMA);
    db.prepare('INSERT INTO log (rev, key, deleted, value, create_rev) VALUES (1, ?, 0, ?, 1)').run(
      '/registry/configmaps/default/big',
      Buffer.alloc(3 << 20, 1),
    );
    db.prepare("INSERT INTO kv (key, create_rev, mod_rev) VALUES ('/registry/configmaps/default/big', 1, 1)").run();
    db.prepare("INSERT INTO meta (name, value) VALUES ('revision', 1)").run();
    db.close();
    const outDir = join(work, 'out');
    await run('mkdir', [outDir]);
    // A full disk: a 1 MiB tmpfs over the output directory, mounted in a mount namespace of the
    // backup's own (unshare: no root needed where user namespaces are allowed, nothing left mounted).
    const script = [
      'mount -t tmpfs -o size=1m tmpfs "$1" || exit 97',
      `"${process.execPath}" --import tsx "${join(repoRoot, 'src/cli/main.ts')}" backup --data-dir "$2" "$1/b.db"`,
      'echo "exit=$?"',
      'ls -A "$1"',
    ].join('\n');
    const full = await run('unshare', ['-Urm', 'bash', '-c', script, 'bash', outDir, dataDir], { timeoutMs: 120_000 });
    if (full.code === 97 || /unshare failed|Operation not permitted/.test(full.stderr)) {
      t.skip(`no mount namespace here to fill a disk in: ${full.stderr.trim()}`);
      return;
    }
    // A progress line may come first, when the copy takes over a second.
    assert.match(
      full.stderr,
      /^kplane: no space left to write .*b\.db \(database or disk is full\); free some space or write elsewhere\. Nothing was written\./m,
    );
    assert.equal(full.stdout, 'exit=1\n', 'exit code 1, and nothing left in the directory');
    // Into a directory with room, the same backup works, with no server running.
    const ok = await kplane(['backup', '--data-dir', dataDir, join(outDir, 'b.db')]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /: 1 keys at revision 1, 3\.\d MiB/);
  });
});
