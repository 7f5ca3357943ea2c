// io.k8s.api.events.v1: the newer Event API (events.k8s.io/v1). Same storage as core v1 Events,
// different field names; shapes follow upstream's generated OpenAPI, descriptions are our own.

import type { Definitions } from '../../../apimachinery/schema.js';
import { CORE, META, apiVersionField, int32, kind, kindField, listKind, objectMetaField, ref, str, struct } from '../../../apimachinery/definitions/util.js';

const EV = 'io.k8s.api.events.v1.';
const GV = { group: 'events.k8s.io', version: 'v1' };

export const eventsDefinitions: Definitions = {
  [EV + 'Event']: kind(
    { ...GV, kind: 'Event' },
    'Event reports something that happened in the system, usually a state change of an object. Events are kept for a limited time and are informational only.',
    {
      action: str('Machine-readable description of what was done (or failed) to the regarding object, at most 128 characters.'),
      apiVersion: apiVersionField,
      deprecatedCount: int32('Occurrence count, kept for compatibility with core/v1 Event.'),
      deprecatedFirstTimestamp: ref(META + 'Time', 'First-seen time, kept for compatibility with core/v1 Event.'),
      deprecatedLastTimestamp: ref(META + 'Time', 'Last-seen time, kept for compatibility with core/v1 Event.'),
      deprecatedSource: ref(CORE + 'EventSource', 'Reporter, kept for compatibility with core/v1 Event.'),
      eventTime: ref(META + 'MicroTime', 'When the event was first observed. Required.'),
      kind: kindField,
      metadata: objectMetaField(),
      note: str('Human-readable description of what happened, at most 1kB.'),
      reason: str('Machine-readable reason for the action, at most 128 characters.'),
      regarding: ref(CORE + 'ObjectReference', 'The object this event is about.'),
      related: ref(CORE + 'ObjectReference', 'A second object involved, if any.'),
      reportingController: str('Name of the controller that emitted the event, e.g. "kubernetes.io/kubelet".'),
      reportingInstance: str('ID of the emitting controller instance, e.g. "kubelet-xyzf".'),
      series: ref(EV + 'EventSeries', 'Data about the series this event belongs to; unset for a one-off event.'),
      type: str('Type of the event: "Normal" or "Warning".'),
    },
    { required: ['eventTime'] },
  ),

  [EV + 'EventList']: listKind(GV, EV + 'Event', 'Event', 'The events.'),

  [EV + 'EventSeries']: struct(
    'EventSeries describes a series of recurring events; the reporter updates it on a heartbeat rather than on every occurrence.',
    {
      count: int32('Occurrences in the series up to the last heartbeat.'),
      lastObservedTime: ref(META + 'MicroTime', 'When the last occurrence was seen before the last heartbeat.'),
    },
    { required: ['count', 'lastObservedTime'] },
  ),
};
