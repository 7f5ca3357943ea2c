import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3, WatchClient } from 'etcd3';
import type { IKeyValue, IOptions, IRangeResponse, IWatchRequest, IWatchResponse, ITxnResponse } from 'etcd3';
import { ConflictError, ExpiredError, KeyExistsError, KeyNotFoundError, StorageError, StorageUnavailableError, prefixEnd } from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { WatchChannel } from '../cacher/watch-channel.js';

export interface EtcdStorageOptions {
  readonly endpoints: string[];
  /** Prepended to every key in etcd (e.g. '/kplane-a'), so several clusters can share one etcd. */
  readonly prefix?: string;
  /** Deadline of `ping` (ms). Default 2,000. */
  readonly pingTimeoutMs?: number;
  /**
   * Compact etcd's history this often (0 or undefined = never), keeping one interval of history.
   * Several servers on one etcd coordinate through `compact_rev_key`, as kube-apiserver does, so
   * only one of them compacts per interval.
   */
  readonly compactIntervalMs?: number;
  /** Events a watcher may fall behind before it is cut off with WatchOverflowError. Default 100,000. */
  readonly watchBufferCapacity?: number;
  /**
   * gRPC keepalive: a ping after this long without data on a connection (ms; default 30,000), and
   * the connection closed when its answer does not come within `keepaliveTimeoutMs` (default
   * 10,000), as kube-apiserver's clientv3 dials (DialKeepAliveTime, DialKeepAliveTimeout). Without
   * it a call sent to a member that stopped answering (SIGSTOP, a stalled disk or network) waits
   * until the member resumes. etcd refuses pings more often than every 5 s (its
   * --grpc-keepalive-min-time), so do not go below 5,000.
   */
  readonly keepaliveTimeMs?: number;
  readonly keepaliveTimeoutMs?: number;
  /**
   * Deadline of each get, list, count and write (ms; default 60,000, kube-apiserver's default
   * --request-timeout, which bounds its etcd calls through the request's context), retries
   * included. A call past it fails with StorageUnavailableError (a 503 or 504 to the client).
   */
  readonly callTimeoutMs?: number;
  /** Notices for the operator, e.g. that the etcd version rules out watch progress requests. */
  readonly onNotice?: (message: string) => void;
}

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;
type WatchStream = Awaited<ReturnType<WatchClient['watch']>>;

/**
 * etcd backend. Every precondition is checked by etcd inside a transaction and every watch is an
 * etcd watch, so several kplane servers can share one etcd: nothing relies on in-process state.
 */
export class EtcdStorage implements Storage {
  private readonly client: Etcd3;
  /**
   * Transactions go through a client that retries only a call that never reached etcd. etcd3's
   * default policy retries any recoverable error on another member, which repeats a transaction
   * whose answer was lost when a member died: the repeat then fails the precondition the first
   * attempt changed, and a write etcd applied was answered 404 or 409. client-go's clientv3 retries
   * a write only when it was not sent; so does this.
   */
  private readonly writeClient: Etcd3;
  private readonly watchClient: WatchClient;
  private readonly prefix: string;
  private readonly streams = new Set<WatchStream>();
  private closed = false;
  /** Per endpoint, once its version is known: whether its watch progress requests are safe. */
  private readonly progressSupport = new Map<string, boolean>();
  private readonly versionChecks = new AbortController();
  private readonly grpcOptions: NonNullable<IOptions['grpcOptions']>;

  constructor(private readonly opts: EtcdStorageOptions) {
    this.grpcOptions = {
      'grpc.keepalive_time_ms': opts.keepaliveTimeMs ?? 30_000,
      'grpc.keepalive_timeout_ms': opts.keepaliveTimeoutMs ?? 10_000,
      'grpc.keepalive_permit_without_calls': 1,
    };
    this.client = new Etcd3({ hosts: opts.endpoints, grpcOptions: this.grpcOptions });
    this.writeClient = new Etcd3({ hosts: opts.endpoints, grpcOptions: this.grpcOptions, faultHandling: { global: RETRY_UNSENT } });
    // etcd3's own watch manager neither forwards progress responses nor lets us send progress
    // requests, and it silently resumes after errors; we drive the Watch RPC ourselves instead.
    // The connection pool is private in the typings, hence the cast.
    const pool = (this.client as unknown as { pool: ConstructorParameters<typeof WatchClient>[0] }).pool;
    this.watchClient = new WatchClient(pool);
    this.prefix = opts.prefix ?? '';
    for (const endpoint of opts.endpoints) void this.checkProgressSupport(endpoint);
  }

