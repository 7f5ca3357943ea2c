// Where audit events go: the log backend (pkg/audit plugin/pkg/audit/log) writing JSON lines (or
// the legacy text) to a rotated file or stdout, behind upstream's modes (options/audit.go):
//   blocking (the default): each event is written before the request goes on (ResponseComplete,
//     which comes after the answer went out, with the next write or at the end of the event loop's
//     turn); a failed write is counted (apiserver_audit_error_total{plugin="log"}) and the request
//     is answered all the same;
//   blocking-strict: as blocking, but a failure at RequestReceived fails the request (500);
//   batch: events are queued (up to --audit-log-batch-buffer-size) and written off the request's
//     path; a full queue drops the event (apiserver_audit_error_total{plugin="buffered"}).
import { Counter, type Registry } from 'prom-client';
import { encodeEventJSON, encodeEventLegacy, type AuditEvent } from './event.js';
import type { Level } from './policy.js';
import { RotatingFile } from './rotating-file.js';

export type AuditLogFormat = 'json' | 'legacy';
export type AuditLogMode = 'blocking' | 'blocking-strict' | 'batch';

export const AUDIT_LOG_FORMATS: readonly AuditLogFormat[] = ['legacy', 'json'];
export const AUDIT_LOG_MODES: readonly AuditLogMode[] = ['batch', 'blocking', 'blocking-strict'];
/** defaultBatchBufferSize. */
export const DEFAULT_BATCH_BUFFER_SIZE = 10_000;

export interface AuditLogOptions {
  /** --audit-log-path; `-` is stdout. */
  readonly path: string;
  readonly maxAgeDays?: number;
  readonly maxBackups?: number;
  readonly maxSizeMB?: number;
  readonly compress?: boolean;
  readonly format?: AuditLogFormat;
  readonly mode?: AuditLogMode;
  /** --audit-log-batch-buffer-size (batch mode). */
  readonly batchBufferSize?: number;
}

/** The audit metrics upstream keeps (pkg/audit/metrics.go), in the server's registry. */
export class AuditMetrics {
  private readonly events: Counter;
  private readonly errors: Counter<'plugin'>;
  private readonly levels: Counter<'level'>;
  /** The level counter's children, bound once: labelling per request hashes the labels each time. */
  private readonly byLevel = new Map<Level, { inc(): void }>();
  readonly rejected: Counter;

