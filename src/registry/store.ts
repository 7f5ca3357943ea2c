// The generic store: kube REST semantics over the Storage contract, for every resource.
// Kind-specific behaviour comes from the Strategy; this file never branches on kind.
import { randomUUID } from 'node:crypto';
import {
  CONTINUE_EXPIRED_MESSAGE,
  StatusError,
  alreadyExists,
  badRequest,
  conflict,
  fieldIssue,
  internalError,
  invalid,
  notFound,
  resourceExpired,
  serviceUnavailable,
  toStatusError,
  tooLargeResourceVersion,
  tooOldResourceVersion,
  type FieldIssue,
} from '../apimachinery/errors.js';
import type { ResourceDescriptor } from '../apimachinery/resource.js';
import { rfc3339 } from '../apimachinery/times.js';
import { apiVersionOf, type KubeList, type KubeObject, type ObjectMeta, type Status } from '../apimachinery/types.js';
import { generateName as generateNameFrom } from '../apimachinery/validation/names.js';
import { nameIsDNSSubdomain } from '../apimachinery/validation/names.js';
import {
  FINALIZER_DELETE_DEPENDENTS,
  FINALIZER_ORPHAN_DEPENDENTS,
  dropEmptyObjectMetaFields,
  withGcFinalizers,
  finalizerWarnings,
  prepareObjectMetaForUpdate,
  validateObjectMetaCreate,
  validateObjectMetaUpdate,
  type FinalizerNamePolicy,
} from '../apimachinery/validation/objectmeta.js';
import { goQuote, NumError, parseGoUint } from '../golang/strconv.js';
import {
  ConflictError,
  ExpiredError,
  KeyExistsError,
  KeyNotFoundError,
  StorageUnavailableError,
  type KV,
  type Storage,
  type WatchEvent,
} from '../storage/storage.js';
import { StorageDecoder, cloneObject, encodeForStorage } from './codec.js';
import { decodeContinue, encodeContinue } from './continue-token.js';
import { splicable, splicedLength, writeSpliced } from './json-splice.js';
import { compilePredicate, type Predicate } from './predicate.js';
import type { FinishWrite, Strategy } from './strategy.js';
import type { DeleteOptions } from './delete-options.js';
import { stringifyJSON } from '../golang/json-int64.js';
import { dropDisabledFields, type FeatureLookup, type GatedField } from './gated-fields.js';

export type { DeleteOptions } from './delete-options.js';

export interface VersionConverter {
  /** Served version → storage version (e.g. events.k8s.io/v1 Event → core/v1 Event). */
  toStorage(obj: KubeObject): KubeObject;
  /** Storage version → served version; returns `obj` itself when the served form is the stored one. */
  fromStorage(obj: KubeObject): KubeObject;
  /**
   * Conversion that calls out (a CRD's conversion webhook), run before the pair above: the store
   * awaits it for every object it reads or writes, and hands its results to `fromStorage` /
   * `toStorage`. `fromStorage` converts many at once (a list page is one call); each answers
   * objects already in the target version as they are. Throws a StatusError when conversion fails.
   */
  readonly external?: {
    toStorage(obj: KubeObject): Promise<KubeObject>;
    fromStorage(objs: readonly KubeObject[]): Promise<KubeObject[]>;
  };
}

export interface StoreOptions {
  readonly descriptor: ResourceDescriptor;
  readonly strategy: Strategy;
  readonly storage: Storage;
  /** Key prefix of the resource, ending in '/': `/registry/configmaps/`. */
  readonly keyPrefix: string;
  readonly clock?: () => Date;
  readonly converter?: VersionConverter;
  /** How long a list/get with resourceVersion N > current waits before 504 (ms). */
  readonly freshnessWaitMs?: number;
  /**
   * A garbage collector runs: DELETE adds or removes the `orphan` and `foregroundDeletion`
   * finalizers per propagationPolicy/orphanDependents (upstream's EnableGarbageCollection).
   */
  readonly garbageCollection?: boolean;
  /** Fields dropped on write while their feature is off (see ResourceRegistration.gatedFields). */
  readonly gatedFields?: readonly GatedField[];
  /** The gate asked for `gatedFields`. */
  readonly features?: FeatureLookup;
}

/** rest.GarbageCollectionPolicy: what a DELETE without options does to dependents. */
export type GarbageCollectionPolicy = 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';

export interface ListOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
  /** Only validated: upstream forbids it for lists (a 422). */
  readonly sendInitialEvents?: boolean;
}

export interface WatchOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly sendInitialEvents?: boolean;
  readonly continue?: string;
  readonly signal: AbortSignal;
  readonly progressIntervalMs?: number;
  /** The WatchList feature gate; off, `sendInitialEvents` is refused (a 422). Default on. */
  readonly watchListEnabled?: boolean;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
export interface ApiWatchEvent {
  readonly type: WatchEventType;
  readonly object: KubeObject;
}

export interface WriteOptions {
  readonly dryRun?: boolean;
  readonly fieldManager?: string;
  /** Validating admission, run after the strategy's own validation (kube's createValidation/updateValidation). */
  readonly validate?: (obj: KubeObject, old: KubeObject | undefined) => void | Promise<void>;
}

export interface UpdateResult {
  readonly object: KubeObject;
  readonly created: boolean;
  readonly warnings: string[];
  /** The answer as JSON bytes spliced from the stored value, when it is served as stored (see getJSON). */
  json?(): Buffer | undefined;
}