  /**
   * kube's RequestWatchProgress feature check: true once every endpoint reported a version whose
   * progress responses follow the events (3.4.31+, 3.5.13+); false before the versions are known.
   * etcd 3.4.23 (Debian's) answers a progress request on a watch that is still catching up with
   * the current revision before sending the older events: a cache that believed it dropped them.
   */
  watchProgressRequestsSafe(): boolean {
    return this.progressSupport.size === this.opts.endpoints.length && [...this.progressSupport.values()].every(Boolean);
  }

  /** Asks `endpoint` for its version, retrying with backoff (10 ms doubling to 15 s) until it answers. */
  private async checkProgressSupport(endpoint: string): Promise<void> {
    const signal = this.versionChecks.signal;
    let delayMs = 10;
    while (!signal.aborted) {
      const client = new Etcd3({ hosts: endpoint });
      try {
        const status = await client.maintenance.status({ deadline: Date.now() + 5_000 });
        const supported = progressRequestsSafeIn(status.version);
        this.progressSupport.set(endpoint, supported);
        if (!supported) {
          this.opts.onNotice?.(
            `etcd ${status.version} at ${endpoint} may answer watch progress requests ahead of the events (etcd-io/etcd#15220, needs 3.4.31+ or 3.5.13+): watch caches do not ask it for progress, and consistent lists they cannot prove fresh are read from etcd`,
          );
        }
        return;
      } catch {
        await sleep(delayMs, undefined, { signal }).catch(() => undefined);
        delayMs = Math.min(delayMs * 2, 15_000);
      } finally {
        client.close();
      }
    }
  }

  async get(key: string): Promise<KV | undefined> {
    const res = await this.call((o) => this.client.kv.range({ key: this.k(key) }, o));
    const kv = res.kvs[0];
    return kv === undefined ? undefined : this.kvOf(kv);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const requested = opts.revision !== undefined && opts.revision > 0 ? opts.revision : 0;
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : 0;
    const from = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix;
    const res = await this.call(
      (o) =>
        this.client.kv.range(
          {
            key: this.k(from),
            range_end: this.k(prefixEnd(prefix)),
            revision: requested,
            limit,
            sort_order: 'Ascend',
            sort_target: 'Key',
          },
          o,
        ),
      requested,
    );
    const items = res.kvs.map((kv) => this.kvOf(kv));
    const revision = requested > 0 ? requested : Number(res.header.revision);
    if (!res.more) return { items, revision, more: false };
    return { items, revision, more: true, remaining: Number(res.count) - items.length };
  }

  async count(prefix: string): Promise<number> {
    const res = await this.call((o) => this.client.kv.range({ key: this.k(prefix), range_end: this.k(prefixEnd(prefix)), count_only: true }, o));
    return Number(res.count);
  }

