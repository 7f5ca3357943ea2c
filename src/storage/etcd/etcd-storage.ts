import {
  ConflictError,
  ExpiredError,
  KeyExistsError,
  KeyNotFoundError,
  StorageError,
  StorageUnavailableError,
  prefixEnd,
} from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { WatchChannel } from '../cacher/watch-channel.js';
import {
  CompareResult,
  CompareTarget,
  EMPTY_REQUEST,
  WATCH_PROGRESS_REQUEST,
  decodeRangeResponse,
  decodeTxnResponse,
  decodeWatchResponse,
  encodeCompactionRequest,
  encodeRangeRequest,
  encodeTxnRequest,
  encodeWatchCreateRequest,
} from './etcd-proto.js';
import type { RangeRequest, RawKeyValue, TxnRequest, TxnResponse, WatchResponse } from './etcd-proto.js';
import { GrpcClient, type GrpcStream } from './grpc-client.js';

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
}

type ChangeEvent = Extract<WatchEvent, { type: 'put' | 'delete' }>;

const RANGE = '/etcdserverpb.KV/Range';
const TXN = '/etcdserverpb.KV/Txn';
const COMPACT = '/etcdserverpb.KV/Compact';
const WATCH = '/etcdserverpb.Watch/Watch';
const STATUS = '/etcdserverpb.Maintenance/Status';

/**
 * etcd backend. Every precondition is checked by etcd inside a transaction and every watch is an
 * etcd watch, so several kplane servers can share one etcd: nothing relies on in-process state.
 */
export class EtcdStorage implements Storage {
  private readonly client: GrpcClient;
  private readonly prefix: string;
  /** Byte length of the prefix in stored keys. */
  private readonly prefixBytes: number;
  private readonly streams = new Set<GrpcStream>();
  private closed = false;

  constructor(private readonly opts: EtcdStorageOptions) {
    this.client = new GrpcClient({ endpoints: opts.endpoints });
    this.prefix = opts.prefix ?? '';
    this.prefixBytes = Buffer.byteLength(this.prefix);
  }

  async get(key: string): Promise<KV | undefined> {
    const res = await this.range({ key: this.k(key) });
    const kv = res.kvs[0];
    return kv === undefined ? undefined : this.kvOf(kv);
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    const requested = opts.revision !== undefined && opts.revision > 0 ? opts.revision : 0;
    const limit = opts.limit !== undefined && opts.limit > 0 ? opts.limit : 0;
    const from = opts.startKey !== undefined && opts.startKey > prefix ? opts.startKey : prefix;
    const res = await this.range(
      { key: this.k(from), rangeEnd: this.k(prefixEnd(prefix)), revision: requested, limit, sortByKey: true },
      requested,
    );
    const items = res.kvs.map((kv) => this.kvOf(kv));
    const revision = requested > 0 ? requested : res.revision;
    if (!res.more) return { items, revision, more: false };
    return { items, revision, more: true, remaining: res.count - items.length };
  }

  async count(prefix: string): Promise<number> {
    const res = await this.range({ key: this.k(prefix), rangeEnd: this.k(prefixEnd(prefix)), countOnly: true });
    return res.count;
  }

  async create(key: string, value: Uint8Array): Promise<KV> {
    const k = this.k(key);
    const res = await this.txn({
      compare: [{ key: k, target: CompareTarget.Create, result: CompareResult.Equal, value: 0 }],
      success: [{ put: { key: k, value } }],
      failure: [],
    });
    if (!res.succeeded) throw new KeyExistsError(key);
    const rev = res.revision;
    return { key, value, createRevision: rev, modRevision: rev };
  }

  async update(key: string, value: Uint8Array, expectedModRevision: number): Promise<KV> {
    const k = this.k(key);
    const res = await this.txn({
      compare: [
        { key: k, target: CompareTarget.Mod, result: CompareResult.Equal, value: expectedModRevision },
        // Without this an expected revision of 0 would "update" a missing key into existence.
        { key: k, target: CompareTarget.Create, result: CompareResult.Greater, value: 0 },
      ],
      success: [{ put: { key: k, value, prevKv: true } }],
      failure: [{ range: { key: k } }],
    });
    if (!res.succeeded) throw this.preconditionFailure(key, res);
    const op = res.responses[0];
    const prev = op?.kind === 'put' ? op.prevKv : undefined;
    const rev = res.revision;
    return { key, value, createRevision: prev ? prev.createRevision : rev, modRevision: rev };
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ kv: KV; revision: number }> {
    const k = this.k(key);
    const res = await this.txn({
      compare: [
        { key: k, target: CompareTarget.Create, result: CompareResult.Greater, value: 0 },
        ...(expectedModRevision === undefined ? [] : [{ key: k, target: CompareTarget.Mod, result: CompareResult.Equal, value: expectedModRevision }]),
      ],
      success: [{ deleteRange: { key: k, prevKv: true } }],
      failure: [{ range: { key: k } }],
    });
    if (!res.succeeded) throw this.preconditionFailure(key, res);
    const op = res.responses[0];
    const prev = op?.kind === 'delete' ? op.prevKvs[0] : undefined;
    // Another writer deleted it between compare and delete is impossible inside one txn.
    if (prev === undefined) throw new KeyNotFoundError(key);
    return { kv: this.kvOf(prev), revision: res.revision };
  }

