// Cluster IP and node port allocation for Services, as upstream's ipallocator and portallocator
// (pkg/registry/core/service/{ipallocator,portallocator}) over a bitmap persisted in storage the
// way upstream's etcd allocator persists it: one RangeAllocation object per range
// (/registry/ranges/serviceips, /registry/ranges/servicenodeports) holding the range and a
// big.Int bitmap of the items taken, every change a compare-and-swap on that key. Several API
// servers on one etcd therefore never hand out one item twice; within this process the
// operations on a range are also queued, so that concurrent creates do not spin on conflicts.
import { ConflictError, KeyExistsError, type KV, type Storage } from '../../../storage/storage.js';
import { parseIPv4 } from '../netvalidation.js';

/** What a range allocator refuses, with upstream's messages. */
export class AllocationError extends Error {
  override readonly name = 'AllocationError';
  constructor(
    readonly reason: 'allocated' | 'not-in-range' | 'full',
    message: string,
  ) {
    super(message);
  }
}

/** A contiguous range of items numbered 0..size-1, and how they print. */
export interface ItemRange {
  /** What the stored RangeAllocation's `range` says (a CIDR, or `30000-32767`). */
  readonly text: string;
  readonly size: number;
  /** Size of the lower, "static" band that dynamic allocation tries last (upstream's range offset). */
  readonly offset: number;
  /** The item's index, or undefined when it is not in the range. */
  indexOf(item: string | number): number | undefined;
  itemAt(index: number): string | number;
  allocatedError(): string;
  notInRangeError(item: string | number): string;
}

/** --service-node-port-range: `30000-32767` or `30000+2767` (utilnet.ParsePortRange). */
export function parsePortRange(text: string): ItemRange {
  const t = text.trim();
  let base: number;
  let size: number;
  const plus = /^(\d+)\+(\d+)$/.exec(t);
  const dash = /^(\d+)(?:-(\d+))?$/.exec(t);
  if (plus) {
    base = Number(plus[1]);
    size = Number(plus[2]) + 1;
  } else if (dash) {
    base = Number(dash[1]);
    const high = dash[2] === undefined ? base : Number(dash[2]);
    if (high < base) throw new Error(`invalid port range "${text}": end port is less than start port`);
    size = high - base + 1;
  } else {
    throw new Error(`invalid port range "${text}": must be <low>-<high> or <low>+<size-1>`);
  }
  if (base < 1 || base + size - 1 > 65535) throw new Error(`invalid port range "${text}": ports must be between 1 and 65535`);
  const display = size === 1 ? String(base) : `${base}-${base + size - 1}`;
  // portallocator.calculateRangeOffset: min 16, max 128, step 32.
  const offset = size <= 16 ? 0 : Math.min(Math.max(16, Math.floor(size / 32)), 128);
  return {
    text: display,
    size,
    offset,
    indexOf: (item) => {
      const n = Number(item);
      return Number.isInteger(n) && n >= base && n < base + size ? n - base : undefined;
    },
    itemAt: (i) => base + i,
    allocatedError: () => 'provided port is already allocated',
    notInRangeError: () => `provided port is not in the valid range. The range of valid ports is ${display}`,
  };
}

export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/**
 * --service-cluster-ip-range: an IPv4 CIDR. As upstream, the network address and the broadcast
 * address are never handed out; index 0 is the network address + 1.
 */
