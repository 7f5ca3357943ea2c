// The built-in API modules. A control plane is assembled from a list of these (KEP-4080: which
// resources are served is chosen in code); later modules (rbac, apiextensions, ...) follow suit.
import { configMapsResource, eventsResource, eventsV1EventsResource, leasesResource, namespacesResource, secretsResource, serviceAccountsResource } from '../api/resources.js';
import { builtinDefinitions } from '../api/definitions/index.js';
import { configMapStrategy } from './core/configmaps.js';
import { coreEventStrategy } from './core/events.js';
import { namespaceLifecycle } from './core/lifecycle.js';
import { SYSTEM_NAMESPACES, namespaceStrategy } from './core/namespaces.js';
import { secretStrategy } from './core/secrets.js';
import { serviceAccountStrategy } from './core/serviceaccounts.js';
import { systemNamespacesController, type SystemNamespacesController } from './core/systemnamespaces.js';
import { leaseStrategy } from './coordination/leases.js';
import { eventsV1Converter, eventsV1Strategy } from './events/events.js';
import { addToScheme, type ApiModule } from './registry.js';
import { Scheme } from '../apimachinery/scheme.js';
import { apiextensions } from '../apiextensions/module.js';

const CORE_PB = 'k8s.io.api.core.v1';
const CORE = 'io.k8s.api.core.v1.';

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
    definitions: builtinDefinitions,
    resources: [
      {
        descriptor: namespacesResource,
        strategy: namespaceStrategy,
        returnDeletedObject: true,
        goTypedBody: true,
        protobuf: { kind: `${CORE_PB}.Namespace`, list: `${CORE_PB}.NamespaceList` },
        goFieldTypes: {
          [CORE + 'NamespaceSpec']: { finalizers: '[]v1.FinalizerName' },
          [CORE + 'NamespaceStatus']: { phase: 'v1.NamespacePhase' },
          [CORE + 'NamespaceCondition']: { type: 'v1.NamespaceConditionType', status: 'v1.ConditionStatus' },
        },
      },
      { descriptor: configMapsResource, strategy: configMapStrategy, goTypedBody: true, protobuf: { kind: `${CORE_PB}.ConfigMap`, list: `${CORE_PB}.ConfigMapList` } },
      {
        descriptor: secretsResource,
        strategy: secretStrategy,
        goTypedBody: true,
        protobuf: { kind: `${CORE_PB}.Secret`, list: `${CORE_PB}.SecretList` },
        goFieldTypes: { [CORE + 'Secret']: { type: 'v1.SecretType' } },
      },
      {
        descriptor: serviceAccountsResource,
        strategy: serviceAccountStrategy,
        returnDeletedObject: true,
        goTypedBody: true,
        protobuf: { kind: `${CORE_PB}.ServiceAccount`, list: `${CORE_PB}.ServiceAccountList` },
        goFieldTypes: { [CORE + 'ObjectReference']: { uid: 'types.UID' } },
      },
      {
        descriptor: eventsResource,
        strategy: coreEventStrategy,
        keyPrefix: '/registry/events/',
        goTypedBody: true,
        protobuf: { kind: `${CORE_PB}.Event`, list: `${CORE_PB}.EventList` },
        goFieldTypes: { [CORE + 'ObjectReference']: { uid: 'types.UID' } },
      },
    ],
    admission: (ctx) => [namespaceLifecycle(ctx.registry)],
    async bootstrap(ctx) {
      const namespaces = ctx.registry.lookup('', 'v1', 'namespaces');
      if (!namespaces) return;
      const log = opts.log ?? ctx.log;
      systemNamespaces = systemNamespacesController(namespaces.store, SYSTEM_NAMESPACES, {
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
    definitions: builtinDefinitions,
    resources: [
      {
        descriptor: eventsV1EventsResource,
        strategy: eventsV1Strategy,
        keyPrefix: '/registry/events/',
        converter: eventsV1Converter,
        goTypedBody: true,
        protobuf: { kind: 'k8s.io.api.events.v1.Event', list: 'k8s.io.api.events.v1.EventList' },
        goFieldTypes: { [CORE + 'ObjectReference']: { uid: 'types.UID' } },
      },
    ],
  };
}

/** coordination.k8s.io/v1 leases. */
export function coordination(): ApiModule {
  return {
    name: 'coordination.k8s.io',
    definitions: builtinDefinitions,
    resources: [
      {
        descriptor: leasesResource,
        strategy: leaseStrategy,
        keyPrefix: '/registry/leases/',
        goTypedBody: true,
        protobuf: { kind: 'k8s.io.api.coordination.v1.Lease', list: 'k8s.io.api.coordination.v1.LeaseList' },
        goFieldTypes: { 'io.k8s.api.coordination.v1.LeaseSpec': { strategy: 'v1.CoordinatedLeaseStrategy' } },
      },
    ],
  };
}

export { apiextensions };

/**
 * A Scheme holding every kind the built-in modules serve, for code that encodes or decodes them
 * outside a control plane (tests, clients); a control plane has its own (`registry.scheme`).
 */
export function builtinScheme(): Scheme {
  const scheme = new Scheme();
  for (const m of defaultModules()) for (const r of m.resources) addToScheme(scheme, r);
  return scheme;
}

/** What `kplane serve` serves by default. */
export function defaultModules(): ApiModule[] {
  return [core(), events(), coordination(), apiextensions()];
}
