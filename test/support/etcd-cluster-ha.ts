// The HA layout on a 3-member etcd: several `kplane serve --storage etcd` processes sharing one PKI
// (so one admin credential and CA work against each), `kplane controller-manager` processes with
// leader election, a mixed load through every server that records every acknowledged write, and
// watches that resume from their last resourceVersion (on another server when theirs is gone).
// Used by test/e2e/etcd-ha.test.ts, bench/scenarios/etcd-ha.ts and scripts/soak.ts.
import { cp as copyDir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { EtcdStorage } from '../../src/storage/etcd/etcd-storage.js';
import { freePort } from './etcd.js';
import type { EtcdCluster } from './etcd-cluster.js';
import { kplaneProcesses, type KplaneProcess, type KplaneProcesses } from './kplane-process.js';

export const CONFIGMAPS: GVR = { group: '', version: 'v1', resource: 'configmaps' };
export const LEASES: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const CM_LEASE = 'kplane-controller-manager';

export interface ApiServerProc {
  readonly name: string;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly kubeconfig: string;
  proc: KplaneProcess | undefined;
  /** kill -9; resolves once the process is gone. */
  kill(): Promise<void>;
  /** Starts it again on its port and data directory. */
  restart(): Promise<void>;
}

export interface ControllerManagerProc {
  readonly identity: string;
  readonly proc: KplaneProcess;
  kill(): Promise<void>;
}

export interface HaControlPlane {
  readonly servers: ApiServerProc[];
  readonly controllerManagers: ControllerManagerProc[];
  /** Talks to etcd directly (no cache): the truth the servers are compared with. */
  readonly direct: EtcdStorage;
  /** A client of server `i` that fails over to the others, in order. */
  client(i: number): KubeClient;
  /** The controller-manager Lease's holder, undefined when none or unreadable. */
  leaseHolder(): Promise<string | undefined>;
  /** Starts one more controller-manager against server `i`. */
  startControllerManager(i: number): Promise<ControllerManagerProc>;
  stop(): Promise<void>;
}

export interface HaOptions {
  readonly servers?: number;
  readonly controllerManagers?: number;
  /** --watch-cache-consistency-check-interval of every server (default 2s, as test servers). */
  readonly consistencyCheckInterval?: string;
  /** Extra flags for every `kplane serve`. */
  readonly serveFlags?: readonly string[];
  readonly leaseDurationMs?: number;
}

/** `kplane <args>` children with a 120 s start deadline: three servers and two controller-managers compile under tsx at once. */
export function kplaneChildren(startTimeoutMs = 120_000): KplaneProcesses {
  return kplaneProcesses({ startTimeoutMs });
}

/** Starts the servers (one after the other: the first writes the PKI the others copy) and controller-managers. */
export async function startHaControlPlane(etcd: EtcdCluster, opts: HaOptions = {}): Promise<HaControlPlane> {
  const procs = kplaneChildren();
  const root = await mkdtemp(join(tmpdir(), 'kplane-ha-'));
  const servers: ApiServerProc[] = [];
  const clients: KubeClient[] = [];
  const cms: ControllerManagerProc[] = [];
  const direct = new EtcdStorage({ endpoints: etcd.endpoints });
  const leaseMs = opts.leaseDurationMs ?? 3_000;

  const startServer = async (i: number): Promise<ApiServerProc> => {
    const dataDir = join(root, `server-${i}`);
    if (i > 0) await copyDir(join(root, 'server-0', 'pki'), join(dataDir, 'pki'), { recursive: true });
    const port = await freePort();
    const args = [
      'serve',
      '--storage',
      'etcd',
      '--etcd-servers',
      etcd.endpoints.join(','),
      '--etcd-compaction-interval',
      '0',
      '--data-dir',
      dataDir,
      '--secure-port',
      String(port),
      '--controllers=false',
      '--watch-cache-consistency-check-interval',
      opts.consistencyCheckInterval ?? '2s',
      ...(opts.serveFlags ?? []),
    ];
    const launch = (): Promise<KplaneProcess> => procs.start(args, /^kplane is serving on https:\/\/\S+/m);
    const server: ApiServerProc = {
      name: `server-${i}`,
      url: `https://127.0.0.1:${port}`,
      port,
      dataDir,
      kubeconfig: join(dataDir, 'admin.kubeconfig'),
      proc: await launch(),
      async kill() {
        const p = server.proc;
        if (!p) return;
        p.child.kill('SIGKILL');
        await p.exited;
        server.proc = undefined;
      },
      async restart() {
        if (server.proc) throw new Error(`${server.name} is still running`);
        server.proc = await launch();
      },
    };
    return server;
  };

  const ha: HaControlPlane = {
    servers,
    controllerManagers: cms,
    direct,
    client(i) {
      if (!clients[i]) {
        const order = servers.map((_, k) => servers[(i + k) % servers.length]!.url);
        clients[i] = createHttpsClient(servers[i]!.kubeconfig, { servers: order, requestTimeoutMs: 15_000 });
      }
      return clients[i];
    },
    async leaseHolder() {
      for (let i = 0; i < servers.length; i++) {
        try {
          const l = await ha.client(i).get<KubeObject & { spec?: { holderIdentity?: string } }>(LEASES, 'kube-system', CM_LEASE);
          return l.spec?.holderIdentity || undefined;
        } catch {
          // try the next server
        }
      }
      return undefined;
    },
    async startControllerManager(i) {
      const proc = await procs.start(
        [
          'controller-manager',
          '--kubeconfig',
          servers[i]!.kubeconfig,
          '--leader-elect-lease-duration',
          `${leaseMs}ms`,
          '--leader-elect-renew-deadline',
          `${Math.round(leaseMs * 0.66)}ms`,
          '--leader-elect-retry-period',
          '300ms',
        ],
        /identity (\S+),/,
      );
      const cm: ControllerManagerProc = {
        identity: /identity (\S+),/.exec(proc.firstLine)![1]!,
        proc,
        async kill() {
          proc.child.kill('SIGKILL');
          await proc.exited;
        },
      };
      cms.push(cm);
      return cm;
    },
    async stop() {
      await Promise.all(clients.map((c) => c?.close()));
      procs.killAll();
      await Promise.all(
        procs.children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise<void>((r) => c.once('exit', () => r())) : Promise.resolve())),
      );
      await direct.close();
      await rm(root, { recursive: true, force: true });
    },
  };
  try {
    for (let i = 0; i < (opts.servers ?? 3); i++) servers.push(await startServer(i));
    for (let i = 0; i < (opts.controllerManagers ?? 2); i++) await ha.startControllerManager(i % servers.length);
  } catch (e) {
    await ha.stop();
    throw e;
  }
  return ha;
}

