// Messages between SqliteStorage (main thread) and its writer (a worker thread, or in-process).
// Values travel packed in one ArrayBuffer per message, addressed by offset and length, so a batch
// is one allocation that can be transferred instead of one structured-clone copy per value (a
// pooled Buffer would otherwise drag its whole 8 KiB slab along).

export type WireWrite =
  | { readonly op: 'create'; readonly key: string; readonly off: number; readonly len: number }
  | { readonly op: 'update'; readonly key: string; readonly off: number; readonly len: number; readonly expected: number }
  | { readonly op: 'delete'; readonly key: string; readonly expected: number | undefined };

/** A stored KV of the key the write names; its value lies in the reply's `values`. */
export interface WireKv {
  readonly createRev: number;
  readonly modRev: number;
  readonly off: number;
  readonly len: number;
}

export type WireOutcome =
  /** `prev` is the KV before an update or delete (absent for a create). */
  | { readonly ok: true; readonly rev: number; readonly createRev: number; readonly prev?: WireKv }
  | { readonly ok: false; readonly err: 'exists' | 'notfound' }
  | { readonly ok: false; readonly err: 'conflict'; readonly current: WireKv };

export type ToWriter =
  | { readonly type: 'batch'; readonly id: number; readonly writes: WireWrite[]; readonly values: Uint8Array }
  | { readonly type: 'compact'; readonly id: number; readonly revision: number }
  | { readonly type: 'close' };

export type FromWriter =
  | { readonly type: 'ready'; readonly revision: number; readonly compacted: number }
  | { readonly type: 'open-failed'; readonly busy: boolean; readonly message: string }
  /** The batch committed (durably) at `revision`; outcomes are in the order of the batch's writes. */
  | { readonly type: 'batch'; readonly id: number; readonly ok: true; readonly revision: number; readonly outcomes: WireOutcome[]; readonly values: Uint8Array }
  /** The transaction failed: no write of the batch happened. */
  | { readonly type: 'batch'; readonly id: number; readonly ok: false; readonly message: string }
  /** History at or below `compacted` is gone (every chunk deleted). */
  | { readonly type: 'compact-done'; readonly id: number; readonly compacted: number }
  | { readonly type: 'compact-failed'; readonly id: number; readonly message: string }
  | { readonly type: 'background-error'; readonly message: string }
  /** Something the operator should hear about (long work while opening). */
  | { readonly type: 'notice'; readonly message: string }
  | { readonly type: 'closed' };

export interface WriterConfig {
  readonly path: string;
  /** Revisions one compaction transaction covers. */
  readonly compactionChunkRows: number;
  /** SQLite's wal_autocheckpoint: WAL pages after which a commit also checkpoints. */
  readonly walAutoCheckpointPages: number;
}