export function parseServiceCIDR(text: string): ItemRange & { readonly base: number; readonly prefix: number } {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(text.trim());
  const ip = m ? parseIPv4(m[1]!) : undefined;
  const prefix = m ? Number(m[2]) : NaN;
  if (!m || ip === undefined || prefix > 32) throw new Error(`invalid CIDR address: ${text} (only IPv4 service ranges are supported)`);
  if (prefix < 12) throw new Error(`specified --service-cluster-ip-range ${text} is too large; for 32-bit addresses, the mask must be >= 12`);
  const total = 2 ** (32 - prefix);
  const network = Math.floor(ip / total) * total;
  const size = Math.max(0, total - 2);
  const cidr = `${formatIPv4(network)}/${prefix}`;
  // ipallocator.calculateRangeOffset: min 16, max 256, step 16 (on the CIDR's size).
  const offset = total <= 16 ? 0 : Math.min(Math.max(16, Math.floor(total / 16)), 256);
  return {
    base: network + 1,
    prefix,
    text: cidr,
    size,
    offset,
    indexOf: (item) => {
      const n = typeof item === 'string' ? parseIPv4(item) : undefined;
      if (n === undefined) return undefined;
      const i = n - (network + 1);
      return i >= 0 && i < size ? i : undefined;
    },
    itemAt: (i) => formatIPv4(network + 1 + i),
    allocatedError: () => 'provided IP is already allocated',
    notInRangeError: (item) => `the provided IP (${String(item)}) is not in the valid range. The range of valid IPs is ${cidr}`,
  };
}

/** The bitmap as upstream stores it: big.Int.Bytes(), big-endian, bit i of the number = item i. */
export function encodeBitmap(bits: Uint8Array): string {
  let top = bits.length;
  while (top > 0 && bits[top - 1] === 0) top--;
  const out = Buffer.alloc(top);
  for (let i = 0; i < top; i++) out[top - 1 - i] = bits[i]!;
  return out.toString('base64');
}

export function decodeBitmap(data: string, size: number): Uint8Array {
  const raw = Buffer.from(data, 'base64');
  const bits = new Uint8Array(Math.ceil(size / 8));
  for (let i = 0; i < raw.length && i < bits.length; i++) bits[i] = raw[raw.length - 1 - i]!;
  // Items beyond the range (a range that shrank) are not kept.
  if (size % 8 && bits.length) bits[bits.length - 1]! &= (1 << (size % 8)) - 1;
  return bits;
}

const has = (bits: Uint8Array, i: number): boolean => ((bits[i >> 3]! >> (i & 7)) & 1) === 1;
const set = (bits: Uint8Array, i: number): void => void (bits[i >> 3]! |= 1 << (i & 7));
const clear = (bits: Uint8Array, i: number): void => void (bits[i >> 3]! &= ~(1 << (i & 7)));
/** Bit i of a bitmap (the repair loop works on snapshots). */
export { has as bitmapHas, set as bitmapSet, clear as bitmapClear };

/** The stored bitmap changed since the snapshot the repair loop worked from (upstream: a Conflict). */
export class SnapshotConflictError extends Error {
  override readonly name = 'SnapshotConflictError';
  constructor(readonly key: string) {
    super(`${key} changed since it was read`);
  }
}

/** A stored bitmap as the repair loop reads it (PersistedRange.snapshot). */
export interface RangeSnapshot {
  readonly modRevision?: number;
  /** The range text stored with it; absent when nothing is stored yet. */
  readonly range?: string;
  readonly bits: Uint8Array;
}

interface StoredRange {
  apiVersion: 'v1';
  kind: 'RangeAllocation';
  metadata: { name: string; creationTimestamp?: string };
  range: string;
  data: string;
}

/**
 * One persisted range. Every operation reads the stored bitmap (reusing the decoded copy while the
 * key's revision is unchanged), changes it and writes it back with a compare-and-swap; a lost race
 * re-reads and tries again.
 */