// ---- the load -----------------------------------------------------------------------------------

/** What a client was told about one object: its last acknowledged state. */
export interface Ack {
  /** resourceVersion of the last acknowledged create or update; undefined after an acknowledged delete. */
  rv: number | undefined;
  /** A later write got no answer (network error, 5xx, timeout): it may or may not have been applied. */
  uncertain: boolean;
  /** What happened to it, for a failure message: `create 201 @5`, `delete 409 …`. */
  readonly log: string[];
}

export interface MixedLoad {
  /** name → what was acknowledged, over every writer. */
  readonly acks: Map<string, Ack>;
  readonly counts: { creates: number; updates: number; deletes: number; failures: number; appliedButRefused: number };
  /** Failed writes by message (numbers blanked), for the report. */
  readonly failures: Map<string, number>;
  /** Latency of every acknowledged write (ms), for percentiles. */
  readonly latenciesMs: number[];
  /** When a write was last acknowledged (Date.now()). */
  lastAckAt: number;
  stop(): Promise<void>;
}

let loadCounter = Date.now() % 100_000;

/**
 * `writersPerClient` loops per client, each on names of its own: create a ConfigMap, update it, and
 * delete every third one. A write that fails without an answer marks its object uncertain and the
 * loop moves to a new name, so every acknowledged state stays checkable.
 */
/**
 * `window`: each writer also deletes the object it created `window` rounds before (unless that one
 * was deleted already), so the stored set stays bounded (a soak's steady state) instead of growing.
 */
