// High availability on a 3-member etcd (issue 21): three `kplane serve --storage etcd` processes
// on one etcd cluster, two `kplane controller-manager` processes with leader election, and a mixed
// load (creates, updates, deletes) through every server with a resumed watch on each. One round
// per fault: kill -9 the etcd leader, kill -9 a follower, SIGSTOP a member for a while, kill -9 an
// API server, kill -9 the controller-manager leader. After each: every acknowledged write is in
// etcd, every server lists exactly etcd's content, every watch saw exactly etcd's history (each
// event once, in order, across reconnects and server changes), /readyz said what is true during
// the fault, and the time to recover is printed (recorded, not asserted: goals live in the bench).
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { KubeClient } from '../../src/client/types.js';
import { startEtcdCluster, type EtcdCluster, type EtcdMember } from '../support/etcd-cluster.js';
import {
  CONFIGMAPS,
  contentDiff,
  etcdContent,
  etcdHistory,
  followWatch,
  measureRecovery,
  mixedLoad,
  quantile,
  serverContent,
  startHaControlPlane,
  type ApiServerProc,
  type HaControlPlane,
} from '../support/etcd-cluster-ha.js';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { kubectlSession } from '../support/kubectl.js';
import { NS as NAMESPACES } from '../support/gvrs.js';
import { ensureTools, tools } from '../support/tools.js';

const NS = 'ha';
const PREFIX = `/registry/configmaps/${NS}/`;
/** How long a fault lasts with the load running, before the faulty part is brought back. */
const FAULT_MS = 4_000;

let etcd: EtcdCluster;
let ha: HaControlPlane;
/** One client per server that never fails over: what that server itself says. */
const own = new Map<ApiServerProc, KubeClient>();
const raw = new Map<ApiServerProc, RawClient>();
let kubectlDir = '';

function ownClient(s: ApiServerProc): KubeClient {
  if (!own.has(s)) own.set(s, createHttpsClient(s.kubeconfig, { requestTimeoutMs: 10_000 }));
  return own.get(s)!;
}

function rawClient(s: ApiServerProc): RawClient {
  if (!raw.has(s)) raw.set(s, new RawClient(s.url, adminCredentials(s.dataDir)));
  return raw.get(s)!;
}

/** HTTP status of `/readyz?verbose` and its text; status 0 when the server cannot be reached. */
async function readyz(s: ApiServerProc): Promise<{ status: number; text: string }> {
  try {
    const r = await rawClient(s).request({ path: '/readyz?verbose', timeoutMs: 5_000 });
    return { status: r.status, text: r.text() };
  } catch (e) {
    return { status: 0, text: String(e) };
  }
}

/** Every listed server answers /readyz 200 `times` times in a row (eventually, within `ms`). */
async function readyzHolds(servers: readonly ApiServerProc[], what: string, ms = 15_000, times = 3): Promise<void> {
  let streak = 0;
  await eventually(
    ms,
    what,
    async () => {
      const all = await Promise.all(servers.map(readyz));
      const bad = all.map((r, i) => [servers[i]!.name, r] as const).filter(([, r]) => r.status !== 200);
      if (bad.length) {
        streak = 0;
        throw new Error(
          bad
            .map(
              ([n, r]) =>
                `${n}: ${r.status} ${r.text
                  .split('\n')
                  .filter((l) => l.startsWith('[-]'))
                  .join(' ')}`,
            )
            .join('; '),
        );
      }
      return ++streak >= times ? true : undefined;
    },
    200,
  );
}

/** Every listed server answers /readyz 200 at each of `samples` probes, 250 ms apart: none may fail. */
async function readyzThroughout(servers: readonly ApiServerProc[], what: string, samples = 8): Promise<void> {
  for (let i = 0; i < samples; i++) {
    const all = await Promise.all(servers.map(readyz));
    const bad = all.map((r, k) => [servers[k]!.name, r] as const).filter(([, r]) => r.status !== 200);
    assert.deepEqual(
      bad.map(
        ([n, r]) =>
          `${n}: ${r.status} ${r.text
            .split('\n')
            .filter((l) => l.startsWith('[-]'))
            .join(' ')}`,
      ),
      [],
      `${what} (probe ${i + 1} of ${samples})`,
    );
    await sleep(250);
  }
}

