// The API server's identity Lease (KEP-1965, the APIServerIdentity feature): each running server
// keeps a Lease `apiserver-<hash>` in kube-system, labelled `apiserver.kubernetes.io/identity=
// kube-apiserver`, renewed every 10 s with a holderIdentity that is new on every start, so that
// `kubectl -n kube-system get lease -l apiserver.kubernetes.io/identity=kube-apiserver` lists the
// servers and shows restarts. Leases last 3600 s as upstream's; a second loop (upstream's
// identity lease garbage collector, hourly) deletes those expired. Other components tell a live
// server by a recent renewTime, not by the long duration.
//
// The name hashes what identifies the server as upstream's does (length-prefixed hostname and
// "kube-apiserver", SHA-256, first 16 bytes, base32 without padding, lower case), but kplane hashes
// `host:port` instead of the hostname alone: several kplane servers often share one machine (tests,
// HA on one host), and upstream's name would make them share one Lease.
import { createHash, randomUUID } from 'node:crypto';
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { GVR, KubeClient } from '../client/types.js';
import { asLogger } from '../golang/klog.js';

const LEASES: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
const NAMESPACE = 'kube-system';
export const IDENTITY_LABEL = 'apiserver.kubernetes.io/identity';
const HOSTNAME_LABEL = 'kubernetes.io/hostname';
const SERVER_NAME = 'kube-apiserver';
/** IdentityLeaseDurationSeconds and IdentityLeaseRenewIntervalPeriod upstream. */
export const IDENTITY_LEASE_DURATION_SECONDS = 3600;
const RENEW_INTERVAL_MS = 10_000;
const GC_INTERVAL_MS = 3_600_000;

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

function base32NoPadLower(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

function lengthPrefixed(s: string): Buffer {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length);
  return Buffer.concat([len, b]);
}

/** `apiserver-` + the hash of `id` and the server name, as NewConfig builds the identity upstream. */
export function identityLeaseName(id: string, serverName = SERVER_NAME): string {
  const sum = createHash('sha256')
    .update(Buffer.concat([lengthPrefixed(id), lengthPrefixed(serverName)]))
    .digest();
  return `apiserver-${base32NoPadLower(sum.subarray(0, 16))}`;
}

/** metav1.MicroTime's format: RFC 3339 with microseconds. */
function microTime(d: Date): string {
  return `${d.toISOString().slice(0, 23)}000Z`;
}

export interface IdentityLeaseOptions {
  /** What the name hashes: kplane passes `hostname:port`. */
  readonly id: string;
  /** The `kubernetes.io/hostname` label. */
  readonly hostname: string;
  readonly renewIntervalMs?: number;
  readonly gcIntervalMs?: number;
  readonly log?: (msg: string) => void;
  /** For tests: the clock. */
  readonly now?: () => Date;
}

export interface IdentityLeaseController {
  readonly leaseName: string;
  readonly holderIdentity: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export function apiserverIdentityController(client: KubeClient, opts: IdentityLeaseOptions): IdentityLeaseController {
  const leaseName = identityLeaseName(opts.id);
  const holderIdentity = `${leaseName}_${randomUUID()}`;
  const now = opts.now ?? ((): Date => new Date());
  const log = asLogger(opts.log);
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<void>>();
  let stopped = false;

  const desired = (base: KubeObject | undefined): KubeObject => {
    const meta = (base?.metadata ?? {}) as Record<string, unknown>;
    return {
      ...(base ?? {}),
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        ...meta,
        name: leaseName,
        namespace: NAMESPACE,
        labels: { ...((meta['labels'] as Record<string, string> | undefined) ?? {}), [IDENTITY_LABEL]: SERVER_NAME, [HOSTNAME_LABEL]: opts.hostname },
      },
      spec: {
        ...(base?.['spec'] ?? {}),
        holderIdentity,
        leaseDurationSeconds: IDENTITY_LEASE_DURATION_SECONDS,
        renewTime: microTime(now()),
      },
    };
  };

  // The lease controller's sync: ensure the Lease exists, then renew it (a 409 retries next round).
  const renew = async (): Promise<void> => {
    try {
      let current: KubeObject | undefined;
      try {
        current = await client.get(LEASES, NAMESPACE, leaseName);
      } catch (e) {
        if (!(e instanceof StatusError && e.code === 404)) throw e;
      }
      if (current === undefined) await client.create(LEASES, NAMESPACE, desired(undefined));
      else await client.update(LEASES, NAMESPACE, desired(current));
    } catch (e) {
      log.error(e, 'Failed to update the apiserver identity lease', 'lease', leaseName);
    }
  };

  // The identity lease garbage collector: deletes expired identity Leases of any server.
  const collect = async (): Promise<void> => {
    try {
      const list = await client.list(LEASES, NAMESPACE, { labelSelector: `${IDENTITY_LABEL}=${SERVER_NAME}` });
      for (const lease of list.items) {
        const spec = (lease['spec'] ?? {}) as { renewTime?: string; leaseDurationSeconds?: number };
        const renewed = spec.renewTime ? Date.parse(spec.renewTime) : NaN;
        const duration = (spec.leaseDurationSeconds ?? 0) * 1000;
        if (!Number.isFinite(renewed) || renewed + duration >= now().getTime()) continue;
        const name = lease.metadata?.name;
        const resourceVersion = lease.metadata?.resourceVersion;
        if (!name || !resourceVersion) continue;
        try {
          await client.delete(LEASES, NAMESPACE, name, { preconditions: { resourceVersion } });
        } catch (e) {
          if (!(e instanceof StatusError && (e.code === 404 || e.code === 409))) throw e;
        }
      }
    } catch (e) {
      log.error(e, 'Failed to collect expired apiserver identity leases');
    }
  };

  const loop = (fn: () => Promise<void>, intervalMs: number): void => {
    const tick = (): void => {
      if (stopped) return;
      const p = fn().finally(() => {
        running.delete(p);
        if (stopped) return;
        const t = setTimeout(tick, intervalMs);
        t.unref();
        timers.push(t);
      });
      running.add(p);
    };
    tick();
  };

  return {
    leaseName,
    holderIdentity,
    async start() {
      await renew();
      const first = setTimeout(() => loop(renew, opts.renewIntervalMs ?? RENEW_INTERVAL_MS), opts.renewIntervalMs ?? RENEW_INTERVAL_MS);
      first.unref();
      timers.push(first);
      loop(collect, opts.gcIntervalMs ?? GC_INTERVAL_MS);
    },
    async stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all([...running]);
    },
  };
}