export function mixedLoad(clients: readonly KubeClient[], ns: string, opts: { writersPerClient?: number; pauseMs?: number; window?: number } = {}): MixedLoad {
  const acks = new Map<string, Ack>();
  const counts = { creates: 0, updates: 0, deletes: 0, failures: 0, appliedButRefused: 0 };
  const latenciesMs: number[] = [];
  const failures = new Map<string, number>();
  let running = true;
  const load: MixedLoad = { acks, counts, failures, latenciesMs, lastAckAt: 0, stop: async () => {} };
  const timed = async <T>(op: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const r = await op();
    latenciesMs.push(performance.now() - t0);
    load.lastAckAt = Date.now();
    return r;
  };
  const writer = async (client: KubeClient, id: string): Promise<void> => {
    for (let n = 0; running; n++) {
      const name = `${id}-${n}`;
      const ack: Ack = { rv: undefined, uncertain: false, log: [] };
      try {
        const created = await timed(() =>
          client.create<KubeObject>(CONFIGMAPS, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { step: '0' } }),
        );
        acks.set(name, ack);
        ack.rv = Number(created.metadata!.resourceVersion);
        ack.log.push(`create @${ack.rv}`);
        counts.creates++;
        const updated = await timed(() => client.update<KubeObject>(CONFIGMAPS, ns, { ...created, data: { step: '1' } }));
        ack.rv = Number(updated.metadata!.resourceVersion);
        ack.log.push(`update @${ack.rv}`);
        counts.updates++;
        if (n % 3 === 0) {
          await timed(() => client.delete(CONFIGMAPS, ns, name));
          ack.rv = undefined;
          ack.log.push('delete');
          counts.deletes++;
        }
        const old = n - (opts.window ?? 0);
        if (opts.window !== undefined && old >= 0 && old % 3 !== 0) {
          const oldName = `${id}-${old}`;
          await timed(() => client.delete(CONFIGMAPS, ns, oldName));
          const oldAck = acks.get(oldName);
          if (oldAck) {
            oldAck.rv = undefined;
            oldAck.log.push('delete (window)');
          }
          counts.deletes++;
        }
      } catch (e) {
        counts.failures++;
        const what = `${String((e as { code?: unknown }).code ?? '')} ${(e as Error).message}`.replace(/\d+/g, 'N').slice(0, 160);
        failures.set(what, (failures.get(what) ?? 0) + 1);
        ack.log.push(`failed: ${what}`);
        // A refusal with a Status (4xx) left nothing behind; anything else may have. Except: each
        // name is this loop's alone, so a 409 (AlreadyExists, Conflict) or a 404 on our own object
        // means our own write was applied and then tried again (a transaction whose answer was lost,
        // repeated on another member, fails the precondition the first attempt changed). Counted
        // in `appliedButRefused`, which the suite requires to stay 0.
        const code = (e as { code?: unknown }).code;
        const retriedOwnWrite = code === 409 || code === 404;
        if (retriedOwnWrite) counts.appliedButRefused++;
        if (retriedOwnWrite || !(typeof code === 'number' && code >= 400 && code < 500)) {
          ack.uncertain = true;
          acks.set(name, ack);
        }
        await sleep(50);
      }
      if (opts.pauseMs) await sleep(opts.pauseMs);
    }
  };
  // Names unique per load, so that loads one after the other never meet each other's objects.
  const tag = (loadCounter++).toString(36);
  const loops = clients.flatMap((c, i) => Array.from({ length: opts.writersPerClient ?? 2 }, (_, w) => writer(c, `l${tag}-w${i}x${w}`)));
  load.stop = async () => {
    running = false;
    await Promise.all(loops);
  };
  return load;
}

// ---- recovery -----------------------------------------------------------------------------------

export interface Recovery {
  /** From `since` until a write started after it was acknowledged. */
  readonly writesBackMs: number;
  /** From `since` until every listed server's watch cache (a list at resourceVersion=0) held that write. */
  readonly convergedMs: number;
}

/**
 * The time to recover after a fault injected at `since`: probe creates through `client` (which
 * should fail over), a new one every 50 ms without waiting for the earlier ones, until one is
 * acknowledged; then that write is polled for in every server's cache. Probes are not sequential
 * because a write in flight when the etcd leader dies can wait for etcd's request timeout (7 s
 * with the default 1 s election timeout) although writes sent after the election pass at once:
 * the figure is when the service accepts writes again, not how long the unluckiest one waited
 * (that shows in the load's latencies). Resolves once every probe has settled.
 */
export async function measureRecovery(
  client: KubeClient,
  cacheClients: readonly KubeClient[],
  ns: string,
  since: number,
  opts: { tag: string; timeoutMs?: number },
): Promise<Recovery> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let probe: { name: string; rv: number; at: number } | undefined;
  const probes: Promise<void>[] = [];
  let acked!: () => void;
  const ackedOnce = new Promise<void>((r) => (acked = r));
  for (let n = 0; !probe; n++) {
    if (Date.now() - since > timeoutMs) throw new Error(`${opts.tag}: no write accepted within ${timeoutMs} ms`);
    const name = `probe-${opts.tag}-${n}`;
    probes.push(
      client.create<KubeObject>(CONFIGMAPS, ns, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name } }).then(
        (o) => {
          probe ??= { name, rv: Number(o.metadata!.resourceVersion), at: Date.now() };
          acked();
        },
        () => undefined,
      ),
    );
    // The next probe 50 ms later, or none once one was acknowledged.
    await Promise.race([sleep(50), ackedOnce]);
  }
  const first = probe;
  const writesBackMs = first.at - since;
  const converged = Promise.all(
    cacheClients.map(async (c, i) => {
      for (;;) {
        const got = await serverContent(c, ns, true).catch(() => undefined);
        if (got?.items.get(first.name) === first.rv) return;
        if (Date.now() - since > timeoutMs) throw new Error(`${opts.tag}: server ${i}'s cache lacks ${first.name}@${first.rv} after ${timeoutMs} ms`);
        await sleep(20);
      }
    }),
  ).then(() => Date.now() - since);
  await Promise.all(probes);
  return { writesBackMs, convergedMs: await converged };
}

// ---- watches ------------------------------------------------------------------------------------