function running(): ApiServerProc[] {
  return ha.servers.filter((s) => s.proc !== undefined);
}

interface Fault {
  /** Breaks something; resolves once it is broken. */
  inject(): Promise<void>;
  /** While broken, with the load running: check what /readyz and clients say. */
  during(t: TestContext, since: number): Promise<void>;
  /** Repairs it. */
  repair(): Promise<void>;
}

/** One round: load and watches on, the fault, repair, then every check. */
async function round(t: TestContext, label: string, fault: Fault): Promise<void> {
  const start = await serverContent(ownClient(ha.servers[0]!), NS);
  const startRv = start.revision;
  const watches = ha.servers.map((_, i) => followWatch(ha.client(i), NS, String(startRv)));
  const load = mixedLoad(
    ha.servers.map((_, i) => ha.client(i)),
    NS,
  );
  try {
    await eventually(20_000, `the load is under way (${label})`, async () => (load.counts.updates >= 6 ? true : undefined));
    const faultAt = Date.now();
    await fault.inject();
    // Recovery, measured with a probe next to the load (through server 0, failing over).
    const recovery = measureRecovery(ha.client(0), running().map(ownClient), NS, faultAt, { tag: label.replace(/\W+/g, '-').toLowerCase() });
    try {
      await fault.during(t, faultAt);
      await sleep(Math.max(0, FAULT_MS - (Date.now() - faultAt)));
    } finally {
      // Repaired even when a check failed, so that the next round starts whole.
      await fault.repair();
    }
    const recovered = await recovery;
    await sleep(1_500);
    await load.stop();
    assert.ok(load.counts.creates > 10, `the load got ${load.counts.creates} creates through`);

    // The last write, through server 0: the end of the history every watch must reach.
    const sentinel = await ha.client(0).create<KubeObject>(CONFIGMAPS, NS, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'sentinel-' } });
    const untilRv = Number(sentinel.metadata!.resourceVersion);

    // 1. No acknowledged write lost: etcd holds every acknowledged state.
    const inEtcd = await etcdContent(ha.direct, PREFIX);
    const lost: string[] = [];
    for (const [name, ack] of load.acks) {
      const now = inEtcd.items.get(name);
      if (ack.uncertain) {
        // A write without an answer came after: etcd holds the acknowledged state or a later one.
        if (ack.rv !== undefined && now !== undefined && now < ack.rv) lost.push(`${name}: acknowledged @${ack.rv}, etcd @${now} (${ack.log.join(', ')})`);
      } else if (ack.rv === undefined ? now !== undefined : now !== ack.rv) {
        lost.push(
          `${name}: acknowledged ${ack.rv === undefined ? 'deleted' : `@${ack.rv}`}, etcd ${now === undefined ? 'has none' : `@${now}`} (${ack.log.join(', ')})`,
        );
      }
    }
    assert.deepEqual(lost, [], `acknowledged writes lost in ${label}`);

    // 2. Every running server's cache converges to etcd's content, and its consistent list says the same.
    for (const s of running()) {
      for (const fromCache of [true, false]) {
        await eventually(
          20_000,
          `${s.name} lists etcd's content after ${label}${fromCache ? ' from its cache' : ''}`,
          async () => {
            const diff = contentDiff(inEtcd.items, (await serverContent(ownClient(s), NS, fromCache)).items);
            if (diff) throw new Error(diff);
            return true;
          },
          200,
        );
      }
    }

    // 3. Every watch saw exactly etcd's history, each event once, in order.
    const history = (await etcdHistory(ha.direct, PREFIX, startRv, untilRv)).map((e) => `${e.type} ${e.name}@${e.rv}`);
    for (const [i, w] of watches.entries()) {
      await eventually(20_000, `the watch through ${ha.servers[i]!.name} reaches ${untilRv}`, async () =>
        (w.events.at(-1)?.rv ?? 0) >= untilRv ? true : undefined,
      );
      const seen = w.events.map((e) => `${e.type} ${e.name}@${e.rv}`);
      assert.deepEqual(seen, history, `the watch that started on ${ha.servers[i]!.name} saw exactly etcd's history (${label})`);
      assert.deepEqual(w.errors, [], `the watch that started on ${ha.servers[i]!.name} never had to start over`);
    }

    // 4. Afterwards every server is ready, its cache self-check included.
    await readyzHolds(running(), `every server ready after ${label}`, 20_000, 1);
    for (const s of running()) assert.match((await readyz(s)).text, /\[\+\]watch-cache-consistency ok/);

    const p99 = quantile(load.latenciesMs, 0.99);
    const line = `${label}: writes accepted again ${recovered.writesBackMs} ms after the fault, every cache had that write ${recovered.convergedMs} ms after it; ${load.counts.creates} creates, ${load.counts.updates} updates, ${load.counts.deletes} deletes acknowledged, ${load.counts.failures} failed; write p99 ${p99.toFixed(0)} ms; ${history.length} events, watches reopened ${watches.map((w) => w.reopened).join('/')}`;
    t.diagnostic(line);
    // A write etcd applied must never be answered 404/409: the storage retries a transaction only
    // when it was never sent (etcd3's default policy repeated ones whose answer was lost).
    assert.equal(load.counts.appliedButRefused, 0, `${label}: writes applied but answered 404/409`);
    if (load.failures.size) t.diagnostic(`${label}: failed writes: ${[...load.failures].map(([m, n]) => `${n}× ${m}`).join(' | ')}`);
    console.log(`[etcd-ha] ${line}`);
  } finally {
    await load.stop();
    for (const w of watches) w.stop();
  }
}

