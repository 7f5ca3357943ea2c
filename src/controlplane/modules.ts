// The built-in API modules. A control plane is assembled from a list of these (KEP-4080: which
// resources are served is chosen in code); each lists its kinds, which are self-contained modules
// (descriptor, strategy, OpenAPI definitions, protobuf messages, Go field types) in their folders.
import { leases } from '../registry/coordination/leases/index.js';
import { configMaps } from '../registry/core/configmaps/index.js';
import { coreEvents } from '../registry/core/events/index.js';
import { namespaces } from '../registry/core/namespaces/index.js';
import { namespaceLifecycle } from '../registry/core/namespaces/lifecycle.js';
import { SYSTEM_NAMESPACES } from '../registry/core/namespaces/strategy.js';
import { systemNamespacesController, type SystemNamespacesController } from '../controllers/systemnamespaces.js';
import { secrets } from '../registry/core/secrets/index.js';
import { serviceAccounts } from '../registry/core/serviceaccounts/index.js';
import { eventsV1Events } from '../registry/events/events/index.js';
import { addToScheme, type ApiModule } from '../registry/registry.js';
import { Scheme } from '../apimachinery/scheme.js';
import { apiextensions } from '../apiextensions/module.js';

export interface CoreOptions {
  /** Where the system namespaces controller reports failures (default: the control plane's log). */
  readonly log?: (msg: string) => void;
  /** Pause between the system namespaces controller's rounds (upstream's minute; tests shorten it). */
  readonly systemNamespacesIntervalMs?: number;
}

/**
 * core/v1: namespaces, configmaps, secrets, serviceaccounts, events; NamespaceLifecycle; the
 * system namespaces controller (started by bootstrap, stopped by shutdown).
 */
export function core(opts: CoreOptions = {}): ApiModule {
  let systemNamespaces: SystemNamespacesController | undefined;
  return {
    name: 'core',
    resources: [namespaces, configMaps, secrets, serviceAccounts, coreEvents],
    admission: (ctx) => [namespaceLifecycle(ctx.registry)],
    async bootstrap(ctx) {
      if (!ctx.registry.lookup('', 'v1', 'namespaces')) return;
      const log = opts.log ?? ctx.log;
      systemNamespaces = systemNamespacesController(ctx.client, SYSTEM_NAMESPACES, {
        ...(opts.systemNamespacesIntervalMs !== undefined ? { intervalMs: opts.systemNamespacesIntervalMs } : {}),
        ...(log ? { log } : {}),
      });
      await systemNamespaces.start();
    },
    async shutdown() {
      await systemNamespaces?.stop();
    },
  };
}

/** events.k8s.io/v1 events, stored with core/v1 events. */
export function events(): ApiModule {
  return {
    name: 'events.k8s.io',
    resources: [eventsV1Events],
  };
}

/** coordination.k8s.io/v1 leases. */
export function coordination(): ApiModule {
  return {
    name: 'coordination.k8s.io',
    resources: [leases],
  };
}

export { apiextensions };

/** What `kplane serve` serves by default. */
export function defaultModules(): ApiModule[] {
  return [core(), events(), coordination(), apiextensions()];
}

/** A Scheme holding every kind the default modules serve, for code outside a control plane (a control plane has its own: `registry.scheme`). */
export function builtinScheme(): Scheme {
  const scheme = new Scheme();
  for (const m of defaultModules()) for (const r of m.resources) addToScheme(scheme, r);
  return scheme;
}