/** Produces the object to store from the current one (undefined when absent). May throw StatusError. */
export type UpdateFn = (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>;

const NEWLINE = 0x0a;
const MAX_UPDATE_RETRIES = 16;
/** How many converted watch events a store keeps for its other watchers (GenericStore.convertedEvents). */
const CONVERTED_EVENTS = 256;

const allocUnsafe = (size: number): Buffer => Buffer.allocUnsafe(size);

/** The size of listJSONChunks' chunks unless an item needs more. */
export const LIST_CHUNK_BYTES = 256 * 1024;

/** A piece of a list's JSON: `bytes` is the start of `taken`, the buffer it was written into. */
export interface ListJSONChunk {
  readonly bytes: Buffer;
  readonly taken: Buffer;
}

/** Deletes in flight per deletecollection request. */
const DELETE_COLLECTION_WORKERS = 32;

export class GenericStore {
  readonly descriptor: ResourceDescriptor;
  readonly strategy: Strategy;
  readonly groupResource: { group: string; resource: string };
  private readonly storage: Storage;
  private readonly keyPrefix: string;
  private readonly clock: () => Date;
  private readonly converter: VersionConverter | undefined;
  private readonly freshnessWaitMs: number;
  private readonly garbageCollection: boolean;
  private readonly gatedFields: readonly GatedField[];
  private readonly features: FeatureLookup | undefined;
  private readonly decoder = new StorageDecoder();
  /**
   * Watch events converted by the external converter, shared by the watchers of this version (by
   * key, revision and the revision shown), as upstream's per-version watch cache holds objects
   * converted once: without it every watcher would call the conversion webhook for every event.
   * The last few only; a conversion that fails is forgotten, so the next reader tries again.
   */
  private readonly convertedEvents = new Map<string, Promise<KubeObject>>();

  constructor(opts: StoreOptions) {
    this.descriptor = opts.descriptor;
    this.strategy = opts.strategy;
    this.storage = opts.storage;
    this.keyPrefix = opts.keyPrefix;
    this.clock = opts.clock ?? (() => new Date());
    this.converter = opts.converter;
    this.freshnessWaitMs = opts.freshnessWaitMs ?? 3000;
    this.garbageCollection = opts.garbageCollection ?? false;
    this.gatedFields = opts.gatedFields ?? [];
    this.features = opts.features;
    this.groupResource = { group: opts.descriptor.group, resource: opts.descriptor.plural };
  }

  get apiVersion(): string {
    return apiVersionOf(this.descriptor.group, this.descriptor.version);
  }

  // ---- keys -------------------------------------------------------------------------------

  private key(namespace: string | undefined, name: string): string {
    // NamespaceKeyFunc / NoNamespaceKeyFunc: a name that is no single path segment never makes a key.
    const bad = pathSegmentNameIssues(name);
    if (bad.length) throw badRequest(`Name parameter invalid: ${goQuote(name)}: ${bad.join(';')}`);
    return this.strategy.namespaced ? `${this.keyPrefix}${namespace ?? ''}/${name}` : `${this.keyPrefix}${name}`;
  }

  private listPrefix(namespace: string | undefined): string {
    return this.strategy.namespaced && namespace ? `${this.keyPrefix}${namespace}/` : this.keyPrefix;
  }

  // ---- decoding -------------------------------------------------------------------------

  /** Stored value → served object (shared, read-only). */
  /** `remember: false` for the answer to a write (see StorageDecoder). */
  private fromKV(kv: KV, revision?: number, remember = true): KubeObject {
    const stored = this.decoder.decode(kv, revision, remember);
    return this.converter ? this.converter.fromStorage(stored) : stored;
  }

  /** Stored values → served objects, through an external converter when there is one (one call for all). */
  private async fromKVs(kvs: readonly KV[], revision?: number, remember = true): Promise<KubeObject[]> {
    const ext = this.converter?.external;
    if (!ext) return kvs.map((kv) => this.fromKV(kv, revision, remember));
    if (kvs.length === 0) return [];
    const converted = await ext.fromStorage(kvs.map((kv) => this.decoder.decode(kv, revision, remember)));
    return converted.map((o) => this.converter!.fromStorage(o));
  }

  /** One stored value → served object (fromKV, awaiting an external converter). */
  private async read(kv: KV, revision?: number, remember = true): Promise<KubeObject> {
    if (!this.converter?.external) return this.fromKV(kv, revision, remember);
    return (await this.fromKVs([kv], revision, remember))[0]!;
  }

  /**
   * An object of this resource in another version served from the same storage, converted to this
   * one (through the storage version, calling a conversion webhook where the converters do; the
   * apiVersion set to this one's). For admission webhooks matched by an equivalent version.
   */
  async convertToServed(obj: KubeObject, from: GenericStore): Promise<KubeObject> {
    const stored = await from.storedForm(obj);
    const ext = this.converter?.external;
    const converted = ext ? (await ext.fromStorage([stored]))[0]! : stored;
    const served = this.converter ? this.converter.fromStorage(converted) : converted;
    const d = this.descriptor;
    const apiVersion = d.group ? `${d.group}/${d.version}` : d.version;
    return served.apiVersion === apiVersion ? served : { ...served, apiVersion };
  }

  /** The object as it is stored: in the storage version when a converter says so. */
  private async storedForm(obj: KubeObject): Promise<KubeObject> {
    if (!this.converter) return obj;
    const ext = this.converter.external;
    return this.converter.toStorage(ext ? await ext.toStorage(obj) : obj);
  }

  private async toBytes(obj: KubeObject): Promise<Uint8Array> {
    return encodeForStorage(await this.storedForm(obj));
  }

  /** AlreadyExists, prefixed as upstream's Create does when the object in the way is being deleted. */
  private alreadyExistsFor(existing: KV, name: string): StatusError {
    const err = alreadyExists(this.groupResource, name);
    // Metadata only: the stored form has it as any served form would (no conversion called).
    if (this.decoder.decode(existing).metadata?.deletionTimestamp) err.status.message = `object is being deleted: ${err.status.message ?? ''}`;
    return err;
  }

  private storageError(e: unknown, name: string): StatusError {
    if (e instanceof StatusError) return e;
    if (e instanceof KeyNotFoundError) return notFound(this.groupResource, name);
    if (e instanceof KeyExistsError) return alreadyExists(this.groupResource, name);
    if (e instanceof ConflictError) return conflict(this.groupResource, name);
    // Upstream names the lowest resourceVersion a watch may still start from (one below the oldest event).
    if (e instanceof ExpiredError) return tooOldResourceVersion(e.requested, e.oldest - 1);
    if (e instanceof StorageUnavailableError) return serviceUnavailable(`storage is unavailable: ${e.message}`);
    return toStatusError(e);
  }

  // ---- reads -----------------------------------------------------------------------------

  /** GET; with resourceVersion N the answer is at least as new as N (kube's NotOlderThan for get). */
  async get(namespace: string | undefined, name: string, opts: { resourceVersion?: string } = {}): Promise<KubeObject> {
    return this.read(await this.getKV(namespace, name, opts));
  }

  /**
   * The object as JSON bytes (with a final newline, as the JSON encoder writes it) spliced from the
   * stored value when it is served as stored, without parsing it; otherwise the decoded object.
   * The hot path of a GET: no JSON.parse and no JSON.stringify per request.
   */
  async getJSON(namespace: string | undefined, name: string, opts: { resourceVersion?: string } = {}): Promise<{ json: Buffer } | { object: KubeObject }> {
    const kv = await this.getKV(namespace, name, opts);
    const json = this.splicedJSON(kv);
    return json ? { json } : { object: await this.read(kv) };
  }

  private async getKV(namespace: string | undefined, name: string, opts: { resourceVersion?: string }): Promise<KV> {
    const rv = parseResourceVersion(opts.resourceVersion);
    let kv: KV | undefined;
    try {
      if (rv > 0) await this.waitForRevision(rv);
      kv = await this.storage.get(this.key(namespace, name));
    } catch (e) {
      throw this.storageError(e, name);
    }
    if (!kv) throw notFound(this.groupResource, name);
    return kv;
  }

  /**
   * The stored bytes with metadata.resourceVersion spliced in and a final newline (as the JSON
   * encoder writes an object), or undefined when they cannot be sent as stored.
   */
  private splicedJSON(kv: KV): Buffer | undefined {
    if (!this.sendableAsStored(kv)) return undefined;
    const prefix = this.rawPrefix;
    const out = Buffer.allocUnsafe(splicedLength(kv.value, prefix.length, kv.modRevision) + 1);
    out[writeSpliced(out, 0, kv.value, prefix, kv.modRevision)] = NEWLINE;
    return out;
  }

  /**
   * The object as the watch cache has it now (possibly a little stale, like a lister), falling
   * back to storage when no cache covers it or the cache does not have it. For admission checks.
   */
  async getCached(namespace: string | undefined, name: string): Promise<KubeObject> {
    const peeked = this.storage.peek?.(this.key(namespace, name));
    if (peeked?.kv) return this.read(peeked.kv);
    return this.get(namespace, name);
  }

  private predicate(labelSelector?: string, fieldSelector?: string): Predicate {
    return compilePredicate(labelSelector, fieldSelector, this.strategy, this.groupResource);
  }

  /** Waits until storage has reached `rv` (resourceVersionMatch=NotOlderThan) or answers 504 like kube. */
  private async waitForRevision(rv: number): Promise<void> {
    const deadline = Date.now() + this.freshnessWaitMs;
    for (;;) {
      const current = await this.storage.currentRevision();
      if (current >= rv) return;
      if (Date.now() >= deadline) throw tooLargeResourceVersion(rv, current);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async list(namespace: string | undefined, opts: ListOptions = {}): Promise<KubeList> {
    const r = await this.listKVs(namespace, opts);
    return { apiVersion: this.apiVersion, kind: this.descriptor.listKind, metadata: r.metadata, items: r.objects ?? (await this.fromKVs(r.kvs)) };
  }

  /**
   * The list as JSON bytes, spliced from the stored values without parsing them when nothing needs
   * the parsed form (the hot path of a large list: a parse plus a re-serialisation per object).
   *
   * The bytes are written once, into one buffer of exactly their length taken from `alloc` (a new
   * one by default; a caller may hand out reused memory, see BodyBuffers): no Buffer per item and
   * no concatenation. A buffer from `alloc` may be longer; the answer is then its start.
   */
  async listJSON(namespace: string | undefined, opts: ListOptions = {}, alloc: (size: number) => Buffer = allocUnsafe): Promise<Buffer> {
    return this.encodeListJSON(await this.listKVs(namespace, opts), alloc);
  }

  /**
   * The list as JSON bytes in chunks, encoded as they are taken: the same bytes as listJSON, but
   * never more than one chunk of them in memory at a time (plus what the consumer still holds), so
   * a large list written to a slow reader costs its chunks, not its whole encoding. Each chunk is
   * `bytes`, the start of `taken`, a buffer from `take` of at least `chunkBytes` (larger for an item
   * that does not fit one); the consumer owns both once the chunk is yielded. The list is read
   * before the first chunk: its errors are thrown by this call, not by the iteration.
   */
  async listJSONChunks(
    namespace: string | undefined,
    opts: ListOptions = {},
    chunkBytes: number = LIST_CHUNK_BYTES,
    take: (size: number) => Buffer = allocUnsafe,
  ): Promise<Iterator<ListJSONChunk, undefined>> {
    return this.encodeListJSONChunks(await this.listKVs(namespace, opts), chunkBytes, take);
  }

  private *encodeListJSONChunks(
    r: { kvs: KV[]; objects?: KubeObject[]; metadata: KubeList['metadata'] },
    chunkBytes: number,
    take: (size: number) => Buffer,
  ): Generator<ListJSONChunk, undefined> {
    const head = `{"kind":${JSON.stringify(this.descriptor.listKind)},"apiVersion":${JSON.stringify(this.apiVersion)},"metadata":${JSON.stringify(r.metadata)},"items":[`;
    const prefix = this.rawPrefix;
    const kvs = r.kvs;
    const n = kvs.length;
    let buf = take(Math.max(chunkBytes, Buffer.byteLength(head) + 2));
    let pos = buf.write(head, 0);
    for (let i = 0; i < n; i++) {
      const kv = kvs[i]!;
      // An item that cannot be sent as stored is encoded here, one at a time (never the whole list).
      const text = this.sendableAsStored(kv) ? undefined : stringifyJSON(r.objects?.[i] ?? this.fromKV(kv));
      // The item, its comma, and room for the closing `]}` after the last one.
      const need = (text === undefined ? splicedLength(kv.value, prefix.length, kv.modRevision) : Buffer.byteLength(text)) + 1 + (i === n - 1 ? 2 : 0);
      if (pos + need > buf.length) {
        yield { bytes: buf.subarray(0, pos), taken: buf };
        buf = take(Math.max(chunkBytes, need));
        pos = 0;
      }
      if (i > 0) buf[pos++] = 0x2c; // ,
      if (text !== undefined) pos += buf.write(text, pos);
      else pos = writeSpliced(buf, pos, kv.value, prefix, kv.modRevision);
    }
    buf[pos++] = 0x5d; // ]
    buf[pos++] = 0x7d; // }
    yield { bytes: buf.subarray(0, pos), taken: buf };
    return undefined;
  }

  private encodeListJSON(r: { kvs: KV[]; objects?: KubeObject[]; metadata: KubeList['metadata'] }, alloc: (size: number) => Buffer): Buffer {
    const head = `{"kind":${JSON.stringify(this.descriptor.listKind)},"apiVersion":${JSON.stringify(this.apiVersion)},"metadata":${JSON.stringify(r.metadata)},"items":[`;
    const prefix = this.rawPrefix;
    const kvs = r.kvs;
    const n = kvs.length;
    // Items that cannot be sent as stored, as JSON text by index (the others are spliced).
    let encoded: (string | undefined)[] | undefined;
    // '{...,"items":[' + items + commas between them + ']}'
    let size = Buffer.byteLength(head) + (n > 1 ? n - 1 : 0) + 2;
    for (let i = 0; i < n; i++) {
      const kv = kvs[i]!;
      if (this.sendableAsStored(kv)) {
        size += splicedLength(kv.value, prefix.length, kv.modRevision);
      } else {
        const text = stringifyJSON(r.objects?.[i] ?? this.fromKV(kv));
        (encoded ??= new Array<string | undefined>(n))[i] = text;
        size += Buffer.byteLength(text);
      }
    }
    const buf = alloc(size);
    let pos = buf.write(head, 0);
    for (let i = 0; i < n; i++) {
      if (i > 0) buf[pos++] = 0x2c; // ,
      const text = encoded?.[i];
      if (text !== undefined) pos += buf.write(text, pos);
      else {
        const kv = kvs[i]!;
        pos = writeSpliced(buf, pos, kv.value, prefix, kv.modRevision);
      }
    }
    buf[pos++] = 0x5d; // ]
    buf[pos++] = 0x7d; // }
    // Every byte up to `size` is written (reused memory must not leak its old contents).
    if (pos !== size) throw internalError(new Error(`list encoding wrote ${pos} bytes, expected ${size}`));
    return buf.length === size ? buf : buf.subarray(0, size);
  }

  /**
   * Whether the stored value can be sent as it is, with its resourceVersion spliced in: it starts
   * with the resource's own opening (kind, apiVersion, metadata) and is served unchanged (no
   * converter, or one that hands back the stored object itself: same version, nothing to default).
   */
  private sendableAsStored(kv: KV): boolean {
    if (!this.converter) return splicable(kv.value, this.rawPrefix);
    // Stored values are immutable and the cache keeps handing out the same KV: decide once.
    let verdict = this.sendableMemo.get(kv);
    if (verdict === undefined) {
      verdict = splicable(kv.value, this.rawPrefix);
      if (verdict) {
        const stored = this.decoder.decode(kv);
        verdict = this.converter.fromStorage(stored) === stored;
      }
      this.sendableMemo.set(kv, verdict);
    }
    return verdict;
  }
  private readonly sendableMemo = new WeakMap<KV, boolean>();

  /** Stored values of this resource start with these bytes (see encodeForStorage). */
  private get rawPrefix(): Buffer {
    return (this.rawPrefixCache ??= Buffer.from(
      `{"kind":${JSON.stringify(this.descriptor.kind)},"apiVersion":${JSON.stringify(this.apiVersion)},"metadata":{`,
    ));
  }
  private rawPrefixCache: Buffer | undefined;

  /** Reads a list's KVs; `objects` holds the parsed items when a selector needed them anyway. */
  private async listKVs(namespace: string | undefined, opts: ListOptions): Promise<{ kvs: KV[]; objects?: KubeObject[]; metadata: KubeList['metadata'] }> {
    const issues = validateListOptions(opts, false);
    if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', issues);
    const pred = this.predicate(opts.labelSelector, opts.fieldSelector);
    // The watch cache answers resourceVersion=0 whole: kube ignores the limit there (computeListLimit).
    const limit = opts.limit && opts.limit > 0 && (opts.resourceVersion !== '0' || opts.continue) ? opts.limit : 0;
    const prefix = this.listPrefix(namespace);
    let readRevision: number | undefined;
    let startKey: string | undefined;

    if (opts.continue) {
      if (opts.resourceVersion && opts.resourceVersion !== '0') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      const token = decodeContinue(opts.continue);
      // A negative revision is upstream's "inconsistent" continuation: the rest at the latest revision.
      if (token.rv > 0) readRevision = token.rv;
      startKey = prefix + token.start;
    } else {
      const rv = parseResourceVersion(opts.resourceVersion);
      const match = opts.resourceVersionMatch ?? '';
      // Exact, or a legacy paged list at a given revision, reads at that revision (a revision not
      // reached yet is etcd's ErrFutureRev: 504 at once); NotOlderThan waits for it.
      if (rv > 0 && (match === 'Exact' || (match === '' && limit > 0))) {
        const current = await this.storage.currentRevision().catch((e: unknown) => {
          throw this.storageError(e, '');
        });
        if (rv > current) throw tooLargeResourceVersion(rv, current, 0);
        readRevision = rv;
      } else if (rv > 0) await this.waitForRevision(rv);
    }

    const kvs: KV[] = [];
    const objects: KubeObject[] = [];
    const external = !!this.converter?.external;
    let revision: number;
    let more = false;
    let remaining: number | undefined;
    let lastKey: string | undefined;
    try {
      // With a selector, storage pages may hold fewer matches than asked: keep reading.
      let cursor = startKey;
      for (;;) {
        const want = limit ? Math.max(limit - kvs.length, pred.empty ? 0 : 64) : 0;
        const page = await this.storage.list(prefix, {
          ...(readRevision !== undefined ? { revision: readRevision } : {}),
          ...(want ? { limit: want } : {}),
          ...(cursor !== undefined ? { startKey: cursor } : {}),
        });
        revision = page.revision;
        readRevision ??= page.revision;
        // An external converter (a webhook) converts the page in one call; selectors see the served form.
        const served = external ? await this.fromKVs(page.items) : undefined;
        for (let i = 0; i < page.items.length; i++) {
          const kv = page.items[i]!;
          if (served) {
            const obj = served[i]!;
            if (!pred.empty && !pred.matches(obj)) continue;
            objects.push(obj);
          } else if (!pred.empty) {
            const obj = this.fromKV(kv);
            if (!pred.matches(obj)) continue;
            objects.push(obj);
          }
          kvs.push(kv);
          lastKey = kv.key;
          if (limit && kvs.length >= limit) {
            more = i < page.items.length - 1 || page.more;
            if (more && pred.empty && page.remaining !== undefined) remaining = page.remaining + (page.items.length - 1 - i);
            break;
          }
        }
        if ((limit && kvs.length >= limit) || !page.more) break;
        const last = page.items[page.items.length - 1];
        if (!last) break;
        cursor = last.key + '\x00';
      }
    } catch (e) {
      if (e instanceof StatusError) throw e;
      if (e instanceof ExpiredError && opts.continue) {
        // Like kube, offer an "inconsistent" continue token: the rest of the list at whatever
        // revision is latest when it is used (revision -1, as etcd3's handleCompactedErrorForPaging).
        const err = resourceExpired(CONTINUE_EXPIRED_MESSAGE);
        const start = startKey?.slice(prefix.length);
        if (start) err.status.metadata = { continue: encodeContinue(-1, start) };
        throw err;
      }
      if (e instanceof ExpiredError) throw resourceExpired(`The resourceVersion for the provided list is too old.`);
      throw this.storageError(e, '');
    }
    const metadata: KubeList['metadata'] = { resourceVersion: String(revision) };
    if (more && lastKey !== undefined) {
      metadata.continue = encodeContinue(revision, lastKey.slice(prefix.length) + '\x00');
      if (remaining !== undefined) metadata.remainingItemCount = remaining;
    }
    return pred.empty && !external ? { kvs, metadata } : { kvs, objects, metadata };
  }

  /**
   * A watch in kube's terms: with resourceVersion unset or "0" it starts with synthetic ADDED
   * events for the current state (at one revision) and continues from there without a gap.
   */
  async *watch(namespace: string | undefined, opts: WatchOptions): AsyncGenerator<ApiWatchEvent> {
    const pred = this.predicate(opts.labelSelector, opts.fieldSelector);
    const prefix = this.listPrefix(namespace);
    const rvParam = opts.resourceVersion;
    const rv = parseResourceVersion(rvParam);
    let after: number;
    const initial: KubeObject[] = [];
    const wantsInitial = opts.sendInitialEvents ?? (rvParam === undefined || rvParam === '' || rv === 0);
    const issues = validateListOptions(opts, true, opts.watchListEnabled ?? true);
    if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: 'ListOptions' }, '', issues);
    try {
      if (wantsInitial) {
        if (rv > 0) await this.waitForRevision(rv);
        const page = await this.storage.list(prefix);
        after = page.revision;
        for (const obj of await this.fromKVs(page.items)) if (pred.matches(obj)) initial.push(obj);
      } else {
        after = rv;
      }
    } catch (e) {
      throw this.storageError(e, '');
    }
    for (const obj of initial) yield { type: 'ADDED', object: obj };
    // The end of the initial events is a bookmark, so only for a client that asked for bookmarks.
    if (opts.sendInitialEvents && opts.allowWatchBookmarks) {
      yield { type: 'BOOKMARK', object: this.bookmark(after, true) };
    }
    let events: AsyncIterable<WatchEvent>;
    try {
      events = this.storage.watch(prefix, {
        afterRevision: after,
        signal: opts.signal,
        ...(opts.allowWatchBookmarks ? { progressIntervalMs: opts.progressIntervalMs ?? 10_000 } : {}),
      });
    } catch (e) {
      throw this.storageError(e, '');
    }
    try {
      for await (const ev of events) {
        if (ev.type === 'progress') {
          if (opts.allowWatchBookmarks) yield { type: 'BOOKMARK', object: this.bookmark(ev.revision, false) };
          continue;
        }
        const out = this.converter?.external ? await this.translateConverted(ev, pred) : this.translate(ev, pred);
        if (out) yield out;
      }
    } catch (e) {
      if (opts.signal.aborted) return;
      throw this.storageError(e, '');
    }
  }

  /** Storage event → API event, turning selector transitions into ADDED/DELETED as kube does. */
  private translate(ev: Exclude<WatchEvent, { type: 'progress' }>, pred: Predicate): ApiWatchEvent | undefined {
    if (ev.type === 'delete') {
      const last = ev.prevKv ?? ev.kv;
      const obj = this.fromKV(last, ev.revision);
      return pred.matches(obj) ? { type: 'DELETED', object: obj } : undefined;
    }
    const cur = this.fromKV(ev.kv);
    const curMatches = pred.matches(cur);
    if (pred.empty) return { type: ev.prevKv || ev.kv.createRevision !== ev.kv.modRevision ? 'MODIFIED' : 'ADDED', object: cur };
    const prevMatches = ev.prevKv ? pred.matches(this.fromKV(ev.prevKv)) : false;
    if (curMatches && prevMatches) return { type: 'MODIFIED', object: cur };
    if (curMatches) return { type: 'ADDED', object: cur };
    // Leaving the selector: the object as it was (what matched), at the event's resourceVersion.
    if (prevMatches) return { type: 'DELETED', object: this.fromKV(ev.prevKv!, ev.revision) };
    return undefined;
  }

  /** translate, for an external converter: each object it looks at is converted first (once for all watchers). */
  private async translateConverted(ev: Exclude<WatchEvent, { type: 'progress' }>, pred: Predicate): Promise<ApiWatchEvent | undefined> {
    if (ev.type === 'delete') {
      const obj = await this.readEvent(ev.prevKv ?? ev.kv, ev.revision);
      return pred.matches(obj) ? { type: 'DELETED', object: obj } : undefined;
    }
    const cur = await this.readEvent(ev.kv);
    if (pred.empty) return { type: ev.prevKv || ev.kv.createRevision !== ev.kv.modRevision ? 'MODIFIED' : 'ADDED', object: cur };
    const curMatches = pred.matches(cur);
    const prevMatches = ev.prevKv ? pred.matches(await this.readEvent(ev.prevKv)) : false;
    if (curMatches && prevMatches) return { type: 'MODIFIED', object: cur };
    if (curMatches) return { type: 'ADDED', object: cur };
    if (prevMatches) return { type: 'DELETED', object: await this.readEvent(ev.prevKv!, ev.revision) };
    return undefined;
  }

  /** `read` for a watch event, through convertedEvents. */
  private readEvent(kv: KV, revision?: number): Promise<KubeObject> {
    const key = `${kv.key}\u0000${kv.modRevision}\u0000${revision ?? ''}`;
    let p = this.convertedEvents.get(key);
    if (!p) {
      p = this.read(kv, revision);
      this.convertedEvents.set(key, p);
      if (this.convertedEvents.size > CONVERTED_EVENTS) this.convertedEvents.delete(this.convertedEvents.keys().next().value!);
      p.catch(() => {
        if (this.convertedEvents.get(key) === p) this.convertedEvents.delete(key);
      });
    }
    return p;
  }

  private bookmark(revision: number, initialEventsEnd: boolean): KubeObject {
    const metadata: ObjectMeta = { resourceVersion: String(revision) };
    if (initialEventsEnd) metadata.annotations = { 'k8s.io/initial-events-end': 'true' };
    return { kind: this.descriptor.kind, apiVersion: this.apiVersion, metadata };
  }

  // ---- writes ----------------------------------------------------------------------------

  private checkNamespaceAndName(obj: KubeObject, namespace: string | undefined, urlName?: string): void {
    const meta = (obj.metadata ??= {});
    if (this.strategy.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      if (namespace) meta.namespace = namespace;
    } else if (meta.namespace) {
      // Cluster-scoped: kube clears a namespace sent in the body rather than failing.
      delete meta.namespace;
    }
    if (urlName !== undefined && meta.name !== undefined && meta.name !== urlName) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${urlName})`);
    }
  }

  private validateCreate(obj: KubeObject): void {
    const issues: FieldIssue[] = [
      ...validateObjectMetaCreate(obj.metadata ?? {}, {
        namespaced: this.strategy.namespaced,
        nameValidator: this.strategy.nameValidator ?? nameIsDNSSubdomain,
        finalizerNames: this.strategy.finalizerNames,
      }),
      ...this.strategy.validate(obj),
    ];
    if (issues.length) throw invalid({ group: this.descriptor.group, kind: this.descriptor.kind }, obj.metadata?.name ?? '', issues);
  }

  private validateUpdate(obj: KubeObject, old: KubeObject): void {
    const issues: FieldIssue[] = [
      ...validateObjectMetaUpdate(obj.metadata ?? {}, old.metadata ?? {}, {
        namespaced: this.strategy.namespaced,
        nameValidator: this.strategy.nameValidator ?? nameIsDNSSubdomain,
        finalizerNames: this.strategy.finalizerNames,
      }),
      ...this.strategy.validateUpdate(obj, old),
    ];
    if (issues.length) throw invalid({ group: this.descriptor.group, kind: this.descriptor.kind }, obj.metadata?.name ?? '', issues);
  }

  /**
   * The first half of preparing a new object as create stores it (PUT-creates come through create
   * too): the server's system fields and the strategy's defaults. BeginCreate comes next, then
   * `prepareCreated`. Both halves are synchronous: a create whose strategy has no BeginCreate
   * costs no promise for them.
   */
  private defaultCreated(input: KubeObject, namespace: string | undefined): KubeObject {
    const obj = input;
    obj.apiVersion = this.apiVersion;
    obj.kind = this.descriptor.kind;
    this.checkNamespaceAndName(obj, namespace);
    const meta = obj.metadata!;
    if (!meta.name && meta.generateName) meta.name = generateNameFrom(meta.generateName);
    // System fields are the server's, whatever the client sent (rest.FillObjectMetaSystemFields).
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock());
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (meta.generation !== undefined) delete meta.generation;
    this.strategy.defaults?.(obj);
    return obj;
  }

  /** The second half (after BeginCreate): PrepareForCreate, disabled fields dropped, validation. */
  private prepareCreated(obj: KubeObject): void {
    this.strategy.prepareForCreate(obj);
    if (this.features && this.gatedFields.length) dropDisabledFields(obj, undefined, this.gatedFields, this.features);
    dropEmptyObjectMetaFields(obj.metadata!);
    this.validateCreate(obj);
  }

  /**
   * Creates the object. `json()` gives the answer as JSON bytes without decoding it (the stored
   * bytes with the resourceVersion spliced in, as `getJSON`), or undefined when it cannot be sent as
   * stored; `object` decodes on first use.
   */
  async create(
    namespace: string | undefined,
    input: KubeObject,
    opts: WriteOptions = {},
  ): Promise<{ object: KubeObject; warnings: string[]; json?: () => Buffer | undefined }> {
    if (!opts.dryRun && input.metadata?.resourceVersion) {
      // etcd3 store.Create's plain error, which the handlers turn into a 500 without a reason (a dry
      // run never reaches it). kubectl users meet it with `create -f` of an object read back.
      throw new StatusError({ code: 500, message: 'resourceVersion should not be set on objects to be created' });
    }
    const usesGenerateName = !input.metadata?.name && !!input.metadata?.generateName;
    for (let attempt = 0; ; attempt++) {
      const hook: { dryRun: boolean; finish?: FinishWrite } = { dryRun: !!opts.dryRun };
      try {
        const out = await this.createOnce(namespace, input, opts, attempt, usesGenerateName, hook);
        // Only a strategy with BeginCreate sets `finish`: no await (and no promise) without one.
        if (out === 'retry') {
          if (attempt === 0) input = cloneObject({ ...input, metadata: { ...input.metadata, name: undefined } });
          if (hook.finish) await hook.finish(false);
          continue;
        }
        if (hook.finish) await hook.finish(true);
        return out;
      } catch (e) {
        if (hook.finish) await hook.finish(false);
        throw e;
      }
    }
  }

  /** One attempt of create: the answer, or 'retry' when a generated name collided. */
  private async createOnce(
    namespace: string | undefined,
    input: KubeObject,
    opts: WriteOptions,
    attempt: number,
    usesGenerateName: boolean,
    hook: { dryRun: boolean; finish?: FinishWrite },
  ): Promise<{ object: KubeObject; warnings: string[]; json?: () => Buffer | undefined } | 'retry'> {
    {
      const obj = this.defaultCreated(attempt === 0 ? input : cloneObject(input), namespace);
      // BeginCreate runs on the defaulted object, before PrepareForCreate and validation (upstream's order).
      if (this.strategy.beginCreate) hook.finish = await this.strategy.beginCreate(obj, { dryRun: hook.dryRun, storage: this.storage });
      this.prepareCreated(obj);
      if (!obj.metadata?.name) {
        throw invalid({ group: this.descriptor.group, kind: this.descriptor.kind }, '', [
          fieldIssue.required('metadata.name', 'name or generateName is required'),
        ]);
      }
      const warnings = [
        ...finalizerWarnings(obj.metadata?.finalizers, this.strategy.finalizerNames ?? 'generic'),
        ...(this.strategy.warningsOnCreate?.(obj) ?? []),
      ];
      const admitted = opts.validate?.(obj, undefined);
      if (admitted !== undefined) await admitted; // no promise when admission answered at once
      if (opts.dryRun) {
        // DryRunnableStorage.Create: a dry run reports the conflict a real create would hit.
        let existing: KV | undefined;
        try {
          existing = await this.storage.get(this.key(namespace, obj.metadata.name));
        } catch (e) {
          throw this.storageError(e, obj.metadata.name);
        }
        if (existing) throw this.alreadyExistsFor(existing, obj.metadata.name);
        return { object: obj, warnings };
      }
      try {
        const storedForm = this.converter?.external ? await this.storedForm(obj) : this.converter ? this.converter.toStorage(obj) : obj;
        // The answer is the stored bytes when reading them back would serve them unchanged; with a
        // converter that is decided on the object in hand instead of parsing what was just written
        // (before the write's await, while the object is still in the CPU's caches).
        const servedAsStored =
          this.converter && jsonClean(storedForm)
            ? storedForm.apiVersion === this.apiVersion && this.converter.fromStorage(storedForm) === storedForm
            : undefined;
        const kv = await this.storage.create(this.key(namespace, obj.metadata.name), encodeForStorage(storedForm));
        if (servedAsStored !== undefined) this.sendableMemo.set(kv, servedAsStored && splicable(kv.value, this.rawPrefix));
        // Converted back by the external converter now (the getter below cannot wait for it).
        let decoded: KubeObject | undefined = this.converter?.external && !servedAsStored ? await this.read(kv, undefined, false) : undefined;
        const store = this; // the getter's own `this` is the result object
        return {
          get object(): KubeObject {
            return (decoded ??= store.fromKV(kv, undefined, false));
          },
          // a method, not an arrow in a property: tsx names those with a defineProperty call each time
          json() {
            return store.splicedJSON(kv);
          },
          warnings,
        };
      } catch (e) {
        // A generated name that collides is retried with a new suffix (kube's RetryGenerateName).
        if (e instanceof KeyExistsError && usesGenerateName && attempt < 7) return 'retry';
        if (e instanceof KeyExistsError) {
          const existing = await this.storage.get(this.key(namespace, obj.metadata.name)).catch(() => undefined);
          if (existing) throw this.alreadyExistsFor(existing, obj.metadata.name);
        }
        throw this.storageError(e, obj.metadata.name);
      }
    }
  }

  /**
   * Update through a function of the current object, retried on storage conflicts unless the
   * caller pinned a resourceVersion (then a stale one is a 409). `subresource` limits what changes.
   */
  async update(
    namespace: string | undefined,
    name: string,
    updateFn: UpdateFn,
    opts: WriteOptions & { subresource?: string; forceAllowCreate?: boolean } = {},
  ): Promise<UpdateResult> {
    const key = this.key(namespace, name);
    for (let attempt = 0; attempt < MAX_UPDATE_RETRIES; attempt++) {
      let kv: KV | undefined;
      try {
        kv = await this.storage.get(key);
      } catch (e) {
        throw this.storageError(e, name);
      }
      // Awaited only through an external converter, as the update function's answer only when it
      // is a promise: an update without either costs no promise for them.
      const current = kv ? (this.converter?.external ? await this.read(kv) : this.fromKV(kv)) : undefined;
      // Not found before admission runs (upstream's GuaranteedUpdate reads first): a PUT of a
      // missing object in a missing namespace is "configmaps "x" not found", not the namespace's.
      if ((!kv || !current) && (!(this.strategy.allowCreateOnUpdate || opts.forceAllowCreate) || opts.subresource)) throw notFound(this.groupResource, name);
      const updated = updateFn(current ? cloneObject(current) : undefined);
      const incoming = updated instanceof Promise ? await updated : updated;
      if (!kv || !current) {
        this.checkNamespaceAndName(incoming, namespace, name);
        // Creating through an update ignores a resourceVersion in the body (upstream's GuaranteedUpdate
        // prepares the object for storage, which clears it), unlike a POST.
        delete incoming.metadata!.resourceVersion;
        incoming.metadata!.name = name;
        const created = await this.create(namespace, incoming, opts);
        return { object: created.object, created: true, warnings: created.warnings, ...(created.json ? { json: created.json } : {}) };
      }
      this.checkNamespaceAndName(incoming, namespace, name);
      const meta = (incoming.metadata ??= {});
      meta.name ??= name;
      const rvGiven = meta.resourceVersion !== undefined && meta.resourceVersion !== '';
      if (rvGiven && meta.resourceVersion !== current.metadata?.resourceVersion) {
        throw conflict(this.groupResource, name);
      }
      if (!rvGiven && !this.strategy.allowUnconditionalUpdate) {
        // Upstream names the resource here, not the kind (store.go Update: "leases.coordination.k8s.io").
        throw invalid({ group: this.descriptor.group, kind: this.descriptor.plural }, name, [
          fieldIssue.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
        ]);
      }
      let obj: KubeObject;
      if (opts.subresource) {
        const sub = this.strategy.subresources?.[opts.subresource];
        if (!sub) throw notFound(this.groupResource, name);
        obj = sub.merge(incoming, cloneObject(current));
        // managedFields of a subresource write are the request path's (its field manager computed
        // them against `current`); the merge itself keeps only what the subresource owns.
        const managed = incoming.metadata?.managedFields;
        if (managed?.length) (obj.metadata ??= {}).managedFields = managed;
      } else {
        obj = incoming;
      }
      obj.apiVersion = this.apiVersion;
      obj.kind = this.descriptor.kind;
      const om = (obj.metadata ??= {});
      const cm = current.metadata ?? {};
      // Fields the server owns keep their stored values (rest.BeforeUpdate); a different uid fails validation.
      prepareObjectMetaForUpdate(om, cm);
      delete om.selfLink;
      om.resourceVersion = cm.resourceVersion;
      this.strategy.defaults?.(obj);
      // BeginUpdate (allocations) runs on the defaulted object before PrepareForUpdate; what it
      // took is given back unless this very write lands.
      const finish =
        !opts.subresource && this.strategy.beginUpdate
          ? await this.strategy.beginUpdate(obj, current, { dryRun: !!opts.dryRun, storage: this.storage })
          : undefined;
      let landed = false;
      try {
        const out = await this.updateOnce(key, kv, current, obj, om, cm, name, opts);
        landed = out !== undefined;
        if (out) return out;
      } finally {
        if (finish) await finish(landed);
      }
    }
    throw conflict(this.groupResource, name, 'too many concurrent updates; please try again');
  }

  /** The rest of one update attempt (after defaulting): the result, or undefined to read again and retry. */
  private async updateOnce(
    key: string,
    kv: KV,
    current: KubeObject,
    obj: KubeObject,
    om: ObjectMeta,
    cm: ObjectMeta,
    name: string,
    opts: WriteOptions & { subresource?: string },
  ): Promise<UpdateResult | undefined> {
    {
      if (!opts.subresource) this.strategy.prepareForUpdate(obj, current);
      else this.strategy.subresources?.[opts.subresource]?.prepareForUpdate?.(obj, current);
      if (this.features && this.gatedFields.length) dropDisabledFields(obj, current, this.gatedFields, this.features);
      dropEmptyObjectMetaFields(om);
      this.validateUpdate(obj, current);
      const subIssues = opts.subresource ? (this.strategy.subresources?.[opts.subresource]?.validateUpdate?.(obj, current) ?? []) : [];
      if (subIssues.length) throw invalid({ group: this.descriptor.group, kind: this.descriptor.kind }, name, subIssues);
      const warnings = [
        ...newFinalizerWarnings(om.finalizers, cm.finalizers, this.strategy.finalizerNames ?? 'generic'),
        ...(this.strategy.warningsOnUpdate?.(obj, current) ?? []),
      ];
      const admitted = opts.validate?.(obj, current);
      if (admitted !== undefined) await admitted; // no promise when admission answered at once
      // An update that changes nothing is not written: no new revision, no watch event. Unless the
      // stored value is stale (encrypted with a key or provider other than the writing one):
      // GuaranteedUpdate writes it then, so that `kubectl replace` re-encrypts.
      const bytes = this.converter?.external ? await this.toBytes(obj) : encodeForStorage(this.converter ? this.converter.toStorage(obj) : obj);
      if (bytesEqual(bytes, kv.value) && !kv.stale) return { object: current, created: false, warnings };
      // A deleting object whose last finalizer goes is removed (store.shouldDeleteDuringUpdate).
      const removing = !!om.deletionTimestamp && (om.finalizers?.length ?? 0) === 0 && (this.strategy.canRemove?.(obj) ?? true);
      if (opts.dryRun) return { object: obj, created: false, warnings };
      try {
        if (removing) {
          const del = await this.storage.delete(key, kv.modRevision);
          const out = cloneObject(obj);
          out.metadata!.resourceVersion = String(del.revision);
          await this.strategy.afterDelete?.(obj, { dryRun: false, storage: this.storage });
          return { object: out, created: false, warnings };
        }
        const next = await this.storage.update(key, bytes, kv.modRevision);
        if (this.converter?.external) return { object: await this.read(next, undefined, false), created: false, warnings };
        // Decoded on first use: a writer that does not read the answer (ClearField's in-process
        // path) does not pay for a parse per object.
        let decoded: KubeObject | undefined;
        const store = this; // the getter's own `this` is the result object
        return {
          get object(): KubeObject {
            return (decoded ??= store.fromKV(next, undefined, false));
          },
          created: false,
          warnings,
          // a method, not an arrow in a property: tsx names those with a defineProperty call each time
          json() {
            return store.splicedJSON(next);
          },
        };
      } catch (e) {
        // GuaranteedUpdate: a lost compare-and-swap re-reads and runs the update function again. A
        // PUT pinned to a resourceVersion then fails on the fresh object's; a patch (which carries
        // the resourceVersion it was applied to) is applied again to the fresh object.
        if (e instanceof ConflictError || e instanceof KeyNotFoundError) return undefined;
        throw this.storageError(e, name);
      }
    }
  }

  /**
   * DELETE, as upstream's generic store.Delete unless the strategy has a REST Delete of its own
   * (beforeDelete): an object with finalizers left (after the garbage collector's are set from the
   * options) is only marked deleting, with a deletionTimestamp and no grace period; otherwise it is
   * removed. Admission (`opts.validate`) runs after the preconditions, where upstream runs it.
   * Returns the object and whether it is gone.
   */
  async delete(namespace: string | undefined, name: string, opts: DeleteOptions = {}): Promise<{ object: KubeObject; deleted: boolean }> {
    validateDeleteOptions(opts);
    const key = this.key(namespace, name);
    let preconditions = opts.preconditions;
    for (let attempt = 0; attempt < MAX_UPDATE_RETRIES; attempt++) {
      let kv: KV | undefined;
      try {
        kv = await this.storage.get(key);
      } catch (e) {
        throw this.storageError(e, name);
      }
      if (!kv) throw notFound(this.groupResource, name);
      const current = await this.read(kv);
      // A REST Delete of its own holds on to the UID it read first ("Ensure we have a UID
      // precondition"): a retry never acts on an object re-created meanwhile.
      // Such a REST Delete checks the preconditions itself, in storage's words, before anything else.
      if (this.strategy.beforeDelete) {
        if (preconditions?.uid == null) preconditions = { ...preconditions, uid: current.metadata?.uid ?? '' };
        checkStoragePreconditions(this.groupResource, current, preconditions);
      } else this.checkDeletePreconditions(current, preconditions, name);
      const hook = this.strategy.beforeDelete?.(current, opts) ?? 'proceed';
      if (hook === 'unchanged') return { object: current, deleted: false };
      if (hook !== 'proceed') {
        // The update carries the finalizers as that REST Delete wants them (no generic GC ones).
        await opts.validate?.(cloneObject(current));
        const next = hook.update;
        (next.metadata ??= {}).deletionTimestamp ??= rfc3339(this.clock());
        const out = await this.writeDeleting(key, kv, current, next, opts.dryRun, name);
        if (out) return out;
        continue;
      }
      // store.Delete: finalizers left after the garbage collector's are set mean an update
      // (updateForGracefulDeletionAndFinalizers), and a removal only when none are left.
      const gcFinalizers = this.deletionFinalizersForGarbageCollection(current, opts);
      if ((current.metadata?.finalizers?.length ?? 0) > 0 || gcFinalizers) {
        await opts.validate?.(cloneObject(current));
        const finalizers = gcFinalizers ?? current.metadata?.finalizers ?? [];
        if (finalizers.length > 0) {
          const next = cloneObject(current);
          const m = (next.metadata ??= {});
          if (gcFinalizers) m.finalizers = gcFinalizers;
          markAsDeleting(m, rfc3339(this.clock()));
          const out = await this.writeDeleting(key, kv, current, next, opts.dryRun, name);
          if (out) return out;
          continue;
        }
      }
      // The removal checks the object once more (the storage delete's validateDeletion).
      await opts.validate?.(cloneObject(current));
      if (opts.dryRun) return { object: current, deleted: true };
      try {
        const del = await this.storage.delete(key, kv.modRevision);
        const gone = await this.read(del.kv, del.revision, false);
        await this.strategy.afterDelete?.(gone, { dryRun: false, storage: this.storage });
        return { object: gone, deleted: true };
      } catch (e) {
        if (e instanceof ConflictError) continue;
        if (e instanceof KeyNotFoundError) throw notFound(this.groupResource, name);
        throw this.storageError(e, name);
      }
    }
    throw conflict(this.groupResource, name, 'too many concurrent updates; please try again');
  }

  /**
   * rest.BeforeDelete's precondition check: the kind stands where the resource would (Operation
   * cannot be fulfilled on ConfigMap "x").
   */
  private checkDeletePreconditions(current: KubeObject, pre: DeleteOptions['preconditions'], name: string): void {
    const byKind = { group: this.descriptor.group, resource: this.descriptor.kind };
    if (pre?.uid != null && pre.uid !== current.metadata?.uid) {
      throw conflict(
        byKind,
        name,
        `the UID in the precondition (${pre.uid}) does not match the UID in record (${current.metadata?.uid ?? ''}). The object might have been deleted and then recreated`,
      );
    }
    if (pre?.resourceVersion != null && pre.resourceVersion !== current.metadata?.resourceVersion) {
      throw conflict(
        byKind,
        name,
        `the ResourceVersion in the precondition (${pre.resourceVersion}) does not match the ResourceVersion in record (${current.metadata?.resourceVersion ?? ''}). The object might have been modified`,
      );
    }
  }

  /**
   * Writes the object a DELETE leaves while finalizers hold it, and answers it (not deleted);
   * nothing is written when nothing changes (GuaranteedUpdate's no-op) or on a dry run. Undefined:
   * the object changed meanwhile, read it again.
   */
  private async writeDeleting(
    key: string,
    kv: KV,
    current: KubeObject,
    next: KubeObject,
    dryRun: boolean | undefined,
    name: string,
  ): Promise<{ object: KubeObject; deleted: false } | undefined> {
    const bytes = await this.toBytes(next);
    if (bytesEqual(bytes, kv.value) && !kv.stale) return { object: current, deleted: false };
    if (dryRun) return { object: next, deleted: false };
    try {
      const updated = await this.storage.update(key, bytes, kv.modRevision);
      return { object: await this.read(updated, undefined, false), deleted: false };
    } catch (e) {
      if (e instanceof ConflictError) return undefined;
      throw this.storageError(e, name);
    }
  }

  /**
   * The finalizer list a DELETE leaves for the garbage collector, or undefined when it stays as it
   * is (upstream's deletionFinalizersForGarbageCollection): options first, then the finalizers the
   * object already has, then the resource's default policy.
   */
  private deletionFinalizersForGarbageCollection(obj: KubeObject, opts: DeleteOptions): string[] | undefined {
    if (!this.garbageCollection) return undefined;
    const policy: GarbageCollectionPolicy = this.strategy.defaultGarbageCollectionPolicy ?? 'DeleteDependents';
    if (policy === 'Unsupported') return undefined;
    const current = obj.metadata?.finalizers ?? [];
    const firstGCFinalizer = current.find((f) => f === FINALIZER_ORPHAN_DEPENDENTS || f === FINALIZER_DELETE_DEPENDENTS);
    let orphan: boolean;
    let foreground: boolean;
    if (opts.orphanDependents !== undefined) {
      orphan = opts.orphanDependents;
      foreground = false;
    } else if (opts.propagationPolicy !== undefined) {
      orphan = opts.propagationPolicy === 'Orphan';
      foreground = opts.propagationPolicy === 'Foreground';
    } else if (firstGCFinalizer) {
      orphan = firstGCFinalizer === FINALIZER_ORPHAN_DEPENDENTS;
      foreground = firstGCFinalizer === FINALIZER_DELETE_DEPENDENTS;
    } else {
      orphan = policy === 'OrphanDependents';
      foreground = false;
    }
    return withGcFinalizers(current, orphan, foreground);
  }

  /**
   * DELETECOLLECTION as upstream's store.DeleteCollection: the list the options select (a limit
   * ends it after one page), each item deleted with the request's options and admission; an item
   * gone meanwhile is skipped, any other failure ends it. Answers the list as it was read.
   */
  async deleteCollection(namespace: string | undefined, listOpts: ListOptions, opts: DeleteOptions = {}): Promise<KubeList> {
    validateDeleteOptions(opts);
    const list = await this.list(namespace, listOpts);
    // Several deletes in flight (kube-apiserver's --delete-collection-workers): the storage
    // group-commits them instead of one commit (one fsync) per object.
    let next = 0;
    let failure: unknown;
    const worker = async (): Promise<void> => {
      while (next < list.items.length && failure === undefined) {
        const m = list.items[next++]!.metadata ?? {};
        try {
          await this.delete(m.namespace, m.name ?? '', opts);
        } catch (e) {
          if (e instanceof StatusError && e.code === 404) continue;
          failure ??= e;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_COLLECTION_WORKERS, list.items.length) }, worker));
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- the first failure a worker caught, rethrown as it was
    if (failure !== undefined) throw failure;
    return list;
  }

  /** The Status a DELETE answers with when the object is gone (non-namespace kinds); like upstream's finalizeDelete, without a code. */
  deletedStatus(obj: KubeObject): Omit<Status, 'code'> {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Success',
      details: {
        name: obj.metadata?.name ?? '',
        ...(this.descriptor.group ? { group: this.descriptor.group } : {}),
        kind: this.descriptor.plural,
        ...(obj.metadata?.uid ? { uid: obj.metadata.uid } : {}),
      },
    };
  }

  async count(): Promise<number> {
    return this.storage.count(this.keyPrefix);
  }
}

/** Warnings only for finalizers the update adds (upstream warns about new names only). */
function newFinalizerWarnings(next: string[] | undefined, prev: string[] | undefined, policy: FinalizerNamePolicy): string[] {
  const old = new Set(prev ?? []);
  return finalizerWarnings(
    (next ?? []).filter((f) => !old.has(f)),
    policy,
  );
}

/**
 * markAsDeleting, for kinds without graceful deletion whose finalizers hold them: the deletion
 * bumps the generation once, the deletionTimestamp is set once, the grace period is 0.
 */
function markAsDeleting(meta: ObjectMeta, now: string): void {
  if (!meta.deletionTimestamp && meta.generation !== undefined && meta.generation > 0) meta.generation++;
  meta.deletionTimestamp ??= now;
  meta.deletionGracePeriodSeconds = 0;
}

/**
 * storage.Preconditions.Check, in its words: how the REST Deletes of their own (namespaces, CRDs)
 * refuse a DELETE whose preconditions do not hold (`Precondition failed: UID in precondition: ...,
 * UID in object meta: ...`), UID first, as a 409 on the resource.
 */
function checkStoragePreconditions(resource: { group: string; resource: string }, obj: KubeObject, pre: DeleteOptions['preconditions']): void {
  const name = obj.metadata?.name ?? '';
  if (pre?.uid != null && pre.uid !== obj.metadata?.uid) {
    throw conflict(resource, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${obj.metadata?.uid ?? ''}`);
  }
  if (pre?.resourceVersion != null && pre.resourceVersion !== obj.metadata?.resourceVersion) {
    throw conflict(
      resource,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${obj.metadata?.resourceVersion ?? ''}`,
    );
  }
}

function validateDeleteOptions(opts: DeleteOptions): void {
  const issues: FieldIssue[] = [];
  const p = opts.propagationPolicy;
  if (p !== undefined && p !== 'Orphan' && p !== 'Background' && p !== 'Foreground') {
    issues.push(fieldIssue.notSupported('propagationPolicy', p, ['Foreground', 'Background', 'Orphan', 'nil']));
  }
  if (p !== undefined && opts.orphanDependents !== undefined) {
    issues.push(fieldIssue.invalid('propagationPolicy', p, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', issues);
}

export function parseResourceVersion(rv: string | undefined): number {
  if (rv === undefined || rv === '') return 0;
  // The versioner's strconv.ParseUint error inside a field.Invalid, as upstream's ValidateListOptions words it.
  const n = parseGoUint(rv, 10, 64);
  if (n instanceof NumError) throw badRequest(`invalid resource version: resourceVersion: Invalid value: ${goQuote(rv)}: ${n.message}`);
  return Number(n);
}

/**
 * metainternalversion validation's ValidateListOptions (`watch` false) and validateWatchOptions,
 * with the WatchList feature on: the causes of the 422 on ListOptions.meta.k8s.io.
 */
export function validateListOptions(
  opts: { readonly resourceVersion?: string; readonly resourceVersionMatch?: string; readonly continue?: string; readonly sendInitialEvents?: boolean },
  watch: boolean,
  watchListEnabled = true,
): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const match = opts.resourceVersionMatch ?? '';
  if (watch) {
    if (opts.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
      issues.push(fieldIssue.forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
    }
    if (opts.sendInitialEvents !== undefined && !watchListEnabled) {
      issues.push(fieldIssue.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled'));
    }
    if (match) {
      if (opts.sendInitialEvents === undefined)
        issues.push(fieldIssue.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
      if (match !== 'NotOlderThan') issues.push(fieldIssue.notSupported('resourceVersionMatch', match, ['NotOlderThan']));
      if (opts.continue) issues.push(fieldIssue.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    }
    return issues;
  }
  if (match) {
    if (!opts.resourceVersion)
      issues.push(fieldIssue.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (opts.continue) issues.push(fieldIssue.forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') issues.push(fieldIssue.notSupported('resourceVersionMatch', match, ['Exact', 'NotOlderThan', '']));
    if (match === 'Exact' && opts.resourceVersion === '0')
      issues.push(fieldIssue.forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (opts.sendInitialEvents !== undefined) issues.push(fieldIssue.forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return issues;
}

/** apimachinery's path.IsValidPathSegmentName. */
function pathSegmentNameIssues(name: string): string[] {
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  const issues: string[] = [];
  if (name.includes('/')) issues.push("may not contain '/'");
  if (name.includes('%')) issues.push("may not contain '%'");
  return issues;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  return Buffer.compare(a, b) === 0;
}

/**
 * Whether an object reads back from its JSON unchanged as far as defaulting can tell: no property
 * holds `undefined` (JSON drops it, and a dropped property with a default would be filled on read).
 */
function jsonClean(v: unknown): boolean {
  if (v === undefined) return false;
  if (v === null || typeof v !== 'object') return true;
  if (Array.isArray(v)) {
    for (const x of v) if (!jsonClean(x)) return false;
    return true;
  }
  for (const k in v as Record<string, unknown>) if (!jsonClean((v as Record<string, unknown>)[k])) return false;
  return true;
}
