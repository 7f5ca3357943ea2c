// How objects are kept in storage: JSON bytes of the storage version, without resourceVersion
// (the mod revision is the resourceVersion, stamped on read). Decoding is memoised per KV so that
// a watch event fanned out to many watchers, or a list served from the cache, parses each stored
// value once; decoded objects are shared and must be treated as read-only (clone before mutating).
import type { KubeObject } from '../apimachinery/types.js';
import type { KV } from '../storage/storage.js';

const decoded = new WeakMap<KV, KubeObject>();
const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeForStorage(obj: KubeObject): Uint8Array {
  const meta = obj.metadata;
  if (meta && meta.resourceVersion !== undefined) {
    const { resourceVersion: _rv, ...rest } = meta;
    return encoder.encode(JSON.stringify({ ...obj, metadata: rest }));
  }
  return encoder.encode(JSON.stringify(obj));
}

/** The stored object with its resourceVersion; shared and read-only. */
export function decodeFromStorage(kv: KV, revision: number = kv.modRevision): KubeObject {
  if (revision === kv.modRevision) {
    const hit = decoded.get(kv);
    if (hit) return hit;
  }
  const obj = JSON.parse(decoder.decode(kv.value)) as KubeObject;
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  if (revision === kv.modRevision) decoded.set(kv, obj);
  return obj;
}

/** A private, mutable copy. */
export function cloneObject<T>(obj: T): T {
  return structuredClone(obj);
}
