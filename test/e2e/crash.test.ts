// kill -9 under load: `kplane serve` (SQLite) as a child process, 16 keep-alive clients creating
// configmaps, SIGKILL mid-load, restart on the same data dir. Every acknowledged create survives
// with its uid, nothing is half-written, and a watch from before the crash resumes or says 410.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { adminCredentials, RawClient, watchLines } from '../support/https.js';
import { repoRoot } from '../support/tools.js';

interface Served {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<void>;
}

/** Starts `kplane serve` on port 0 and reads the real URL from its first stdout line. */
async function serve(dataDir: string, extraArgs: readonly string[] = []): Promise<Served> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--data-dir', dataDir, '--secure-port', '0', ...extraArgs],
    {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise<void>((ok) => child.once('exit', () => ok()));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kplane serve did not start in 30 s: ${stderr}`));
    }, 30_000);
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /^kplane is serving on (https:\/\/127\.0\.0\.1:(\d+))/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`kplane serve exited (${code ?? sig}) before serving: ${stderr}`));
    });
  });
  assert.doesNotMatch(url, /:0$/, 'the printed URL carries the real port');
  return { child, url, exited };
}

interface Acked {
  name: string;
  uid: string;
  resourceVersion: number;
}

describe('kill -9 during a create load (SQLite)', { timeout: 90_000 }, () => {
  let dataDir = '';
  const children: ChildProcess[] = [];
  after(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps every acknowledged create, writes nothing half, and never gaps a watch', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'kplane-crash-'));
    const first = await serve(dataDir);
    children.push(first.child);
    const creds = adminCredentials(dataDir);
    const probe = new RawClient(first.url, creds);
    const ns = '/api/v1/namespaces/default/configmaps';
    const seed = await probe.request({
      method: 'POST',
      path: ns,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before-load' } }),
    });
    assert.equal(seed.status, 201, seed.text());
    const preCrashRv = Number(seed.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion);
    probe.close();

    // 16 clients, one keep-alive connection each, creating as fast as they are answered.
    const acked: Acked[] = [];
    let failures = 0;
    let stop = false;
    const clients = Array.from({ length: 16 }, () => new RawClient(first.url, creds, { keepAlive: true, maxSockets: 1 }));
    const loops = clients.map(async (c, ci) => {
      for (let i = 0; !stop; i++) {
        const name = `load-${ci}-${i}`;
        const body = JSON.stringify({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name, labels: { load: 'yes' } },
          data: { payload: 'x'.repeat(200 + ((ci * 31 + i) % 500)) },
        });
        try {
          const res = await c.request({ method: 'POST', path: ns, headers: { 'content-type': 'application/json' }, body, timeoutMs: 5_000 });
          if (res.status === 201) {
            const o = res.json<{ metadata: { uid: string; resourceVersion: string } }>();
            acked.push({ name, uid: o.metadata.uid, resourceVersion: Number(o.metadata.resourceVersion) });
          } else failures++;
        } catch {
          failures++; // the connection died with the server: not acknowledged
          if (stop) return;
          await new Promise((r) => setTimeout(r, 20));
        }
      }
    });
    // Kill once the load is well under way (or after 4 s at the latest), with requests in flight.
    const started = Date.now();
    while (acked.length < 400 && Date.now() - started < 4_000) await new Promise((r) => setTimeout(r, 10));
    first.child.kill('SIGKILL');
    await first.exited;
    const ackedAtKill = acked.length;
    stop = true;
    await Promise.all(loops);
    for (const c of clients) c.close();
    assert.ok(ackedAtKill >= 50, `only ${ackedAtKill} creates acknowledged before the kill`);
    // Responses already on the wire when the process died may still arrive: they count too.
    const finalAcked = [...acked];
    process.stderr.write(
      `# crash: ${finalAcked.length} creates acknowledged (${ackedAtKill} at kill), ${failures} failed or cut off, load ran ${Date.now() - started} ms\n`,
    );

    let storedNames: Set<string>;
    const second = await serve(dataDir);
    children.push(second.child);
    const c = new RawClient(second.url, creds);
    try {
      // Every acknowledged configmap is there with the same uid.
      const list = await c.request({ path: `${ns}?labelSelector=load%3Dyes`, timeoutMs: 20_000 });
      assert.equal(list.status, 200, list.text().slice(0, 300));
      const items = list.json<{
        metadata: { resourceVersion: string };
        items: { kind?: string; metadata: { name: string; uid: string; resourceVersion: string }; data?: { payload?: string } }[];
      }>();
      const byName = new Map(items.items.map((i) => [i.metadata.name, i]));
      const missing = finalAcked.filter((a) => byName.get(a.name)?.metadata.uid !== a.uid);
      assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged creates lost or changed`);
      // Nothing half-written: every stored object decodes whole and has a resourceVersion.
      for (const i of items.items) {
        assert.ok(Number(i.metadata.resourceVersion) > 0, `${i.metadata.name} has a resourceVersion`);
        assert.ok(i.metadata.uid);
        assert.match(i.data?.payload ?? '', /^x{200,699}$/, `${i.metadata.name}: payload intact`);
      }
      for (const a of finalAcked.slice(0, 20)) {
        const one = await c.request({ path: `${ns}/${a.name}` });
        assert.equal(one.status, 200);
        assert.equal(one.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion, String(a.resourceVersion));
      }
      // Unacknowledged creates may or may not have landed, but at most one per client was in flight.
      assert.ok(items.items.length <= finalAcked.length + 16, `${items.items.length} stored for ${finalAcked.length} acknowledged`);
      // Revisions keep growing after the restart.
      const maxAcked = Math.max(...finalAcked.map((a) => a.resourceVersion));
      const post = await c.request({
        method: 'POST',
        path: ns,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-restart' } }),
      });
      assert.equal(post.status, 201, post.text());
      assert.ok(Number(post.json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion) > maxAcked);

      storedNames = new Set(items.items.map((i) => i.metadata.name));
      const outcome = await watchFrom(c, `${ns}?watch=true&resourceVersion=${preCrashRv}&labelSelector=load%3Dyes`, preCrashRv, storedNames);
      process.stderr.write(`# crash: watch cache on: watch from ${preCrashRv} ${outcome}\n`);
    } finally {
      c.close();
      second.child.kill('SIGTERM');
      await Promise.race([second.exited, new Promise((r) => setTimeout(r, 5_000))]);
    }
    // Without the watch cache the same watch is served from the SQLite log, which still holds the
    // history: it must resume, with every stored create and no gap.
    const third = await serve(dataDir, ['--watch-cache=false']);
    children.push(third.child);
    const c3 = new RawClient(third.url, creds);
    try {
      const outcome = await watchFrom(c3, `${ns}?watch=true&resourceVersion=${preCrashRv}&labelSelector=load%3Dyes`, preCrashRv, storedNames);
      assert.match(outcome, /^resumed/);
      process.stderr.write(`# crash: watch cache off: watch from ${preCrashRv} ${outcome}\n`);
    } finally {
      c3.close();
      third.child.kill('SIGTERM');
      await Promise.race([third.exited, new Promise((r) => setTimeout(r, 5_000))]);
    }
  });
});

