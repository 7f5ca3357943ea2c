// node-sim following a cloud across processes: the simulated machines are the cloud's instances, so
// when the cloud deletes or shuts one down its Node's "kubelet" stops (no heartbeats, no pods, no
// node proxy), and when the cloud starts it again the kubelet comes back (Ready, pods served again).
// The link is the loopback cloud's admin long poll (`GET /instances?watch=CURSOR`): level-based, every
// answer carries every instance, so a missed change, a restarted cloud (a new cursor epoch) or a
// restarted node-sim all converge on the next answer. Failures are logged and retried with
// exponential backoff; they never stop node-sim.
import { setTimeout as delay } from 'node:timers/promises';
import { asLogger, type Logger } from '../../golang/klog.js';

/** The part of NodeSim the link drives. */
export interface FollowingSim {
  readonly nodeList: readonly { name: string }[];
  powerOff(name: string): Promise<void>;
  powerOn(name: string): Promise<void>;
}

export interface CloudFollowOptions {
  /** The cloud's admin interface, e.g. http://127.0.0.1:4100 (loopback only). */
  readonly adminURL: string;
  readonly sim: FollowingSim;
  /** How this node-sim names itself to the cloud (PUT /followers/<id>); default node-sim-<pid>. */
  readonly id?: string;
  /** How long one poll may wait for a change (default 30 s; the cloud allows 60 at most). */
  readonly pollTimeoutSeconds?: number;
  /** Retry delays after a failure: doubling from minMs to maxMs (default 200 ms to 10 s). */
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  readonly log?: ((msg: string) => void) | Logger;
}

interface WatchAnswer {
  cursor: string;
  instances: { name: string; state: 'running' | 'shutdown' | 'deleted' }[];
}

/** Checks the --cloud-admin URL: http on a 127.0.0.0/8 address. */
export function parseCloudAdminURL(raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`--cloud-admin must be a URL like http://127.0.0.1:4100, got ${JSON.stringify(raw)}`);
  }
  if (u.protocol !== 'http:' || !u.hostname.startsWith('127.')) {
    throw new Error(`--cloud-admin must be an http URL on a 127.0.0.0/8 address (the loopback cloud's admin interface), got ${JSON.stringify(raw)}`);
  }
  return u.origin;
}

const epochOf = (cursor: string): string => cursor.split(':')[0] ?? '';

/** Waits `ms`, or less when the follower stops. */
const sleep = (ms: number, signal: AbortSignal): Promise<void> => delay(ms, undefined, { signal }).catch(() => {});

/** Powers the sim's machines off and on as the cloud says, until `stop`. */
export function followCloud(opts: CloudFollowOptions): { stop(): Promise<void> } {
  const base = parseCloudAdminURL(opts.adminURL);
  const log = asLogger(opts.log);
  const id = opts.id ?? `node-sim-${process.pid}`;
  const timeoutS = opts.pollTimeoutSeconds ?? 30;
  const { minMs, maxMs } = opts.backoff ?? { minMs: 200, maxMs: 10_000 };
  const abort = new AbortController();
  const signal = abort.signal;

  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${path}`, {
      method,
      signal: AbortSignal.any([signal, AbortSignal.timeout((timeoutS + 15) * 1000)]),
      ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
    });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`${method} ${base}${path} answered ${res.status}: ${text.trim()}`);
    return JSON.parse(text) as T;
  };

  const apply = async (instances: WatchAnswer['instances']): Promise<void> => {
    const byName = new Map(instances.map((i) => [i.name, i.state]));
    for (const n of opts.sim.nodeList) {
      const state = byName.get(n.name);
      // Not in the cloud (yet): the cloud makes an instance when its CCM first sees the Node.
      if (state === undefined) continue;
      if (state === 'running') await opts.sim.powerOn(n.name);
      else await opts.sim.powerOff(n.name);
    }
  };

  const loop = async (): Promise<void> => {
    let cursor = '';
    let registered = '';
    let delay = minMs;
    let failing = false;
    while (!signal.aborted) {
      try {
        const q = `watch=${encodeURIComponent(cursor)}&timeoutSeconds=${timeoutS}&follower=${encodeURIComponent(id)}`;
        const r = await call<WatchAnswer>('GET', `/instances?${q}`);
        if (epochOf(r.cursor) !== registered) {
          // A cloud process not met before: tell it which instances this node-sim runs.
          await call('PUT', `/followers/${encodeURIComponent(id)}`, { nodes: opts.sim.nodeList.map((n) => n.name) });
          registered = epochOf(r.cursor);
          log.info('Following the cloud', 'admin', base, 'follower', id, 'instances', r.instances.length);
        }
        await apply(r.instances);
        cursor = r.cursor;
        delay = minMs;
        if (failing) log.info('Cloud link restored', 'admin', base);
        failing = false;
      } catch (e) {
        if (signal.aborted) return;
        // The cursor stays: the next answer comes at once and is applied again (level-based).
        log.error(e, 'Cloud link failed; retrying', 'admin', base, 'retryInMs', delay);
        failing = true;
        await sleep(delay, signal);
        delay = Math.min(delay * 2, maxMs);
      }
    }
  };
  const done = loop();
  return {
    async stop() {
      abort.abort();
      await done;
    },
  };
}