export interface SeenEvent {
  readonly type: string;
  readonly name: string;
  readonly rv: number;
}

export interface FollowedWatch {
  readonly events: SeenEvent[];
  /** Watch errors (a 410 would mean the watch had to start over: a failure here). */
  readonly errors: string[];
  /** How many times the watch was opened again. */
  reopened: number;
  /** The resourceVersion it would resume from now. */
  readonly rv: string;
  stop(): void;
}

/**
 * A watch that, as a reflector does, resumes from the last resourceVersion it saw (an event's or a
 * bookmark's) whenever the stream ends or breaks. The client fails over, so a watch whose server
 * died resumes on another.
 */
export function followWatch(client: KubeClient, ns: string, fromRv: string): FollowedWatch {
  const events: SeenEvent[] = [];
  const errors: string[] = [];
  const stopper = new AbortController();
  let rv = fromRv;
  const w: FollowedWatch = {
    events,
    errors,
    reopened: 0,
    get rv() {
      return rv;
    },
    stop: () => stopper.abort(),
  };
  void (async () => {
    while (!stopper.signal.aborted) {
      try {
        for await (const ev of client.watch(CONFIGMAPS, ns, {
          resourceVersion: rv,
          allowWatchBookmarks: true,
          timeoutSeconds: 300,
          signal: stopper.signal,
        })) {
          const evRv = ev.object.metadata?.resourceVersion ?? rv;
          if (ev.type !== 'BOOKMARK') events.push({ type: ev.type, name: ev.object.metadata?.name ?? '', rv: Number(evRv) });
          rv = evRv;
        }
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        if (typeof code === 'number') errors.push(`watch from ${rv}: ${code} ${(e as Error).message}`);
      }
      if (stopper.signal.aborted) break;
      w.reopened++;
      await sleep(100);
    }
  })();
  return w;
}

/**
 * etcd's history of `prefix` after `afterRv` up to `untilRv`, as watch events would name it.
 * `untilRv` must be an event under the prefix (write a last object and pass its resourceVersion).
 */
export async function etcdHistory(direct: EtcdStorage, prefix: string, afterRv: number, untilRv: number): Promise<SeenEvent[]> {
  const out: SeenEvent[] = [];
  if (untilRv <= afterRv) return out;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), 30_000);
  try {
    for await (const ev of direct.watch(prefix, { afterRevision: afterRv, signal: stop.signal })) {
      if (ev.type === 'progress') continue;
      if (ev.revision > untilRv) break;
      const name = ev.kv.key.slice(prefix.length);
      out.push({ type: ev.type === 'delete' ? 'DELETED' : ev.prevKv ? 'MODIFIED' : 'ADDED', name, rv: ev.revision });
      if (ev.revision >= untilRv) break;
    }
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  if ((out.at(-1)?.rv ?? 0) < untilRv) throw new Error(`etcd history of ${prefix} after ${afterRv}: no event at ${untilRv} within 30 s`);
  return out;
}

/** name → modRevision of what etcd holds under `prefix` now, and etcd's revision. */
export async function etcdContent(direct: EtcdStorage, prefix: string): Promise<{ items: Map<string, number>; revision: number }> {
  const listed = await direct.list(prefix);
  if (listed.more) throw new Error('etcd list cut short');
  return { items: new Map(listed.items.map((kv) => [kv.key.slice(prefix.length), kv.modRevision])), revision: listed.revision };
}

/**
 * name → resourceVersion as a server lists them. `fromCache`: resourceVersion=0, what the watch
 * cache holds now (a list without one may be read from etcd when the cache cannot prove itself fresh).
 */
export async function serverContent(client: KubeClient, ns: string, fromCache = false): Promise<{ items: Map<string, number>; revision: number }> {
  const list = await client.list(CONFIGMAPS, ns, fromCache ? { resourceVersion: '0' } : {});
  return {
    items: new Map(list.items.map((o) => [o.metadata!.name!, Number(o.metadata!.resourceVersion)])),
    revision: Number(list.metadata?.resourceVersion),
  };
}

/** The differences between two name → rv maps, shortened for a message; empty when equal. */
export function contentDiff(want: Map<string, number>, got: Map<string, number>): string {
  const missing = [...want].filter(([n, rv]) => got.get(n) !== rv).map(([n, rv]) => `${n}@${rv}${got.has(n) ? ` (has @${got.get(n)})` : ''}`);
  const extra = [...got].filter(([n]) => !want.has(n)).map(([n, rv]) => `${n}@${rv}`);
  if (missing.length === 0 && extra.length === 0) return '';
  return `missing or stale (${missing.length}): ${missing.slice(0, 8).join(', ')}; extra (${extra.length}): ${extra.slice(0, 8).join(', ')}`;
}

/** p-quantile of `values` (q in 0..1); NaN for none. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}
