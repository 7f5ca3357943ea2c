import { WatchOverflowError } from '../storage.js';
import type { ProgressRequestable } from '../storage.js';

export interface WatchChannelOptions {
  /** Used in the overflow error message. */
  readonly prefix: string;
  /** Items buffered for a consumer that is not reading; one more ends the channel with WatchOverflowError. */
  readonly capacity: number;
  readonly signal: AbortSignal;
  /** Called once when the channel finishes for any reason (abort, end, failure, consumer break). */
  readonly onClose?: () => void;
  readonly onRequestProgress?: () => void;
}

/**
 * A single-consumer async queue between a producer that must never wait (a storage commit, a
 * cache fan-out) and a `for await` consumer. Pushing is O(1) and synchronous; a consumer that falls
 * `capacity` items behind is cut off, so one slow watcher never holds memory or other watchers hostage.
 */
export class WatchChannel<T> implements AsyncIterableIterator<T>, ProgressRequestable {
  private buffer: (T | undefined)[] = [];
  private head = 0;
  private waiter: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | undefined;
  private closed = false;
  private failure: unknown;
  private readonly onAbort = (): void => this.end();

  private capacity: number;

  constructor(private readonly opts: WatchChannelOptions) {
    this.capacity = opts.capacity;
    if (opts.signal.aborted) this.closed = true;
    else opts.signal.addEventListener('abort', this.onAbort, { once: true });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Items pushed but not yet taken by the consumer. */
  get buffered(): number {
    return this.buffer.length - this.head;
  }

  /** Returns false when the channel is closed (the producer should forget it). */
  push(item: T): boolean {
    if (this.closed) return false;
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      waiter.resolve({ value: item, done: false });
      return true;
    }
    if (this.buffered >= this.capacity) {
      // Drop what is buffered: the consumer is told to start over, and the memory is freed now.
      this.buffer = [];
      this.head = 0;
      this.fail(new WatchOverflowError(this.opts.prefix, this.capacity));
      return false;
    }
    this.buffer.push(item);
    return true;
  }

  /**
   * Lets `extra` more items be buffered, for a replay of history the producer already holds in
   * memory: the replayed items are references, and counting them would cut off every watcher
   * that starts from an old revision.
   */
  raiseCapacity(extra: number): void {
    this.capacity += extra;
  }

  /** Ends the channel with an error; buffered items are still delivered first. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = error;
    this.close();
  }

  /** Ends the channel normally; buffered items are dropped only when the signal aborted. */
  end(): void {
    if (this.opts.signal.aborted) {
      this.buffer = [];
      this.head = 0;
    }
    this.close();
  }

  requestProgress(): void {
    this.opts.onRequestProgress?.();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.buffer.length) {
      const value = this.buffer[this.head] as T;
      this.buffer[this.head++] = undefined;
      if (this.head === this.buffer.length) {
        this.buffer = [];
        this.head = 0;
      } else if (this.head >= 1024 && this.head * 2 >= this.buffer.length) {
        this.buffer = this.buffer.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) return this.finish();
    if (this.waiter !== undefined) return Promise.reject(new Error('WatchChannel supports one pending next() at a time'));
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.buffer = [];
    this.head = 0;
    this.failure = undefined;
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  private finish(): Promise<IteratorResult<T>> {
    if (this.failure !== undefined) {
      const failure = this.failure;
      this.failure = undefined;
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the producer's failure, passed on as it was
      return Promise.reject(failure);
    }
    return Promise.resolve({ value: undefined, done: true });
  }

  private close(): void {
    if (this.closed) {
      return;
    }
    this.closed = true;
    this.opts.signal.removeEventListener('abort', this.onAbort);
    const waiter = this.waiter;
    if (waiter !== undefined) {
      this.waiter = undefined;
      this.finish().then(waiter.resolve, waiter.reject);
    }
    this.opts.onClose?.();
  }
}
