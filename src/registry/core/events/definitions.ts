// io.k8s.api.core.v1.Event: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { Definitions } from '../../../apimachinery/schema.js';
import { CORE, META, apiVersionField, int32, kind, kindField, listKind, objectMetaField, ref, str, struct } from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const gvk = (k: string) => ({ group: '', kind: k, version: 'v1' });

export const coreEventDefinitions: Definitions = {
  [CORE + 'Event']: kind(
    gvk('Event'),
    'Event reports something that happened to an object. Events are kept for a limited time and are informational only.',
    {
      action: str('What was done (or failed) to the object.'),
      apiVersion: apiVersionField,
      count: int32('How many times this event has occurred.'),
      eventTime: ref(META + 'MicroTime', 'When this event was first observed.'),
      firstTimestamp: ref(META + 'Time', 'When the event was first recorded.'),
      involvedObject: ref(CORE + 'ObjectReference', 'The object this event is about.'),
      kind: kindField,
      lastTimestamp: ref(META + 'Time', 'When the most recent occurrence was recorded.'),
      message: str('Human-readable description of what happened.'),
      metadata: objectMetaField(),
      reason: str('Short machine-readable CamelCase reason for the event.'),
      related: ref(CORE + 'ObjectReference', 'A second object involved, if any.'),
      reportingComponent: str('Name of the controller that emitted the event, e.g. "kubernetes.io/kubelet".'),
      reportingInstance: str('ID of the emitting controller instance.'),
      series: ref(CORE + 'EventSeries', 'Data about the series this event belongs to; unset for a one-off event.'),
      source: ref(CORE + 'EventSource', 'The component that reported the event.'),
      type: str('Type of the event: "Normal" or "Warning".'),
    },
    { required: ['metadata', 'involvedObject'] },
  ),

  [CORE + 'EventList']: listKind(V1, CORE + 'Event', 'Event', 'The events.'),

  [CORE + 'EventSeries']: struct('EventSeries describes a series of recurring events.', {
    count: int32('Occurrences in the series up to the last heartbeat.'),
    lastObservedTime: ref(META + 'MicroTime', 'When the last occurrence was observed.'),
  }),
};
