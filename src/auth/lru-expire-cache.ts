// apimachinery's LRUExpireCache: at most `maxSize` entries, each with its own time to live; the
// least recently used goes first when full, and an expired entry is dropped when it is read.
export class LRUExpireCache<V> {
  // A Map iterates in insertion order: re-inserting on every hit keeps the oldest use first.
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly maxSize: number,
    private readonly now: () => number = Date.now,
  ) {}

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (this.now() >= e.expiresAt) return undefined;
    this.entries.set(key, e);
    return e.value;
  }

  add(key: string, value: V, ttlMs: number): void {
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    if (this.entries.size > this.maxSize) this.entries.delete(this.entries.keys().next().value!);
  }

  get size(): number {
    return this.entries.size;
  }
}