  watch(prefix: string, opts: WatchOptions): WatchChannel<WatchEvent> {
    let stream: GrpcStream | undefined;
    let lastMessageAt = Date.now();
    let progressTimer: NodeJS.Timeout | undefined;
    const send = (framed: Buffer): void => {
      if (stream !== undefined && !channel.isClosed) stream.write(framed);
    };
    const channel = new WatchChannel<WatchEvent>({
      prefix,
      capacity: this.opts.watchBufferCapacity ?? 100_000,
      signal: opts.signal,
      onClose: () => {
        if (progressTimer !== undefined) clearInterval(progressTimer);
        if (stream !== undefined) this.endStream(stream);
      },
      onRequestProgress: () => send(WATCH_PROGRESS_REQUEST),
    });
    if (channel.isClosed) return channel;

    const start = async (): Promise<void> => {
      if (this.closed) throw new StorageUnavailableError('etcd storage is closed');
      if (opts.afterRevision > 0) await this.assertNotCompacted(opts.afterRevision);
      if (channel.isClosed) return;
      const s = this.client.stream(WATCH, {
        onMessage: (message) => {
          lastMessageAt = Date.now();
          this.onWatchResponse(decodeWatchResponse(message), opts.afterRevision, channel);
        },
        onEnd: (err) => {
          this.streams.delete(s);
          channel.fail(new StorageUnavailableError(`etcd watch on ${prefix} broke: ${err.message}`, { cause: err }));
        },
      });
      stream = s;
      this.streams.add(s);
      s.write(
        encodeWatchCreateRequest({
          key: this.k(prefix),
          rangeEnd: this.k(prefixEnd(prefix)),
          startRevision: opts.afterRevision > 0 ? opts.afterRevision + 1 : 0,
          prevKv: true,
          progressNotify: true,
        }),
      );
      if (opts.progressIntervalMs !== undefined && opts.progressIntervalMs > 0) {
        const intervalMs = opts.progressIntervalMs;
        // etcd's own progress_notify interval is a server setting (10 min by default), so idle
        // watchers ask for progress themselves.
        progressTimer = setInterval(() => {
          if (Date.now() - lastMessageAt >= intervalMs) send(WATCH_PROGRESS_REQUEST);
        }, intervalMs);
        progressTimer.unref();
      }
    };
    start().catch((err: unknown) => channel.fail(err instanceof StorageError ? err : unavailable(err)));
    return channel;
  }

