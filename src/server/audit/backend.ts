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
  processEvent(ev: AuditEvent): boolean;
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
  const writeLine = (line: string): boolean => {
    try {
      sink.write(line);
      return true;
    } catch (e) {
      pluginError('log', e, 1);
      return false;
    }
  };
  const mode = o.mode ?? 'blocking';
  if (mode !== 'batch') {
    const strict = mode === 'blocking-strict';
    // ResponseComplete comes once the answer has gone out: nothing waits on its write, so its line
    // joins the next write (the next event's, or at the end of this turn of the event loop), in
    // order. Every other stage is written before the request goes on, with what waits before it.
    let pending = '';
    let pendingCount = 0;
    let scheduled: NodeJS.Immediate | undefined;
    const flushPending = (): void => {
      scheduled = undefined;
      if (!pendingCount) return;
      const lines = pending;
      const n = pendingCount;
      pending = '';
      pendingCount = 0;
      try {
        sink.write(lines);
      } catch (e) {
        pluginError('log', e, n);
      }
    };
    return {
      processEvent(ev) {
        const line = encode(ev) + '\n';
        if (ev.stage === 'ResponseComplete') {
          pending += line;
          pendingCount++;
          scheduled ??= setImmediate(flushPending);
          return true;
        }
        let ok: boolean;
        if (!pendingCount) ok = writeLine(line);
        else {
          // One write for what waited and this line.
          const lines = pending + line;
          const n = pendingCount + 1;
          pending = '';
          pendingCount = 0;
          ok = true;
          try {
            sink.write(lines);
          } catch (e) {
            pluginError('log', e, n);
            ok = false;
          }
        }
        // ignoreErrorsBackend: blocking answers the request whatever the write did.
        return ok || !strict;
      },
      shutdown: async () => {
        if (scheduled) clearImmediate(scheduled);
        flushPending();
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
