// A Storage decorator that runs each value through its resource's transformer: encrypted on the
// way to the backend, decrypted on the way back (upstream's etcd3 store calls the transformer at
// the same points: Get, GetList, the watch's events, GuaranteedUpdate's read and write). It sits
// below the watch cache, so the cache holds plaintext as upstream's cacher holds decoded objects,
// and everything above (gets, lists, continue tokens, watches, the cache's own list and events)
// sees plaintext while the SQLite file and etcd only ever hold what the transformer wrote.
import { ConflictError, isProgressRequestable } from '../storage.js';
import type { KV, ListOptions, ListResult, Storage, WatchEvent, WatchOptions } from '../storage.js';
import { TransformError, type TransformContext, type Transformer } from './transformer.js';
import type { GroupResource, ResourceTransformers } from './config.js';

/** A key prefix a resource's objects are stored under, and the resource. */
export interface StoredResource extends GroupResource {
  /** Ends in '/', e.g. `/registry/secrets/` or `/registry/apps/deployments/`. */
  readonly prefix: string;
}

interface Resolved {
  readonly transformer: Transformer;
  /** The group resource as metrics label it (`secrets`, `deployments.apps`). */
  readonly resource: string;
}

/**
 * Which transformer a storage key uses: the longest known resource prefix the key starts with.
 * Keys under no known prefix (a custom resource whose definition is gone) are taken as
 * `/registry/<resource>/...` of the core group. `invalidate()` after the served resources changed.
 */
export class KeyTransformers {
  private byPrefix: Map<string, Resolved> | undefined;

  constructor(
    private transformers: ResourceTransformers,
    private readonly resources: () => Iterable<StoredResource>,
  ) {}

  invalidate(): void {
    this.byPrefix = undefined;
  }

  /** Every later read and write uses `transformers` (the config file was reloaded). */
  replace(transformers: ResourceTransformers): void {
    this.transformers = transformers;
    this.byPrefix = undefined;
  }

  private resolve(gr: GroupResource): Resolved {
    return { transformer: this.transformers.transformerForResource(gr), resource: gr.group ? `${gr.resource}.${gr.group}` : gr.resource };
  }

  forKey(key: string): Resolved {
    const found = this.forPrefix(key);
    if (found) return found;
    const parts = key.split('/');
    return this.resolve({ group: '', resource: parts[2] ?? '' });
  }

  /** The resource whose prefix `prefix` lies at or under, if any (then every key under it is that resource's). */
  forPrefix(prefix: string): Resolved | undefined {
    let map = this.byPrefix;
    if (map === undefined) {
      map = new Map();
      for (const r of this.resources()) if (!map.has(r.prefix)) map.set(r.prefix, this.resolve(r));
      this.byPrefix = map;
    }
    let found: Resolved | undefined;
    for (let i = prefix.indexOf('/', 1); i >= 0; i = prefix.indexOf('/', i + 1)) {
      const hit = map.get(prefix.slice(0, i + 1));
      if (hit) found = hit;
    }
    return found;
  }
}

/** Wraps `inner` (a backend, below any cache). */
export function transformStorage(inner: Storage, keys: KeyTransformers): Storage {
  const ctxOf = (key: string, resource: string): TransformContext => ({ authenticatedData: Buffer.from(key), resource });

  const fromStorage = (kv: KV, r: Resolved): KV => {
    const out = r.transformer.fromStorage(kv.value, ctxOf(kv.key, r.resource));
    if (out.data === kv.value && !out.stale) return kv;
    return { key: kv.key, value: out.data, createRevision: kv.createRevision, modRevision: kv.modRevision, ...(out.stale ? { stale: true } : {}) };
  };

  /** storage.NewInternalError(err) of Get and GuaranteedUpdate: the transformer's message itself. */
  const readOne = (kv: KV): KV => fromStorage(kv, keys.forKey(kv.key));

  const toStorage = (key: string, value: Uint8Array): Uint8Array => {
    const r = keys.forKey(key);
    return r.transformer.toStorage(value, ctxOf(key, r.resource));
  };

  const withValue = (kv: KV, value: Uint8Array): KV => ({ key: kv.key, value, createRevision: kv.createRevision, modRevision: kv.modRevision });

  const conflictWithPlaintext = (e: unknown): unknown => (e instanceof ConflictError ? new ConflictError(e.key, readOne(e.current)) : e);

  return {
    ...(inner.revisionIsLocal ? { revisionIsLocal: true } : {}),
    ...(inner.watchProgressRequestsSafe ? { watchProgressRequestsSafe: () => inner.watchProgressRequestsSafe?.() ?? true } : {}),
    async get(key: string) {
      const kv = await inner.get(key);
      return kv === undefined ? undefined : readOne(kv);
    },
    async list(prefix: string, opts?: ListOptions): Promise<ListResult> {
      const listed = await inner.list(prefix, opts);
      const r = keys.forPrefix(prefix);
      const items = listed.items.map((kv) => {
        try {
          return fromStorage(kv, r ?? keys.forKey(kv.key));
        } catch (e) {
          // GetList: the first value that does not transform fails the whole list, naming its key.
          throw new TransformError(`unable to transform key ${JSON.stringify(kv.key)}: ${(e as Error).message}`);
        }
      });
      return { ...listed, items };
    },
    count: (prefix: string) => inner.count(prefix),
    async create(key: string, value: Uint8Array) {
      const kv = await inner.create(key, toStorage(key, value));
      return withValue(kv, value);
    },
    async update(key: string, value: Uint8Array, expectedModRevision: number) {
      try {
        return withValue(await inner.update(key, toStorage(key, value), expectedModRevision), value);
      } catch (e) {
        throw conflictWithPlaintext(e);
      }
    },
    async delete(key: string, expectedModRevision?: number) {
      try {
        const { kv, revision } = await inner.delete(key, expectedModRevision);
        return { kv: readOne(kv), revision };
      } catch (e) {
        throw conflictWithPlaintext(e);
      }
    },
    watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
      const stream = inner.watch(prefix, opts);
      const r = keys.forPrefix(prefix);
      const plain: AsyncIterable<WatchEvent> = {
        [Symbol.asyncIterator]: async function* () {
          for await (const ev of stream) {
            if (ev.type === 'progress') yield ev;
            else {
              // A value that does not decrypt ends the watch with the error (upstream sends it as
              // an ERROR event); the watcher re-lists and meets it there.
              const kv = fromStorage(ev.kv, r ?? keys.forKey(ev.kv.key));
              const prevKv = ev.prevKv ? fromStorage(ev.prevKv, r ?? keys.forKey(ev.kv.key)) : undefined;
              yield prevKv ? { type: ev.type, kv, prevKv, revision: ev.revision } : { type: ev.type, kv, revision: ev.revision };
            }
          }
        },
      };
      return isProgressRequestable(stream) ? Object.assign(plain, { requestProgress: () => stream.requestProgress() }) : plain;
    },
    currentRevision: () => inner.currentRevision(),
    oldestRevision: () => inner.oldestRevision(),
    compact: (revision: number) => inner.compact(revision),
    ...(inner.onCompacted ? { onCompacted: inner.onCompacted.bind(inner) } : {}),
    ping: () => inner.ping(),
    close: () => inner.close(),
  };
}
