// The built-in API modules. A control plane is assembled from a list of these (KEP-4080: which
// resources are served is chosen in code); later modules (rbac, apiextensions, ...) follow suit.
import { configMapsResource, eventsResource, eventsV1EventsResource, leasesResource, namespacesResource, secretsResource, serviceAccountsResource } from '../api/resources.js';
import { builtinDefinitions } from '../api/definitions/index.js';
import { StatusError } from '../apimachinery/errors.js';
import { configMapStrategy } from './core/configmaps.js';
import { coreEventStrategy } from './core/events.js';
import { namespaceLifecycle } from './core/lifecycle.js';
import { SYSTEM_NAMESPACES, namespaceStrategy } from './core/namespaces.js';
import { secretStrategy } from './core/secrets.js';
import { serviceAccountStrategy } from './core/serviceaccounts.js';
import { leaseStrategy } from './coordination/leases.js';
import { eventsV1Converter, eventsV1Strategy } from './events/events.js';
import type { ApiModule } from './registry.js';
import { apiextensions } from '../apiextensions/module.js';

/** core/v1: namespaces, configmaps, secrets, serviceaccounts, events; NamespaceLifecycle; system namespaces. */
export function core(): ApiModule {
  return {
    name: 'core',
    definitions: builtinDefinitions,
    resources: [
      { descriptor: namespacesResource, strategy: namespaceStrategy, returnDeletedObject: true, goTypedBody: true },
      { descriptor: configMapsResource, strategy: configMapStrategy, goTypedBody: true },
      { descriptor: secretsResource, strategy: secretStrategy, goTypedBody: true },
      { descriptor: serviceAccountsResource, strategy: serviceAccountStrategy, returnDeletedObject: true, goTypedBody: true },
      { descriptor: eventsResource, strategy: coreEventStrategy, keyPrefix: '/registry/events/', goTypedBody: true },
    ],
    admission: (ctx) => [namespaceLifecycle(ctx.registry)],
    async bootstrap(ctx) {
      const namespaces = ctx.registry.lookup('', 'v1', 'namespaces');
      if (!namespaces) return;
      for (const name of SYSTEM_NAMESPACES) {
        try {
          await namespaces.store.create(undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
        } catch (e) {
          if (!(e instanceof StatusError && e.code === 409)) throw e;
        }
      }
    },
  };
}

/** events.k8s.io/v1 events, stored with core/v1 events. */
export function events(): ApiModule {
  return {
    name: 'events.k8s.io',
    definitions: builtinDefinitions,
    resources: [{ descriptor: eventsV1EventsResource, strategy: eventsV1Strategy, keyPrefix: '/registry/events/', converter: eventsV1Converter, goTypedBody: true }],
  };
}

/** coordination.k8s.io/v1 leases. */
export function coordination(): ApiModule {
  return {
    name: 'coordination.k8s.io',
    definitions: builtinDefinitions,
    resources: [{ descriptor: leasesResource, strategy: leaseStrategy, keyPrefix: '/registry/leases/', goTypedBody: true }],
  };
}

export { apiextensions };

/** What `kplane serve` serves by default. */
export function defaultModules(): ApiModule[] {
  return [core(), events(), coordination(), apiextensions()];
}