export class PersistedRange {
  private cached: { modRevision: number; bits: Uint8Array } | undefined;
  /** When the stored range was first written (kept on every later write, as an object's creationTimestamp is). */
  private createdAt: string | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    readonly key: string,
    readonly range: ItemRange,
    private readonly random: (n: number) => number = (n) => Math.floor(Math.random() * n),
  ) {}

  /** Runs `fn` after the operations queued before it (one at a time per range in this process). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async read(): Promise<{ kv: KV | undefined; bits: Uint8Array }> {
    const kv = await this.storage.get(this.key);
    if (!kv) return { kv, bits: new Uint8Array(Math.ceil(this.range.size / 8)) };
    if (this.cached?.modRevision === kv.modRevision) return { kv, bits: this.cached.bits.slice() };
    const stored = JSON.parse(Buffer.from(kv.value).toString('utf8')) as StoredRange;
    this.createdAt = stored.metadata.creationTimestamp;
    const bits = decodeBitmap(stored.data ?? '', this.range.size);
    this.cached = { modRevision: kv.modRevision, bits: bits.slice() };
    return { kv, bits };
  }

  private async write(kv: KV | undefined, bits: Uint8Array): Promise<void> {
    const stored: StoredRange = {
      apiVersion: 'v1',
      kind: 'RangeAllocation',
      metadata: {
        name: this.key.slice(this.key.lastIndexOf('/') + 1),
        creationTimestamp: (kv && this.createdAt) || new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
      range: this.range.text,
      data: encodeBitmap(bits),
    };
    const value = Buffer.from(JSON.stringify(stored));
    const next = kv ? await this.storage.update(this.key, value, kv.modRevision) : await this.storage.create(this.key, value);
    this.cached = { modRevision: next.modRevision, bits: bits.slice() };
  }

  /** Reads, changes and writes the bitmap until the compare-and-swap holds; `change` answers what the caller gets. */
  private modify<T>(change: (bits: Uint8Array) => { result: T; changed: boolean }): Promise<T> {
    return this.serial(async () => {
      for (let attempt = 0; ; attempt++) {
        const { kv, bits } = await this.read();
        const { result, changed } = change(bits);
        if (!changed) return result;
        try {
          await this.write(kv, bits);
          return result;
        } catch (e) {
          if ((e instanceof ConflictError || e instanceof KeyExistsError) && attempt < 100) {
            this.cached = undefined;
            continue;
          }
          throw e;
        }
      }
    });
  }

  /** Takes `item`; refuses one out of the range or already taken. `dryRun` only checks. */
  async allocate(item: string | number, dryRun = false): Promise<void> {
    const i = this.range.indexOf(item);
    if (i === undefined) throw new AllocationError('not-in-range', this.range.notInRangeError(item));
    if (dryRun) {
      const { bits } = await this.serial(() => this.read());
      if (has(bits, i)) throw new AllocationError('allocated', this.range.allocatedError());
      return;
    }
    await this.modify((bits) => {
      if (has(bits, i)) throw new AllocationError('allocated', this.range.allocatedError());
      set(bits, i);
      return { result: undefined, changed: true };
    });
  }

  /**
   * Takes a free item: a random one of the upper band first, then of the lower, "static" band
   * (upstream's randomScanStrategyWithOffset), so that statically requested items rarely collide.
   */
  async allocateNext(dryRun = false): Promise<string | number> {
    const pick = (bits: Uint8Array): number => {
      const { size, offset } = this.range;
      const bands: [number, number][] =
        offset > 0
          ? [
              [offset, size],
              [0, offset],
            ]
          : [[0, size]];
      for (const [lo, hi] of bands) {
        const n = hi - lo;
        if (n <= 0) continue;
        const start = this.random(n);
        for (let k = 0; k < n; k++) {
          const i = lo + ((start + k) % n);
          if (!has(bits, i)) return i;
        }
      }
      throw new AllocationError('full', 'range is full');
    };
    if (dryRun) {
      const { bits } = await this.serial(() => this.read());
      return this.range.itemAt(pick(bits));
    }
    return this.modify((bits) => {
      const i = pick(bits);
      set(bits, i);
      return { result: this.range.itemAt(i), changed: true };
    });
  }

  /** Gives `item` back; an item out of the range or not taken is ignored (as upstream). */
  async release(item: string | number): Promise<void> {
    const i = this.range.indexOf(item);
    if (i === undefined) return;
    await this.modify((bits) => {
      if (!has(bits, i)) return { result: undefined, changed: false };
      clear(bits, i);
      return { result: undefined, changed: true };
    });
  }

  /** Whether `item` is taken now. */
  async has(item: string | number): Promise<boolean> {
    const i = this.range.indexOf(item);
    if (i === undefined) return false;
    const { bits } = await this.serial(() => this.read());
    return has(bits, i);
  }

  /** The items taken now, in order. */
  async allocated(): Promise<(string | number)[]> {
    const { bits } = await this.serial(() => this.read());
    const out: (string | number)[] = [];
    for (let i = 0; i < this.range.size; i++) if (has(bits, i)) out.push(this.range.itemAt(i));
    return out;
  }

  /** Replaces the stored bitmap by exactly `items` (the repair at start); items outside the range are returned, not kept. */
  async replaceWith(items: Iterable<string | number>): Promise<(string | number)[]> {
    const outside: (string | number)[] = [];
    const wanted = new Uint8Array(Math.ceil(this.range.size / 8));
    for (const item of items) {
      const i = this.range.indexOf(item);
      if (i === undefined) outside.push(item);
      else set(wanted, i);
    }
    await this.modify((bits) => {
      const same = bits.length === wanted.length && bits.every((b, k) => b === wanted[k]);
      bits.set(wanted);
      return { result: undefined, changed: !same };
    });
    return outside;
  }

  /**
   * The stored bitmap as it is now, for the repair loop: its bits (empty when nothing is stored, or
   * when the stored range is another one), the range it was stored for, and the revision a
   * `replaceSnapshot` must still find.
   */
  async snapshot(): Promise<RangeSnapshot> {
    return this.serial(async () => {
      const { kv, bits } = await this.read();
      const range = kv ? (JSON.parse(Buffer.from(kv.value).toString('utf8')) as StoredRange).range : undefined;
      const same = range === undefined || range === this.range.text;
      return { ...(kv ? { modRevision: kv.modRevision } : {}), ...(range !== undefined ? { range } : {}), bits: same ? bits : new Uint8Array(bits.length) };
    });
  }

  /**
   * Stores `bits` if the key is still at the snapshot's revision (upstream's CreateOrUpdate of a
   * RangeAllocation with the snapshot's resourceVersion); throws SnapshotConflictError when an allocation or another server wrote in
   * between (storage's ConflictError or KeyExistsError when that happens during the write).
   */
  async replaceSnapshot(snap: RangeSnapshot, bits: Uint8Array): Promise<void> {
    await this.serial(async () => {
      const kv = await this.storage.get(this.key);
      if ((kv?.modRevision ?? undefined) !== snap.modRevision) throw new SnapshotConflictError(this.key);
      await this.write(kv, bits);
    });
  }

  /** The range stored under the key, if any (it differs from ours after a flag change). */
  async storedRange(): Promise<string | undefined> {
    const kv = await this.storage.get(this.key);
    if (!kv) return undefined;
    return (JSON.parse(Buffer.from(kv.value).toString('utf8')) as StoredRange).range;
  }
}