  constructor(registry: Registry | undefined) {
    const registers = registry ? [registry] : [];
    this.events = new Counter({ name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.', registers });
    this.errors = new Counter({
      name: 'apiserver_audit_error_total',
      help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.',
      labelNames: ['plugin'] as const,
      registers,
    });
    this.levels = new Counter({
      name: 'apiserver_audit_level_total',
      help: 'Counter of policy levels for audit events (1 per request).',
      labelNames: ['level'] as const,
      registers,
    });
    this.rejected = new Counter({
      name: 'apiserver_audit_requests_rejected_total',
      help: 'Counter of apiserver requests rejected due to an error in audit logging backend.',
      registers,
    });
  }

  event(): void {
    this.events.inc();
  }

  level(l: Level): void {
    let c = this.byLevel.get(l);
    if (c === undefined) {
      c = this.levels.labels(l);
      this.byLevel.set(l, c);
    }
    c.inc();
  }

  error(plugin: string, n = 1): void {
    this.errors.inc({ plugin }, n);
  }
}

/** A sink of events: false when an event could not be stored (only blocking-strict acts on it). */
export interface AuditBackend {
  /**
   * Takes the event at its stage. The answer says whether the request may go on (false only when
   * the event could not be stored and the mode says the request must fail): at once, or as a
   * promise when the write is grouped with the other events of this turn of the event loop.
   */
  processEvent(ev: AuditEvent): boolean | Promise<boolean>;
  /** Writes what is queued and closes the file. */
  shutdown(): Promise<void>;
}

interface LineSink {
  write(line: string): void;
  close(): void;
}

function openSink(o: AuditLogOptions, log: (msg: string) => void): LineSink {
  if (o.path === '-') {
    return { write: (line) => void process.stdout.write(line), close: () => {} };
  }
  const file = new RotatingFile({
    filename: o.path,
    ...(o.maxSizeMB !== undefined ? { maxSizeMB: o.maxSizeMB } : {}),
    ...(o.maxBackups !== undefined ? { maxBackups: o.maxBackups } : {}),
    ...(o.maxAgeDays !== undefined ? { maxAgeDays: o.maxAgeDays } : {}),
    ...(o.compress ? { compress: true } : {}),
    onMillError: (e) => log(`audit log: cleaning up old files failed: ${e.message}`),
  });
  return { write: (line) => file.write(line), close: () => file.close() };
}

/**
 * The log backend in the given mode. `log` receives upstream's "Error in audit plugin" lines; a
 * failing disk logs at most one line per second, however many events fail.
 */
export function createLogBackend(o: AuditLogOptions, metrics: AuditMetrics, log: (msg: string) => void): AuditBackend {
  const sink = openSink(o, log);
  const encode = (o.format ?? 'json') === 'legacy' ? encodeEventLegacy : encodeEventJSON;
  let lastLogged = 0;
  const pluginError = (plugin: string, e: unknown, n: number): void => {
    metrics.error(plugin, n);
    const now = Date.now();
    if (now - lastLogged < 1000) return;
    lastLogged = now;
    log(`Error in audit plugin '${plugin}' affecting ${n} audit events: ${e instanceof Error ? e.message : String(e)}`);
  };
  const mode = o.mode ?? 'blocking';
  if (mode !== 'batch') {
    const strict = mode === 'blocking-strict';
    // Group commit: the events of one turn of the event loop are written together, in order, with
    // one write at the end of the turn (setImmediate runs after the turn's I/O callbacks, so every
    // request parsed in it is in the group). A request waits for the write that holds its
    // RequestReceived (or ResponseStarted) line before it goes on, as upstream's blocking mode
    // writes before it returns; ResponseComplete and Panic come once the answer has gone out, so
    // nothing waits on them. Under concurrency this makes one write(2) of many lines instead of
    // one per event, which kept the event loop from parsing and answering other requests.
    let pending = '';
    let pendingCount = 0;
    let waiters: ((ok: boolean) => void)[] = [];
    let scheduled: NodeJS.Immediate | undefined;
    const flush = (): void => {
      scheduled = undefined;
      if (!pendingCount) return;
      const lines = pending;
      const n = pendingCount;
      const waiting = waiters;
      pending = '';
      pendingCount = 0;
      waiters = [];
      let ok = true;
      try {
        sink.write(lines);
      } catch (e) {
        pluginError('log', e, n);
        ok = false;
      }
      // ignoreErrorsBackend: blocking answers the request whatever the write did.
      const answer = ok || !strict;
      for (const resolve of waiting) resolve(answer);
    };
    return {
      processEvent(ev) {
        pending += encode(ev) + '\n';
        pendingCount++;
        scheduled ??= setImmediate(flush);
        if (ev.stage === 'ResponseComplete' || ev.stage === 'Panic') return true;
        return new Promise<boolean>((resolve) => waiters.push(resolve));
      },
      shutdown: async () => {
        if (scheduled) clearImmediate(scheduled);
        flush();
        sink.close();
      },
    };
  }
  // Batch: the line is made now (the event changes as the request goes on) and written after the
  // current turn of the event loop, all queued lines in one write.
  const capacity = o.batchBufferSize ?? DEFAULT_BATCH_BUFFER_SIZE;
  let queue: string[] = [];
  let scheduled: NodeJS.Immediate | undefined;
  let stopped = false;
  const flush = (): void => {
    scheduled = undefined;
    const lines = queue;
    queue = [];
    if (!lines.length) return;
    try {
      sink.write(lines.join(''));
    } catch (e) {
      pluginError('log', e, lines.length);
    }
  };
  return {
    processEvent(ev) {
      if (stopped) {
        pluginError('buffered', new Error('audit backend shut down'), 1);
        return true;
      }
      if (queue.length >= capacity) {
        pluginError('buffered', new Error('audit buffer queue blocked'), 1);
        return true;
      }
      queue.push(encode(ev) + '\n');
      scheduled ??= setImmediate(flush);
      return true;
    },
    async shutdown() {
      stopped = true;
      if (scheduled) clearImmediate(scheduled);
      flush();
      sink.close();
    },
  };
}
