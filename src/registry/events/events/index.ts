// events.k8s.io/v1 events (stored with core/v1 events, converted on the way): everything the
// control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { coreReferenceDefinitions, coreReferenceGoFieldTypes } from '../../core/references.js';
import { eventsDefinitions } from './definitions.js';
import { eventsV1Converter, eventsV1Strategy } from './strategy.js';

// ---- events.k8s.io/v1
export const eventsV1EventsResource: ResourceDescriptor = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  shortNames: ['ev'],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.events.v1.Event',
};

export const eventsV1Events: ResourceRegistration = {
  descriptor: eventsV1EventsResource,
  strategy: eventsV1Strategy,
  keyPrefix: '/registry/events/',
  converter: eventsV1Converter,
  // regarding/related are core/v1 ObjectReferences, deprecatedSource a core/v1 EventSource.
  definitions: { ...eventsDefinitions, ...coreReferenceDefinitions },
  protobuf: { kind: 'k8s.io.api.events.v1.Event', list: 'k8s.io.api.events.v1.EventList' },
  goFieldTypes: coreReferenceGoFieldTypes,
  goTypedBody: true,
};