/**
 * A set of allocations done for one write (upstream's PortAllocationOperation and the cluster IP
 * transaction): items taken at once, releases deferred until commit; revert gives back what was
 * taken. A dry run only checks.
 */
export class AllocationOperation {
  private readonly taken: { range: PersistedRange; item: string | number }[] = [];
  private readonly deferred: { range: PersistedRange; item: string | number }[] = [];

  constructor(readonly dryRun: boolean) {}

  async allocate(range: PersistedRange, item: string | number): Promise<void> {
    await range.allocate(item, this.dryRun);
    if (!this.dryRun) this.taken.push({ range, item });
  }

  async allocateNext(range: PersistedRange): Promise<string | number> {
    const item = await range.allocateNext(this.dryRun);
    if (!this.dryRun) this.taken.push({ range, item });
    return item;
  }

  releaseDeferred(range: PersistedRange, item: string | number): void {
    this.deferred.push({ range, item });
  }

  async commit(): Promise<void> {
    if (this.dryRun) return;
    for (const { range, item } of this.deferred.splice(0)) await range.release(item);
    this.taken.length = 0;
  }

  async revert(): Promise<void> {
    if (this.dryRun) return;
    this.deferred.length = 0;
    for (const { range, item } of this.taken.splice(0).reverse()) await range.release(item);
  }
}
