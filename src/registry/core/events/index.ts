// core/v1 events (stored with events.k8s.io/v1 events): everything the control plane needs to
// serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { coreReferenceDefinitions, coreReferenceGoFieldTypes } from '../references.js';
import { coreEventDefinitions } from './definitions.js';
import { coreEventStrategy } from './strategy.js';

export const eventsResource: ResourceDescriptor = {
  group: '',
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
  definitionName: 'io.k8s.api.core.v1.Event',
};

export const coreEvents: ResourceRegistration = {
  descriptor: eventsResource,
  strategy: coreEventStrategy,
  keyPrefix: '/registry/events/',
  definitions: { ...coreEventDefinitions, ...coreReferenceDefinitions },
  protobuf: { kind: 'k8s.io.api.core.v1.Event', list: 'k8s.io.api.core.v1.EventList' },
  goFieldTypes: coreReferenceGoFieldTypes,
  goTypedBody: true,
};