/** The member that is not `leader` and not `other`. */
function followerOf(leader: EtcdMember): EtcdMember {
  return etcd.members.find((m) => m !== leader && m.running)!;
}

describe('HA: 3 API servers and 2 controller-managers on a 3-member etcd, one round per fault', { timeout: 360_000 }, () => {
  before(async () => {
    ensureTools();
    etcd = await startEtcdCluster();
    ha = await startHaControlPlane(etcd, { servers: 3, controllerManagers: 2 });
    await ha.client(0).create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    kubectlDir = await mkdtemp(join(tmpdir(), 'kplane-ha-kubectl-'));
  });
  after(async () => {
    for (const c of own.values()) await c.close();
    for (const c of raw.values()) c.close();
    await ha?.stop();
    await etcd?.stop();
    if (kubectlDir) await rm(kubectlDir, { recursive: true, force: true });
  });

  it('kill -9 the etcd leader: a new leader is elected, writes resume, nothing is lost', async (t) => {
    let victim!: EtcdMember;
    await round(t, 'etcd leader kill -9', {
      async inject() {
        victim = await etcd.waitForLeader();
        await victim.kill();
      },
      async during(t, since) {
        const next = await etcd.waitForLeader(15_000);
        assert.notEqual(next, victim);
        t.diagnostic(`etcd leader kill -9: ${next.name} leads ${Date.now() - since} ms after ${victim.name} was killed`);
        // Truth: two of three members are a quorum, so every server is ready while one is down.
        await readyzHolds(running(), 'every server ready with the old etcd leader down');
      },
      repair: () => victim.restart(),
    });
  });

  it('kill -9 an etcd follower: every server stays ready, nothing is lost', async (t) => {
    let victim!: EtcdMember;
    await round(t, 'etcd follower kill -9', {
      async inject() {
        victim = followerOf(await etcd.waitForLeader());
        await victim.kill();
      },
      async during() {
        // Truth: a quorum is up all along, so no probe may fail.
        await readyzThroughout(running(), 'every server ready with a follower down');
      },
      repair: () => victim.restart(),
    });
  });

  it('SIGSTOP an etcd member (hung), SIGCONT later: every server stays ready, nothing is lost', async (t) => {
    let victim!: EtcdMember;
    await round(t, 'etcd member SIGSTOP', {
      async inject() {
        // A follower: a hung leader is the leader-kill round plus a stale leader coming back.
        victim = followerOf(await etcd.waitForLeader());
        victim.pause();
      },
      async during() {
        // Truth: the other two are a quorum all along; a hung member must not make a server unready.
        await readyzThroughout(running(), 'every server ready with a member hung');
      },
      async repair() {
        victim.resume();
      },
    });
  });

  it('kill -9 an API server: clients move to the others, kubectl on another server works, it comes back', async (t) => {
    const victim = ha.servers[2]!;
    const survivor = ha.servers[0]!;
    const kcVictim = kubectlSession(tools.kubectl, victim.kubeconfig, kubectlDir);
    const kcSurvivor = kubectlSession(tools.kubectl, survivor.kubeconfig, kubectlDir);
    await round(t, 'API server kill -9', {
      inject: () => victim.kill(),
      async during() {
        // Truth: the killed server answers nothing; the others are ready.
        assert.equal((await readyz(victim)).status, 0, `${victim.name} is gone`);
        await readyzHolds(running(), 'the other servers stay ready');
        const refused = await kcVictim.k(['get', 'configmaps', '-n', NS, '-o', 'name']);
        assert.notEqual(refused.code, 0);
        assert.match(refused.stderr, /connection refused/);
        assert.match(await kcSurvivor.ok(['get', 'configmaps', '-n', NS, '-o', 'name']), /configmap\//);
        // kplane's client given every server keeps working.
        const list = await ha.client(2).list(CONFIGMAPS, NS);
        assert.equal(list.kind, 'ConfigMapList');
      },
      async repair() {
        await victim.restart();
        await readyzHolds([victim], `${victim.name} ready again`, 30_000, 1);
        assert.match(await kcVictim.ok(['get', 'configmaps', '-n', NS, '-o', 'name']), /configmap\//);
      },
    });
  });

  it('kill -9 the controller-manager leader: the standby takes the Lease and acts', async (t) => {
    const leaseHolder = await eventually(20_000, 'a controller-manager leads', async () => {
      const h = await ha.leaseHolder();
      return ha.controllerManagers.find((c) => c.identity === h && c.proc.child.exitCode === null);
    });
    const standby = ha.controllerManagers.find((c) => c !== leaseHolder && c.proc.child.exitCode === null)!;
    await round(t, 'controller-manager leader kill -9', {
      inject: () => leaseHolder.kill(),
      async during(t, since) {
        // Truth: the API servers do not depend on a controller-manager; they stay ready.
        await readyzHolds(running(), 'every server ready without a controller-manager leader');
        await eventually(30_000, 'the standby takes the Lease', async () => ((await ha.leaseHolder()) === standby.identity ? true : undefined), 100);
        t.diagnostic(`controller-manager leader kill -9: the standby holds the Lease ${Date.now() - since} ms after the kill`);
        // And acts: a namespace deletion (the namespace controller's work) completes.
        await ha.client(1).create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ha-cm-round' } });
        await ha.client(1).delete(NAMESPACES, undefined, 'ha-cm-round');
        await eventually(30_000, 'the new leader finishes a namespace deletion', async () => {
          try {
            await ha.client(1).get(NAMESPACES, undefined, 'ha-cm-round');
            return undefined;
          } catch (e) {
            return (e as { code?: number }).code === 404 ? true : undefined;
          }
        });
      },
      async repair() {
        // The killed one comes back as a standby.
        await ha.startControllerManager(0);
      },
    });
    assert.equal(await ha.leaseHolder(), standby.identity, 'the new leader keeps the Lease when the old one returns');
  });
});