  async create(key: string, value: Uint8Array): Promise<KV> {
    const k = this.k(key);
    const res = await this.call((o) =>
      this.writeClient.kv.txn(
        {
          compare: [{ key: k, target: 'Create', result: 'Equal', create_revision: 0 }],
          success: [{ request_put: { key: k, value: toBuffer(value) } }],
          failure: [],
        },
        o,
      ),
    );
    if (!res.succeeded) throw new KeyExistsError(key);
    const rev = Number(res.header.revision);
    return { key, value, createRevision: rev, modRevision: rev };
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV> {
    const k = this.k(key);
    const res = await this.call((o) =>
      this.writeClient.kv.txn(
        {
          compare: [
            { key: k, target: 'Mod', result: 'Equal', mod_revision: expectedModRevision },
            // Without this an expected revision of 0 would "update" a missing key into existence.
            { key: k, target: 'Create', result: 'Greater', create_revision: 0 },
          ],
          success: [{ request_put: { key: k, value: toBuffer(value), prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        },
        o,
      ),
    );
    if (!res.succeeded) throw this.preconditionFailure(key, res);
    const prev = res.responses[0]?.response_put?.prev_kv;
    const rev = Number(res.header.revision);
    return { key, value, createRevision: prev ? Number(prev.create_revision) : rev, modRevision: rev };
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }> {
    const k = this.k(key);
    const res = await this.call((o) =>
      this.writeClient.kv.txn(
        {
          compare: [
            { key: k, target: 'Create', result: 'Greater', create_revision: 0 },
            ...(expectedModRevision === undefined ? [] : [{ key: k, target: 'Mod' as const, result: 'Equal' as const, mod_revision: expectedModRevision }]),
          ],
          success: [{ request_delete_range: { key: k, prev_kv: true } }],
          failure: [{ request_range: { key: k } }],
        },
        o,
      ),
    );
    if (!res.succeeded) throw this.preconditionFailure(key, res);
    const prev = res.responses[0]?.response_delete_range?.prev_kvs[0];
    // Another writer deleted it between compare and delete is impossible inside one txn.
    if (prev === undefined) throw new KeyNotFoundError(key);
    return { kv: this.kvOf(prev), revision: Number(res.header.revision) };
  }

  watch(prefix: string, opts: WatchOptions): WatchChannel<WatchEvent> {
    let stream: WatchStream | undefined;
    let lastMessageAt = Date.now();
    let progressTimer: NodeJS.Timeout | undefined;
    const send = (req: IWatchRequest): void => {
      if (stream !== undefined && !channel.isClosed) stream.write(req);
    };
    const channel = new WatchChannel<WatchEvent>({
      prefix,
      capacity: this.opts.watchBufferCapacity ?? 100_000,
      signal: opts.signal,
      onClose: () => {
        if (progressTimer !== undefined) clearInterval(progressTimer);
        if (stream !== undefined) this.endStream(stream);
      },
      // On an etcd that may answer ahead of the events, a progress response could make the
      // consumer skip events still to come: ask nothing (kube-apiserver does the same).
      onRequestProgress: () => {
        if (this.watchProgressRequestsSafe()) send({ progress_request: {} });
      },
    });
    if (channel.isClosed) return channel;

    const start = async (): Promise<void> => {
      if (this.closed) throw new StorageUnavailableError('etcd storage is closed');
      if (opts.afterRevision > 0) await this.assertNotCompacted(opts.afterRevision);
      const s = await this.watchClient.watch();
      if (channel.isClosed) {
        this.endStream(s);
        return;
      }
      stream = s;
      this.streams.add(s);
      s.on('data', (res: IWatchResponse) => {
        lastMessageAt = Date.now();
        this.onWatchResponse(res, opts.afterRevision, channel);
      });
      s.on('error', (err: unknown) => channel.fail(new StorageUnavailableError(`etcd watch on ${prefix} broke: ${String(err)}`, { cause: err })));
      s.on('end', () => channel.fail(new StorageUnavailableError(`etcd watch stream on ${prefix} ended`)));
      s.write({
        create_request: {
          key: this.k(prefix),
          range_end: this.k(prefixEnd(prefix)),
          ...(opts.afterRevision > 0 ? { start_revision: opts.afterRevision + 1 } : {}),
          prev_kv: true,
          progress_notify: true,
        },
      });
      if (opts.progressIntervalMs !== undefined && opts.progressIntervalMs > 0) {
        const intervalMs = opts.progressIntervalMs;
        // etcd's own progress_notify interval is a server setting (10 min by default), so idle
        // watchers ask for progress themselves.
        progressTimer = setInterval(() => {
          if (Date.now() - lastMessageAt >= intervalMs && this.watchProgressRequestsSafe()) send({ progress_request: {} });
        }, intervalMs);
        progressTimer.unref();
      }
    };
    start().catch((err: unknown) => channel.fail(err instanceof StorageError ? err : unavailable(err)));
    return channel;
  }

  async currentRevision(): Promise<number> {
    const res = await this.call((o) => this.client.kv.range({ key: this.k('/'), count_only: true }, o));
    return Number(res.header.revision);
  }

  /**
   * etcd does not report its compacted revision directly; a range at revision R fails exactly when
   * R is below it, so a binary search over ranges finds it (about log2(current) small requests).
   */
  async oldestRevision(): Promise<number> {
    const current = await this.currentRevision();
    if (await this.readableAt(1)) return 1;
    let low = 1; // not readable
    let high = current; // readable
    while (high - low > 1) {
      const mid = Math.floor((low + high) / 2);
      if (await this.readableAt(mid)) high = mid;
      else low = mid;
    }
    return high + 1;
  }

  async compact(revision: number): Promise<void> {
    const current = await this.currentRevision();
    const target = Math.min(revision, current);
    if (target <= 0) return;
    try {
      await this.client.kv.compact({ revision: target, physical: true });
    } catch (err) {
      // Someone (another kplane server, etcd's auto-compaction) already compacted at or past it.
      if (isCompactedError(err)) return;
      throw unavailable(err);
    }
    for (const listener of this.compactListeners) listener(target);
  }

  /**
   * Calls `listener` after each compaction this server runs (its own rounds included). Compactions
   * by other servers sharing the etcd are not seen; a cache then keeps its history, as kube's does.
   */
  onCompacted(listener: (revision: number) => void): () => void {
    this.compactListeners.add(listener);
    return () => this.compactListeners.delete(listener);
  }

  private readonly compactListeners = new Set<(revision: number) => void>();

  /**
   * Whether etcd serves: a linearizable read of `<prefix>/health`, as kube-apiserver's etcd check
   * does. With several members, each is asked on a client of its own and one answer is enough: a
   * member that answers a linearizable read is in touch with a leader and a quorum. Through the
   * shared pool the read would land on a random member, and a hung one (SIGSTOP, a stalled disk)
   * would fail the check while the cluster serves.
   */
  async ping(): Promise<void> {
    const timeoutMs = this.opts.pingTimeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    const deadline = Date.now() + timeoutMs;
    const read = (c: Etcd3): Promise<unknown> => c.kv.range({ key: this.k('/health'), keys_only: true }, { deadline });
    try {
      const clients =
        this.opts.endpoints.length > 1
          ? (this.pingClients ??= this.opts.endpoints.map(
              (e) => new Etcd3({ hosts: e, grpcOptions: this.grpcOptions, faultHandling: { host: () => ONCE, global: ONCE } }),
            ))
          : [this.client];
      await Promise.race([
        clients.length === 1 ? read(clients[0]!) : Promise.any(clients.map(read)),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
      this.lastPingFailure = undefined;
    } catch (caught) {
      const errors = caught instanceof AggregateError ? caught.errors : [caught];
      const whys = errors.map((err) => {
        // grpc-js ends some messages with an empty `Resolution note:`.
        let why = (err as Error).message.replace(/\s*Resolution note:\s*$/, '').trim();
        // etcd3's circuit breaker refuses calls for a while after repeated failures; the failure that
        // opened it says more than the refusal does.
        if (isBrokenCircuit(err)) why = this.lastPingFailure === undefined ? why : `${this.lastPingFailure} (the client is pausing after repeated failures)`;
        return why;
      });
      const why = [...new Set(whys)].join('; ');
      if (!errors.some(isBrokenCircuit)) this.lastPingFailure = why;
      throw new StorageUnavailableError(`etcd at ${this.opts.endpoints.join(',')} is not answering: ${why}`, { cause: caught });
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * One client per member for `ping`, made on its first call (with several members only), each
   * call tried once: etcd3's default retries and circuit breaker would keep the check failing for
   * 5 s after a member that lost its leader for a moment has a leader again.
   */
  private pingClients: Etcd3[] | undefined;

  /** What the last failed ping said, other than the circuit breaker's refusal. */
  private lastPingFailure: string | undefined;
  private compactTimer: NodeJS.Timeout | undefined;
  /** Version of compact_rev_key and the revision seen at the previous compaction round. */
  private compactState = { version: 0, revision: 0 };

  /** Starts the coordinated compaction loop (see `compactIntervalMs`). */
  startAutoCompaction(intervalMs: number): void {
    if (this.compactTimer || intervalMs <= 0) return;
    this.compactTimer = setInterval(() => {
      this.compactRound().catch(() => {
        // etcd unreachable: /readyz reports it; the next round tries again.
      });
    }, intervalMs);
    this.compactTimer.unref();
  }

  /**
   * One round of kube's compactor: whoever bumps compact_rev_key from the version it last saw
   * compacts at the revision observed one round earlier; the others only learn the new version.
   */
  async compactRound(): Promise<void> {
    const key = Buffer.from(COMPACT_REV_KEY);
    const { version, revision } = this.compactState;
    const res = await this.client.kv.txn({
      compare: [{ key, target: 'Version', result: 'Equal', version }],
      success: [{ request_put: { key, value: Buffer.from(String(revision)) } }],
      failure: [{ request_range: { key } }],
    });
    const current = Number(res.header.revision);
    if (!res.succeeded) {
      const kv = res.responses[0]?.response_range?.kvs[0];
      this.compactState = { version: Number(kv?.version ?? 0), revision: current };
      return;
    }
    this.compactState = { version: version + 1, revision: current };
    if (revision > 0) await this.compact(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.versionChecks.abort();
    if (this.compactTimer) clearInterval(this.compactTimer);
    for (const s of [...this.streams]) this.endStream(s);
    this.client.close();
    this.writeClient.close();
    for (const c of this.pingClients ?? []) c.close();
  }

  private onWatchResponse(res: IWatchResponse, afterRevision: number, channel: WatchChannel<WatchEvent>): void {
    if (res.canceled) {
      const compacted = Number(res.compact_revision);
      channel.fail(
        compacted > 0 ? new ExpiredError(afterRevision, compacted + 1) : new StorageUnavailableError(`etcd canceled the watch: ${res.cancel_reason}`),
      );
      return;
    }
    if (res.created) return;
    if (res.events.length === 0) {
      // A progress response: every later event on this stream has a higher revision.
      channel.push({ type: 'progress', revision: Number(res.header.revision) });
      return;
    }
    for (const ev of res.events) {
      const event = this.eventOf(ev.type, ev.kv, ev.prev_kv);
      if (event.revision > afterRevision && !channel.push(event)) return;
    }
  }

  private eventOf(type: string, raw: IKeyValue, rawPrev: IKeyValue | undefined | null): ChangeEvent {
    const revision = Number(raw.mod_revision);
    const prevKv = rawPrev ? this.kvOf(rawPrev) : undefined;
    if (type === 'Delete') {
      // etcd's delete event carries only the key; the object's last state is the previous KV.
      const kv: KV = {
        key: this.unk(raw.key),
        value: prevKv?.value ?? new Uint8Array(0),
        createRevision: prevKv?.createRevision ?? 0,
        modRevision: revision,
      };
      return prevKv ? { type: 'delete', kv, prevKv, revision } : { type: 'delete', kv, revision };
    }
    const kv = this.kvOf(raw);
    return prevKv ? { type: 'put', kv, prevKv, revision } : { type: 'put', kv, revision };
  }

  private async assertNotCompacted(afterRevision: number): Promise<void> {
    if (await this.readableAt(afterRevision)) return;
    throw new ExpiredError(afterRevision, await this.oldestRevision());
  }

  /** False when `revision` is compacted; a future revision counts as readable. */
  private async readableAt(revision: number): Promise<boolean> {
    try {
      await this.client.kv.range({ key: this.k('/'), revision, count_only: true });
      return true;
    } catch (err) {
      if (isCompactedError(err)) return false;
      if (isFutureRevisionError(err)) return true;
      throw unavailable(err);
    }
  }

  private preconditionFailure(key: string, res: ITxnResponse): StorageError {
    const current = res.responses[0]?.response_range?.kvs[0];
    return current === undefined ? new KeyNotFoundError(key) : new ConflictError(key, this.kvOf(current));
  }

  /** Runs an etcd call, turning compaction into ExpiredError and everything else into StorageUnavailableError. */
  /**
   * One unary call, with a deadline over all of its retries (`callTimeoutMs`): a call must not wait
   * forever on a member that accepts connections but does not answer.
   */
  private async call<T extends IRangeResponse | ITxnResponse>(fn: (options: { deadline: number }) => Promise<T>, revision = 0): Promise<T> {
    if (this.closed) throw new StorageUnavailableError('etcd storage is closed');
    try {
      return await fn({ deadline: Date.now() + (this.opts.callTimeoutMs ?? 60_000) });
    } catch (err) {
      if (isCompactedError(err)) throw new ExpiredError(revision, await this.oldestRevision());
      throw unavailable(err);
    }
  }

  private endStream(s: WatchStream): void {
    this.streams.delete(s);
    // The typings omit EventEmitter's methods; the object is a grpc-js ClientDuplexStream.
    const emitter = s as unknown as NodeJS.EventEmitter;
    emitter.removeAllListeners('data');
    emitter.removeAllListeners('end');
    emitter.removeAllListeners('error');
    // A cancelled call still emits 'error' (CANCELLED); nobody listens any more.
    emitter.on('error', () => undefined);
    s.cancel();
  }

  private k(key: string): Buffer {
    return Buffer.from(this.prefix + key);
  }

  private unk(raw: Buffer): string {
    return raw.toString('utf8').slice(this.prefix.length);
  }

  private kvOf(raw: IKeyValue): KV {
    return {
      key: this.unk(raw.key),
      value: ownBytes(raw.value),
      createRevision: Number(raw.create_revision),
      modRevision: Number(raw.mod_revision),
    };
  }
}

export async function openEtcdStorage(opts: EtcdStorageOptions): Promise<EtcdStorage> {
  const s = new EtcdStorage(opts);
  if (opts.compactIntervalMs) s.startAutoCompaction(opts.compactIntervalMs);
  return s;
}

/** The key kube-apiserver's compactor uses; sharing it lets kplane and kube servers coordinate. */
const COMPACT_REV_KEY = 'compact_rev_key';

/** Whether an etcd server of `version` answers progress requests only after the events below it (see watchProgressRequestsSafe). */
export function progressRequestsSafeIn(version: string): boolean {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (m === null) return false;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 3) return major > 3;
  if (minor < 4) return false;
  if (minor === 4) return patch >= 31;
  if (minor === 5) return patch >= 13;
  return true;
}

function isCompactedError(err: unknown): boolean {
  return /required revision has been compacted/.test(String((err as Error | undefined)?.message ?? err));
}

/** An etcd3 fault-handling policy that runs each call once (etcd3 only ever calls `execute`). */
const ONCE = { execute: <T>(fn: () => Promise<T>): Promise<T> => fn() } as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * A policy for writes: a call refused before it was sent (no connection to the member, its circuit
 * breaker open) is tried again, on another member, up to 3 times; anything else is answered as it
 * failed: the write may or may not have been applied, and the client (not the server) decides.
 */
const RETRY_UNSENT = {
  async execute<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        if (attempt >= 3 || !neverSent(err)) throw err;
      }
    }
  },
} as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

function neverSent(err: unknown): boolean {
  return isBrokenCircuit(err) || /No connection established|ECONNREFUSED|ENOTFOUND/.test(String((err as Error | undefined)?.message ?? err));
}

function isBrokenCircuit(err: unknown): boolean {
  return (
    (err as { name?: string } | undefined)?.name === 'BrokenCircuitError' || /circuit breaker is open/.test(String((err as Error | undefined)?.message ?? err))
  );
}

function isFutureRevisionError(err: unknown): boolean {
  return /required revision is a future revision/.test(String((err as Error | undefined)?.message ?? err));
}

function unavailable(err: unknown): StorageUnavailableError {
  if (err instanceof StorageUnavailableError) return err;
  return new StorageUnavailableError(`etcd request failed: ${(err as Error | undefined)?.message ?? String(err)}`, { cause: err });
}

/**
 * A copy of `view` in memory of its own. grpc-js decodes each message into one Buffer (a slice of
 * Node's shared 8 KiB pool when under 4 KiB) and protobufjs hands out values as views into it, so
 * a value the watch cache keeps (its objects, its ring of 10,000 events per resource, each with
 * the previous value too) kept a whole pool slab or list response alive: in the soak each cached
 * Lease renewal pinned its own 8 KiB slab, and RSS rose by about 1.5-2.5 MiB a minute for as long
 * as the rings were filling. A copy costs the value's bytes once; SQLite's values are copies already.
 */
function ownBytes(view: Uint8Array): Buffer {
  const copy = new Uint8Array(view.byteLength);
  copy.set(view);
  return Buffer.from(copy.buffer, 0, copy.byteLength);
}

function toBuffer(value: Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}
