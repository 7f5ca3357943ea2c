// io.k8s.api.core.v1 reference types that several kinds embed (ServiceAccount, core and
// events.k8s.io Events). Shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { GoFieldTypes } from '../../apimachinery/gotypes.js';
import type { Definitions } from '../../apimachinery/schema.js';
import { CORE, str, struct } from '../../apimachinery/definitions/util.js';

export const coreReferenceDefinitions: Definitions = {
  [CORE + 'ObjectReference']: struct(
    'ObjectReference points to an object (or a field within it).',
    {
      apiVersion: str('API version of the referent.'),
      fieldPath: str('Path of a field within the referent, when the reference is to part of it, e.g. "spec.containers{name}".'),
      kind: str('Kind of the referent.'),
      name: str('Name of the referent.'),
      namespace: str('Namespace of the referent.'),
      resourceVersion: str('resourceVersion of the referent this reference was made at, if any.'),
      uid: str('UID of the referent.'),
    },
    { 'x-kubernetes-map-type': 'atomic' },
  ),

  [CORE + 'LocalObjectReference']: struct(
    'LocalObjectReference names an object in the same namespace.',
    { name: str('Name of the referent.') },
    { 'x-kubernetes-map-type': 'atomic' },
  ),

  [CORE + 'EventSource']: struct('EventSource names the reporter of an event.', {
    component: str('Component that generated the event.'),
    host: str('Node on which the event was generated.'),
  }),
};

/** Go types of its fields that the definitions lose (see apimachinery/gotypes.ts). */
export const coreReferenceGoFieldTypes: GoFieldTypes = { [CORE + 'ObjectReference']: { uid: 'types.UID' } };