/**
 * Watches `path` until every name in `names` was ADDED (→ "resumed with N events"; events after
 * `fromRv`, in order) or an ERROR event arrives (→ "expired (410)"; must be 410 Expired).
 */
async function watchFrom(c: RawClient, path: string, fromRv: number, names: ReadonlySet<string>): Promise<string> {
  const w = await c.stream({ path, timeoutMs: 10_000 });
  try {
    assert.equal(w.status, 200);
    const outcome = await w.waitFor((d) => {
      const evs = watchLines(d);
      const err = evs.find((e) => e.type === 'ERROR');
      if (err) return { expired: true as const, status: err.object as { code?: number; reason?: string } };
      const seen = new Set(evs.filter((e) => e.type === 'ADDED').map((e) => e.object.metadata?.name ?? ''));
      return [...names].every((n) => seen.has(n)) ? { expired: false as const, events: evs } : undefined;
    }, 20_000);
    if (outcome.expired) {
      assert.equal(outcome.status.code, 410);
      assert.equal(outcome.status.reason, 'Expired');
      return 'expired (410)';
    }
    const rvs = outcome.events.map((e) => Number(e.object.metadata?.resourceVersion));
    assert.ok(
      rvs.every((rv, i) => rv > fromRv && (i === 0 || rv > rvs[i - 1]!)),
      'resumed events are after the watch RV, in order',
    );
    return `resumed with ${outcome.events.length} events`;
  } finally {
    w.close();
  }
}
