// Reused memory for large response bodies (the JSON of a list).
//
// A list of 100 objects of 1-2 KiB is a 130-190 KB answer. Allocated anew per request, that
// memory is an ArrayBuffer which V8 counts as external memory and frees only in a GC: a closed
// loop of such lists ran a scavenge every ~150 lists and, at times, a full mark-compact as often,
// a cost per byte sent (and the kernel zeroes the fresh pages of each one too). A body buffer
// handed back once its response has sent it is used for the next list instead.
import { ServerResponse } from 'node:http';
import { Http2ServerResponse } from 'node:http2';
import type { Writable } from 'node:stream';

export interface BodyBuffersOptions {
  /** Bodies smaller than this are allocated as usual (Buffer's own pool serves small sizes). Default 16 KiB. */
  readonly minBytes?: number;
  /** Bodies larger than this are allocated as usual and never kept. Default 4 MiB. */
  readonly maxBytes?: number;
  /** Bytes of free buffers kept at most. Default 32 MiB. */
  readonly maxFreeBytes?: number;
  /** Free buffers are dropped after this long without a `take` (ms). Default 30,000. */
  readonly idleMs?: number;
}

/** Sizes served are rounded up to a multiple of this, so that lists of similar lengths share buffers. */
const GRANULE = 64 * 1024;

/**
 * Free buffers for response bodies: `take` one, and `give` it back once nothing reads it anymore
 * (for a response: see finishedWhenSent). As many are kept as were in flight at once, within
 * `maxFreeBytes`; all are dropped once none was taken for `idleMs`.
 */
export class BodyBuffers {
  private free: Buffer[] = [];
  private freeBytes = 0;
  private takenSinceTick = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly minBytes: number;
  private readonly maxBytes: number;
  private readonly maxFreeBytes: number;
  private readonly idleMs: number;

  constructor(opts: BodyBuffersOptions = {}) {
    this.minBytes = opts.minBytes ?? 16 * 1024;
    this.maxBytes = opts.maxBytes ?? 4 * 1024 * 1024;
    this.maxFreeBytes = opts.maxFreeBytes ?? 32 * 1024 * 1024;
    this.idleMs = opts.idleMs ?? 30_000;
  }

  /** take and give as functions to hand on, made once (a closure per request costs tsx a defineProperty call). */
  readonly takeFn = (size: number): Buffer => this.take(size);
  readonly giveFn = (buf: Buffer): void => this.give(buf);

  /** Buffers kept for reuse now, and their bytes. */
  get kept(): { count: number; bytes: number } {
    return { count: this.free.length, bytes: this.freeBytes };
  }

  /** A buffer of at least `size` bytes, contents undefined: the smallest free one that fits, or a new one. */
  take(size: number): Buffer {
    if (size < this.minBytes || size > this.maxBytes) return Buffer.allocUnsafe(size);
    this.takenSinceTick = true;
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i]!.length;
      if (len >= size && (best < 0 || len < this.free[best]!.length)) best = i;
    }
    if (best < 0) return Buffer.allocUnsafeSlow(Math.ceil(size / GRANULE) * GRANULE);
    const b = this.free[best]!;
    this.free[best] = this.free[this.free.length - 1]!;
    this.free.pop();
    this.freeBytes -= b.length;
    return b;
  }

  /** Hands back a buffer from `take`; the caller must not touch it afterwards. */
  give(buf: Buffer): void {
    // Only whole buffers of the sizes this pool makes (not a view of other memory).
    if (buf.length < this.minBytes || buf.length > this.maxBytes || buf.length % GRANULE !== 0 || buf.byteOffset !== 0 || buf.buffer.byteLength !== buf.length)
      return;
    if (this.freeBytes + buf.length > this.maxFreeBytes) return;
    this.free.push(buf);
    this.freeBytes += buf.length;
    if (this.timer === undefined) {
      this.takenSinceTick = false;
      this.timer = setInterval(() => this.tick(), this.idleMs);
      this.timer.unref();
    }
  }

  /** Drops every free buffer (and stops the idle timer). */
  clear(): void {
    this.free = [];
    this.freeBytes = 0;
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.takenSinceTick) this.takenSinceTick = false;
    else this.clear();
  }
}

/**
 * The stream whose 'finish' means that everything written to `res` has left this process's
 * memory: node's own HTTP/1.1 response ('finish' follows the callback of its last socket write)
 * and the HTTP/2 stream of a compatibility response ('finish' follows the callbacks of its
 * writes, which complete once the session has written their data out). An aborted response
 * does not finish. Undefined for anything else: the in-process loopback response, for one,
 * hands its chunks on to a reader, so a body written to it must never be reused.
 */
export function finishedWhenSent(res: unknown): Writable | undefined {
  if (res instanceof ServerResponse) return res;
  if (res instanceof Http2ServerResponse) return res.stream;
  return undefined;
}
