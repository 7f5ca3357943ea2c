// --encryption-provider-config-automatic-reload (upstream's DynamicEncryptionConfigContent): the
// file is read again every poll interval (upstream's is a minute); when its content changed and it
// loads, the new transformers replace the old ones for every later read and write. A file that
// does not load leaves the old ones in place and is tried again at the next poll.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadEncryptionConfig, type ResourceTransformers } from './config.js';
import type { TransformationMetrics } from './transformer.js';

/** upstream's EncryptionConfigFileChangePollDuration. */
export const DEFAULT_RELOAD_INTERVAL_MS = 60_000;

export interface EncryptionConfigReloaderOptions {
  readonly path: string;
  /** What the transformers were built from at start (its content hash is the baseline). */
  readonly initialContent: Buffer | undefined;
  readonly intervalMs?: number;
  readonly metrics?: TransformationMetrics;
  /** Takes the new transformers. */
  readonly apply: (t: ResourceTransformers) => void;
  /** Each attempt's outcome (apiserver_encryption_config_controller_automatic_reloads_total, a log line). */
  readonly onReload: (r: { readonly ok: true } | { readonly ok: false; readonly error: Error }) => void;
}

function hashOf(content: Buffer | undefined): string {
  return content === undefined ? '' : createHash('sha256').update(content).digest('hex');
}

function readContent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** Reads the file's bytes as the reloader compares them (undefined when unreadable). */
export const readConfigContent = readContent;

export class EncryptionConfigReloader {
  private lastHash: string;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: EncryptionConfigReloaderOptions) {
    this.lastHash = hashOf(opts.initialContent);
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.check(), this.opts.intervalMs ?? DEFAULT_RELOAD_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One poll: nothing when the content is unchanged; else load and apply, or report why not. */
  check(): void {
    const content = readContent(this.opts.path);
    const hash = hashOf(content);
    if (content !== undefined && hash === this.lastHash) return;
    let next: ResourceTransformers;
    try {
      next = loadEncryptionConfig(this.opts.path, this.opts.metrics);
    } catch (e) {
      this.opts.onReload({ ok: false, error: new Error(`error processing encryption config file ${this.opts.path}: ${(e as Error).message}`, { cause: e }) });
      return;
    }
    this.opts.apply(next);
    this.lastHash = hash;
    this.opts.onReload({ ok: true });
  }
}