  async currentRevision(): Promise<number> {
    const res = await this.range({ key: this.k('/'), countOnly: true });
    return res.revision;
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
      await this.client.unary(COMPACT, encodeCompactionRequest(target, true));
    } catch (err) {
      // Someone (another kplane server, etcd's auto-compaction) already compacted at or past it.
      if (isCompactedError(err)) return;
      throw unavailable(err);
    }
  }

  async ping(): Promise<void> {
    const timeoutMs = this.opts.pingTimeoutMs ?? 2_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.client.unary(STATUS, EMPTY_REQUEST, { timeoutMs, idempotent: true }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer in ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      throw new StorageUnavailableError(`etcd at ${this.opts.endpoints.join(',')} is not answering: ${(err as Error).message}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  }

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
    const res = await this.txn({
      compare: [{ key, target: CompareTarget.Version, result: CompareResult.Equal, value: version }],
      success: [{ put: { key, value: Buffer.from(String(revision)) } }],
      failure: [{ range: { key } }],
    });
    const current = res.revision;
    if (!res.succeeded) {
      const op = res.responses[0];
      const kv = op?.kind === 'range' ? op.kvs[0] : undefined;
      this.compactState = { version: kv?.version ?? 0, revision: current };
      return;
    }
    this.compactState = { version: version + 1, revision: current };
    if (revision > 0) await this.compact(revision);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.compactTimer) clearInterval(this.compactTimer);
    for (const s of [...this.streams]) this.endStream(s);
    this.client.close();
  }

  private onWatchResponse(res: WatchResponse, afterRevision: number, channel: WatchChannel<WatchEvent>): void {
    if (res.canceled) {
      const compacted = res.compactRevision;
      channel.fail(
        compacted > 0
          ? new ExpiredError(afterRevision, compacted + 1)
          : new StorageUnavailableError(`etcd canceled the watch: ${res.cancelReason}`),
      );
      return;
    }
    if (res.created) return;
    if (res.events.length === 0) {
      // A progress response: every later event on this stream has a higher revision.
      channel.push({ type: 'progress', revision: res.revision });
      return;
    }
    for (const ev of res.events) {
      if (ev.kv === undefined) continue;
      const event = this.eventOf(ev.type, ev.kv, ev.prevKv);
      if (event.revision > afterRevision && !channel.push(event)) return;
    }
  }

  private eventOf(type: number, raw: RawKeyValue, rawPrev: RawKeyValue | undefined): ChangeEvent {
    const revision = raw.modRevision;
    const prevKv = rawPrev ? this.kvOf(rawPrev) : undefined;
    if (type === EVENT_DELETE) {
      // etcd's delete event carries only the key; the object's last state is the previous KV.
      const kv: KV = {
        key: raw.key.toString('utf8', this.prefixBytes),
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
      await this.client.unary(RANGE, encodeRangeRequest({ key: this.k('/'), revision, countOnly: true }), { idempotent: true });
      return true;
    } catch (err) {
      if (isCompactedError(err)) return false;
      if (isFutureRevisionError(err)) return true;
      throw unavailable(err);
    }
  }

  private preconditionFailure(key: string, res: TxnResponse): StorageError {
    const op = res.responses[0];
    const current = op?.kind === 'range' ? op.kvs[0] : undefined;
    return current === undefined ? new KeyNotFoundError(key) : new ConflictError(key, this.kvOf(current));
  }

  /** A Range, with compaction turned into ExpiredError and everything else into StorageUnavailableError. */
  private range(req: RangeRequest, revision = 0): Promise<ReturnType<typeof decodeRangeResponse>> {
    return this.call(RANGE, encodeRangeRequest(req), true, revision).then(decodeRangeResponse);
  }

  private txn(req: TxnRequest): Promise<TxnResponse> {
    return this.call(TXN, encodeTxnRequest(req), false, 0).then(decodeTxnResponse);
  }

  private async call(path: string, framed: Buffer, idempotent: boolean, revision: number): Promise<Buffer> {
    if (this.closed) throw new StorageUnavailableError('etcd storage is closed');
    try {
      return await this.client.unary(path, framed, { idempotent });
    } catch (err) {
      if (isCompactedError(err)) throw new ExpiredError(revision, await this.oldestRevision());
      throw unavailable(err);
    }
  }

  private endStream(s: GrpcStream): void {
    this.streams.delete(s);
    s.cancel();
  }

  private k(key: string): Buffer {
    return Buffer.from(this.prefix + key);
  }

  private kvOf(raw: RawKeyValue): KV {
    return {
      key: raw.key.toString('utf8', this.prefixBytes),
      value: raw.value,
      createRevision: raw.createRevision,
      modRevision: raw.modRevision,
    };
  }
}

export async function openEtcdStorage(opts: EtcdStorageOptions): Promise<EtcdStorage> {
  const s = new EtcdStorage(opts);
  if (opts.compactIntervalMs) s.startAutoCompaction(opts.compactIntervalMs);
  return s;
}

/** mvccpb.Event.EventType DELETE (PUT is 0). */
const EVENT_DELETE = 1;

/** The key kube-apiserver's compactor uses; sharing it lets kplane and kube servers coordinate. */
const COMPACT_REV_KEY = 'compact_rev_key';

function isCompactedError(err: unknown): boolean {
  return /required revision has been compacted/.test(String((err as Error | undefined)?.message ?? err));
}

function isFutureRevisionError(err: unknown): boolean {
  return /required revision is a future revision/.test(String((err as Error | undefined)?.message ?? err));
}

function unavailable(err: unknown): StorageUnavailableError {
  if (err instanceof StorageUnavailableError) return err;
  return new StorageUnavailableError(`etcd request failed: ${(err as Error | undefined)?.message ?? String(err)}`, { cause: err });
}

