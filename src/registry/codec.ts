// How objects are kept in storage: JSON bytes of the storage version without resourceVersion (the
// mod revision is the resourceVersion, stamped on read), with kind, apiVersion and metadata first
// as kube-apiserver writes them.
//
// Decoding is memoised for recently decoded values only: a watch event fanned out to many watchers
// is parsed once, while the watch cache (which keeps every current KV) does not also pin a parsed
// copy of every object. Decoded objects are shared and must be treated as read-only.
import type { KubeObject } from '../apimachinery/types.js';
import type { KV } from '../storage/storage.js';
import { parseJSONExact, stringifyJSON } from '../golang/json-int64.js';
import { deepCopyJSON } from '../apimachinery/deepcopy.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeForStorage(obj: KubeObject): Uint8Array {
  const { kind, apiVersion, metadata, ...rest } = obj;
  let meta = metadata;
  if (meta && meta.resourceVersion !== undefined) {
    const { resourceVersion: _rv, ...m } = meta;
    meta = m;
  }
  return encoder.encode(stringifyJSON({ kind, apiVersion, metadata: meta, ...rest }));
}

/**
 * Decodes stored values, remembering the most recent ones (one per store: no shared state).
 *
 * Values decoded for the answer to a write (create, update, delete) are not remembered: on a
 * write-heavy load that memo promoted a parsed object per write into V8's old generation (a
 * sampling heap profile of 10,000 creates at 1,000/s: 19 MB of promoted samples with it, 3 MB
 * without, even with a memo of 8 entries), which major GCs of 25-30 ms then collected once 60,000
 * objects were stored. A watch event of the write decodes the value once and remembers it.
 */
export class StorageDecoder {
  private readonly memo = new Map<KV, KubeObject>();
  constructor(private readonly capacity = 4096) {}

  /** The stored object with its resourceVersion; shared and read-only. `remember: false` for a write's answer. */
  decode(kv: KV, revision: number = kv.modRevision, remember = true): KubeObject {
    const memoised = revision === kv.modRevision;
    if (memoised) {
      const hit = this.memo.get(kv);
      if (hit) return hit;
    }
    const obj = parseJSONExact(decoder.decode(kv.value)) as KubeObject;
    obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
    if (memoised && remember) {
      if (this.memo.size >= this.capacity) this.memo.delete(this.memo.keys().next().value!);
      this.memo.set(kv, obj);
    }
    return obj;
  }
}

/** A private, mutable copy. */
export function cloneObject<T>(obj: T): T {
  return deepCopyJSON(obj);
}
