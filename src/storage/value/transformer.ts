// Value transformers: what stands between a stored object's bytes and the bytes the backend holds
// (k8s.io/apiserver/pkg/storage/value). Encryption at rest is a chain of them, chosen per resource.
// Transformations are synchronous: every provider kplane supports runs in process (node:crypto,
// @noble/ciphers), so a read never yields to the event loop half-way through a list.

/** What a transformation may use to bind a value to where it is stored (AES-GCM's additional data). */
export interface TransformContext {
  /** The storage key (upstream's authenticatedDataString): a value copied under another key does not open. */
  readonly authenticatedData: Uint8Array;
  /** The group resource the value belongs to (`secrets`, `widgets.example.com`), for metrics. */
  readonly resource: string;
}

export interface FromStorage {
  readonly data: Uint8Array;
  /**
   * The value was read by a provider or key other than the one that writes now: an update must
   * write it again even when the object did not change (how `kubectl replace` re-encrypts).
   */
  readonly stale: boolean;
}

export interface Transformer {
  /** Undoes `toStorage`; throws a {@link TransformError} when the value cannot be read. */
  fromStorage(data: Uint8Array, ctx: TransformContext): FromStorage;
  toStorage(data: Uint8Array, ctx: TransformContext): Uint8Array;
}

/** A value that could not be transformed; the message is upstream's. */
export class TransformError extends Error {
  override readonly name = 'TransformError';
  readonly code = 'KPL_STORAGE_TRANSFORM';
}

/**
 * value.RecordTransformation's sink: apiserver_storage_transformation_operations_total and
 * apiserver_storage_transformation_duration_seconds (observed on success only, as upstream).
 */
export interface TransformationMetrics {
  record(o: {
    readonly resource: string;
    readonly type: 'from_storage' | 'to_storage';
    readonly prefix: string;
    readonly durationSeconds: number;
    readonly ok: boolean;
  }): void;
}

export interface PrefixTransformer {
  readonly prefix: Uint8Array;
  readonly transformer: Transformer;
}

const ENCRYPTED_PREFIX = Buffer.from('k8s:enc:');

function hasPrefix(data: Uint8Array, prefix: Uint8Array): boolean {
  if (data.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (data[i] !== prefix[i]) return false;
  return true;
}

/**
 * identity.NewEncryptCheckTransformer: writes as is, and refuses to read a value that carries the
 * `k8s:enc:` prefix (encrypted by a provider this server no longer has).
 */
export const identityTransformer: Transformer = {
  fromStorage(data) {
    if (hasPrefix(data, ENCRYPTED_PREFIX)) throw new TransformError('identity transformer tried to read encrypted data');
    return { data, stale: false };
  },
  toStorage: (data) => data,
};

function nowNs(): bigint {
  return process.hrtime.bigint();
}

function secondsSince(startNs: bigint): number {
  return Number(nowNs() - startNs) / 1e9;
}

/**
 * value.NewPrefixTransformers: reads with the first transformer whose prefix the value starts with
 * (trying later ones when a match fails, since two providers of one kind share a prefix during a
 * rotation), and writes with the first transformer, prefix prepended. A value read by any but the
 * first is stale. An empty prefix (identity) that fails never counts as an error: the value was
 * encrypted, and a later provider may read it.
 */
export class PrefixTransformers implements Transformer {
  /** Metric labels: from_storage names an empty prefix "identity", to_storage leaves it empty (as upstream). */
  private readonly labels: string[];
  private readonly writeLabel: string;

  constructor(
    private readonly transformers: readonly PrefixTransformer[],
    /** The error when no prefix matches, e.g. "no matching prefix found". */
    private readonly noMatch: string,
    private readonly metrics?: TransformationMetrics,
  ) {
    if (transformers.length === 0) throw new Error('PrefixTransformers needs at least one transformer');
    this.labels = transformers.map((t) => (t.prefix.length === 0 ? 'identity' : Buffer.from(t.prefix).toString('latin1')));
    this.writeLabel = Buffer.from(transformers[0]!.prefix).toString('latin1');
  }

  fromStorage(data: Uint8Array, ctx: TransformContext): FromStorage {
    const start = nowNs();
    const errs: string[] = [];
    for (let i = 0; i < this.transformers.length; i++) {
      const t = this.transformers[i]!;
      if (!hasPrefix(data, t.prefix)) continue;
      let result: FromStorage;
      try {
        result = t.transformer.fromStorage(t.prefix.length === 0 ? data : data.subarray(t.prefix.length), ctx);
      } catch (e) {
        if (t.prefix.length === 0) continue;
        this.metrics?.record({ resource: ctx.resource, type: 'from_storage', prefix: this.labels[i]!, durationSeconds: secondsSince(start), ok: false });
        errs.push(e instanceof Error ? e.message : String(e));
        continue;
      }
      this.metrics?.record({ resource: ctx.resource, type: 'from_storage', prefix: this.labels[i]!, durationSeconds: secondsSince(start), ok: true });
      return i === 0 ? result : { data: result.data, stale: true };
    }
    // utilerrors.Reduce(NewAggregate(errs)): one error as itself, several as "[a, b]" (duplicates once).
    if (errs.length > 0) {
      const unique = [...new Set(errs)];
      throw new TransformError(unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`);
    }
    this.metrics?.record({ resource: ctx.resource, type: 'from_storage', prefix: 'unknown', durationSeconds: secondsSince(start), ok: false });
    throw new TransformError(this.noMatch);
  }

  toStorage(data: Uint8Array, ctx: TransformContext): Uint8Array {
    const start = nowNs();
    const first = this.transformers[0]!;
    let out: Uint8Array;
    try {
      out = first.transformer.toStorage(data, ctx);
    } catch (e) {
      this.metrics?.record({ resource: ctx.resource, type: 'to_storage', prefix: this.writeLabel, durationSeconds: secondsSince(start), ok: false });
      throw e;
    }
    this.metrics?.record({ resource: ctx.resource, type: 'to_storage', prefix: this.writeLabel, durationSeconds: secondsSince(start), ok: true });
    if (first.prefix.length === 0) return out;
    const prefixed = Buffer.allocUnsafe(first.prefix.length + out.length);
    prefixed.set(first.prefix, 0);
    prefixed.set(out, first.prefix.length);
    return prefixed;
  }
}
