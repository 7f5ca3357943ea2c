// The etcd path of KEP 0001's backup and restore procedure, as documented: `etcdctl snapshot save`
// while kplane serves, `etcdctl snapshot restore` into a new data directory, etcd and kplane started
// on it, the data there. etcd 3.4's restore has no --bump-revision: resourceVersions go back to the
// snapshot's revision, which is why the procedure says to restart every client (or to restore with
// etcdutl 3.5.8+ and --bump-revision --mark-compacted); this test pins that fact too.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { ETCD_BINARY, freePort } from '../support/etcd.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { repoRoot, run, toolsBin } from '../support/tools.js';

const ETCDCTL = join(toolsBin, 'etcdctl');
const SERVING = /kplane is serving on (https:\/\/127\.0\.0\.1:\d+)/;
const CMS = '/api/v1/namespaces/default/configmaps';
const children: ChildProcess[] = [];

interface Proc {
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

function track(child: ChildProcess): Proc {
  children.push(child);
  return { child, exited: new Promise<void>((ok) => child.once('exit', () => ok())) };
}

async function stop(p: Proc): Promise<void> {
  p.child.kill('SIGTERM');
  await p.exited;
}

/** One etcd member on loopback, on `dataDir` (a restored one, or a new one). */
async function startEtcd(dataDir: string, name: string): Promise<{ proc: Proc; endpoint: string; peer: string }> {
  const endpoint = `http://127.0.0.1:${await freePort()}`;
  const peer = `http://127.0.0.1:${await freePort()}`;
  const proc = track(
    spawn(
      ETCD_BINARY,
      [
        `--name=${name}`,
        `--data-dir=${dataDir}`,
        `--listen-client-urls=${endpoint}`,
        `--advertise-client-urls=${endpoint}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=${name}=${peer}`,
        '--log-level=error',
        '--logger=zap',
      ],
      { stdio: 'ignore' },
    ),
  );
  await eventually(
    60_000,
    `etcd at ${endpoint} answers`,
    async () => ((await run(ETCDCTL, ['--endpoints', endpoint, 'endpoint', 'health'])).code === 0 ? true : undefined),
    200,
  );
  return { proc, endpoint, peer };
}

async function serve(dataDir: string, etcd: string): Promise<{ proc: Proc; client: RawClient }> {
  const args = [
    '--import',
    'tsx',
    join(repoRoot, 'src/cli/main.ts'),
    'serve',
    '--storage',
    'etcd',
    '--etcd-servers',
    etcd,
    '--data-dir',
    dataDir,
    '--secure-port',
    '0',
  ];
  const proc = track(spawn(process.execPath, [...args, '--controllers=false'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] }));
  let stderr = '';
  proc.child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`kplane serve did not start in 120 s: ${stderr}`)), 120_000);
    proc.child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = SERVING.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    proc.child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`kplane serve exited (${code}) before serving: ${stderr}`));
    });
  });
  return { proc, client: new RawClient(url, adminCredentials(dataDir)) };
}

async function create(client: RawClient, name: string): Promise<number> {
  const r = await client.request({
    method: 'POST',
    path: CMS,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }),
  });
  assert.equal(r.status, 201, r.text());
  return Number(r.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
}

async function list(client: RawClient): Promise<{ names: string[]; rv: number }> {
  const r = await client.request({ path: CMS });
  assert.equal(r.status, 200, r.text());
  const body = r.json<{ metadata: { resourceVersion: string }; items: { metadata: { name: string } }[] }>();
  return { names: body.items.map((i) => i.metadata.name).sort(), rv: Number(body.metadata.resourceVersion) };
}

describe('etcd: snapshot save, snapshot restore, kplane on the restored etcd', { timeout: 600_000 }, () => {
  let work = '';
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('serves the snapshot’s objects after a restore into a new data directory', async () => {
    work = await mkdtemp(join(tmpdir(), 'kplane-etcd-backup-'));
    const kplaneDir = join(work, 'kplane');
    const etcd1 = await startEtcd(join(work, 'etcd-1'), 'm1');
    const first = await serve(kplaneDir, etcd1.endpoint);
    for (const n of ['kept-1', 'kept-2']) await create(first.client, n);

    // A snapshot of a member while kplane serves.
    const snap = join(work, 'snapshot.db');
    const saved = await run(ETCDCTL, ['--endpoints', etcd1.endpoint, 'snapshot', 'save', snap]);
    assert.equal(saved.code, 0, saved.stderr);
    const status = await run(ETCDCTL, ['snapshot', 'status', snap, '-w', 'json']);
    assert.equal(status.code, 0, status.stderr);
    const snapRevision = (JSON.parse(status.stdout) as { revision: number }).revision;
    let lastRv = 0;
    for (const n of ['lost-1', 'lost-2', 'lost-3']) lastRv = await create(first.client, n);
    assert.ok(lastRv > snapRevision);
    await stop(first.proc);
    await stop(etcd1.proc);

    // Restore into a new data directory (a new one-member cluster) and start etcd and kplane on it.
    const restoredDir = join(work, 'etcd-2');
    const peer = `http://127.0.0.1:${await freePort()}`;
    const restored = await run(ETCDCTL, [
      'snapshot',
      'restore',
      snap,
      '--data-dir',
      restoredDir,
      '--name',
      'm2',
      '--initial-cluster',
      `m2=${peer}`,
      '--initial-advertise-peer-urls',
      peer,
    ]);
    assert.equal(restored.code, 0, restored.stderr);
    const etcd2 = await startEtcd(restoredDir, 'm2');
    // etcd 3.4 restores the snapshot's revision: resourceVersions went back (hence the procedure's
    // "restart every client", or etcdutl's --bump-revision on 3.5.8+). Read before kplane starts:
    // its own start-up writes (leases, Feature reports) move the revision on by a varying count.
    const endpointStatus = await run(ETCDCTL, ['--endpoints', etcd2.endpoint, 'endpoint', 'status', '-w', 'json']);
    assert.equal(endpointStatus.code, 0, endpointStatus.stderr);
    const restoredRevision = (JSON.parse(endpointStatus.stdout) as { Status: { header: { revision: number } } }[])[0]!.Status.header.revision;
    assert.equal(restoredRevision, snapRevision, `the restored member at ${restoredRevision}; snapshot at ${snapRevision}, last write before at ${lastRv}`);
    const second = await serve(kplaneDir, etcd2.endpoint);
    const after1 = await list(second.client);
    assert.deepEqual(after1.names, ['kept-1', 'kept-2']);
    assert.ok(after1.rv >= snapRevision, `list at ${after1.rv}; snapshot at ${snapRevision}`);
    // New writes work, at revisions after the restored list's (the server's own start-up writes,
    // its Feature reports, may already have taken it past the old last write).
    const reused = await create(second.client, 'after-restore');
    assert.ok(reused > after1.rv, `a create after the restore at ${reused}, the restored list at ${after1.rv}`);
    await stop(second.proc);
    await stop(etcd2.proc);
  });
});
