// A small core/v1 Event recorder for the cloud controllers (client-go's record.EventRecorder with its
// correlator reduced to the part users see): an event repeated for the same object, type, reason
// and message bumps `count` and `lastTimestamp` of the one Event instead of writing a new one, so
// `kubectl describe` shows "(x3 over 20s)". Recording never fails the caller: errors are logged.
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { asLogger, type Logger } from '../../golang/klog.js';

const EVENTS: GVR = { group: '', version: 'v1', resource: 'events' };

export interface EventRecorderOptions {
  readonly client: KubeClient;
  /** The event source's component, as upstream names it (e.g. `service-controller`). */
  readonly component: string;
  readonly host?: string;
  readonly log?: (msg: string) => void;
  readonly now?: () => Date;
}

interface Seen {
  name: string;
  namespace: string;
  count: number;
}

export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly log: Logger;
  private pending: Promise<void> = Promise.resolve();

  constructor(private readonly opts: EventRecorderOptions) {
    this.log = asLogger(opts.log);
  }

  /**
   * Records an event about `obj` (kind and apiVersion are given because informer objects may lack
   * them). Events of cluster-scoped objects go to `default`, as upstream's recorder puts them.
   * Writes are serialised in the background; `flush()` waits for them.
   */
  event(obj: KubeObject, kind: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.log.v(2).info('Event occurred', 'object', obj.metadata?.name, 'kind', kind, 'type', type, 'reason', reason, 'message', message);
    this.pending = this.pending.then(() => this.write(obj, kind, type, reason, message)).catch(() => {});
  }

  flush(): Promise<void> {
    return this.pending;
  }

  private async write(obj: KubeObject, kind: string, type: string, reason: string, message: string): Promise<void> {
    const m = obj.metadata ?? {};
    const namespace = m.namespace || 'default';
    const key = JSON.stringify([m.uid ?? '', m.namespace ?? '', m.name ?? '', kind, type, reason, message]);
    const now = (this.opts.now ?? (() => new Date()))();
    const ts = now.toISOString().replace(/\.\d+Z$/, 'Z');
    const prior = this.seen.get(key);
    try {
      if (prior) {
        prior.count++;
        await this.opts.client.patch(EVENTS, prior.namespace, prior.name, 'merge', { count: prior.count, lastTimestamp: ts });
        return;
      }
    } catch (e) {
      // The event went (TTL, or deleted): write a new one.
      this.log.v(4).info('Could not update an event, writing a new one', 'err', (e as Error).message);
      this.seen.delete(key);
    }
    const name = `${m.name ?? 'unknown'}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`;
    try {
      await this.opts.client.create(EVENTS, namespace, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          kind,
          apiVersion: 'v1',
          name: m.name,
          ...(m.namespace ? { namespace: m.namespace } : {}),
          uid: m.uid,
          resourceVersion: m.resourceVersion,
        },
        reason,
        message,
        type,
        source: { component: this.opts.component, ...(this.opts.host ? { host: this.opts.host } : {}) },
        firstTimestamp: ts,
        lastTimestamp: ts,
        count: 1,
        reportingComponent: this.opts.component,
        reportingInstance: this.opts.host ?? '',
      });
      this.seen.set(key, { name, namespace, count: 1 });
      if (this.seen.size > 4096) this.seen.delete(this.seen.keys().next().value!);
    } catch (e) {
      this.log.error(e, 'Could not record an event', 'reason', reason, 'object', `${m.namespace ? `${m.namespace}/` : ''}${m.name ?? ''}`);
    }
  }
}
