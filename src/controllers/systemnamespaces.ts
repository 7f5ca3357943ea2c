// The system namespaces controller (pkg/controlplane/controller/systemnamespaces): creates the
// system namespaces that are missing at start, and again every minute, so that one removed behind
// the API's back (they cannot be deleted through it) comes back. Failures are logged and retried
// on the next round, never thrown. It reads and writes through a client, as upstream's does through
// the loopback clientset, so its creates are admitted, validated and get managedFields like any.
import { StatusError } from '../apimachinery/errors.js';
import type { GVR, KubeClient } from '../client/types.js';
import { asLogger } from '../golang/klog.js';

const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };

export interface SystemNamespacesOptions {
  /** Pause between two rounds (upstream: one minute). */
  readonly intervalMs?: number;
  readonly log?: (msg: string) => void;
}

export interface SystemNamespacesController {
  /** Runs the first round, then one every interval until stop(). */
  start(): Promise<void>;
  /** Ends the rounds; resolves once a round under way has finished. */
  stop(): Promise<void>;
}

const ONE_MINUTE_MS = 60_000;

export function systemNamespacesController(client: KubeClient, names: readonly string[], opts: SystemNamespacesOptions = {}): SystemNamespacesController {
  const intervalMs = opts.intervalMs ?? ONE_MINUTE_MS;
  const log = asLogger(opts.log);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  // createNamespaceIfNeeded: one the cache (or storage) has, even terminating, is left alone.
  // resourceVersion 0 reads the watch cache, where upstream reads its informer's lister.
  const ensure = async (name: string): Promise<void> => {
    try {
      await client.get(NAMESPACES, undefined, name, { resourceVersion: '0' });
      return;
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 404)) throw e;
    }
    try {
      await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    } catch (e) {
      if (!(e instanceof StatusError && e.code === 409)) throw e;
    }
  };
  const round = async (): Promise<void> => {
    for (const name of names) {
      if (stopped) return;
      try {
        await ensure(name);
      } catch (e) {
        log.error(e, 'Unable to create a required namespace', 'namespace', name);
      }
    }
  };
  // wait.Until: the next round starts an interval after the last one ended.
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = round().finally(schedule);
    }, intervalMs);
    timer.unref();
  };

  return {
    async start() {
      running = round();
      await running;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
