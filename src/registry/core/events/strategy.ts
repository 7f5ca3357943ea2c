// core/v1 Event, which is also the storage form of events.k8s.io/v1 Event (see events/events.ts).
// Validation follows upstream's pkg/apis/core/validation/events.go, which checks the internal
// (core) Event for both APIs: legacyValidateEvent here, the stricter events.k8s.io/v1 rules in
// events/events.ts. Field paths are core's (involvedObject, message, count, ...) for both APIs.
import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isDNS1123Subdomain, isQualifiedName, nameIsPathSegment } from '../../../apimachinery/validation/names.js';
import type { Strategy } from '../../strategy.js';
import { ageSince, nameColumn } from '../../table.js';

export interface ObjectRef {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}
export interface CoreEventShape {
  involvedObject?: ObjectRef;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  type?: string;
  eventTime?: string | null;
  series?: { count?: number; lastObservedTime?: string | null } | null;
  action?: string;
  related?: ObjectRef | null;
  reportingComponent?: string;
  reportingInstance?: string;
}

export const ev = (o: KubeObject): CoreEventShape => o as CoreEventShape;

/** The API a write came through: upstream's requestVersion, which picks the rules (and one field name). */
export type EventRequestVersion = 'v1' | 'events.k8s.io/v1';

const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
const ACTION_LENGTH_LIMIT = 128;
const REASON_LENGTH_LIMIT = 128;
const NOTE_LENGTH_LIMIT = 1024;

/** Go's len(): limits count bytes. */
const byteLength = (s: string): number => Buffer.byteLength(s, 'utf8');

/** A metav1.Time / MicroTime is "set" unless null or absent (Go's zero time). */
export const timeIsSet = (t: string | null | undefined): t is string => typeof t === 'string' && t !== '';

const atMost = (path: string, limit: number): FieldIssue => fieldIssue.invalid(path, '', `can have at most ${limit} characters`);

/** legacyValidateEvent: the checks every Event write passes, whichever API it came through. */
export function legacyValidateEvent(o: KubeObject, requestVersion: EventRequestVersion): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const e = ev(o);
  const ns = o.metadata?.namespace ?? '';
  const involvedNs = e.involvedObject?.namespace ?? '';
  // Since 1.25 the error names the field as the core/v1 request spelled it (kubernetes#111506).
  const reportingField = requestVersion === 'v1' ? 'reportingComponent' : 'reportingController';
  if (!timeIsSet(e.eventTime)) {
    // Old-style events: the namespaces agree, or both are empty ("default" for old clients).
    const mismatch = involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs;
    if (mismatch) issues.push(fieldIssue.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  } else {
    if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') {
      issues.push(fieldIssue.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
    }
    const controller = e.reportingComponent ?? '';
    if (controller === '') issues.push(fieldIssue.required(reportingField));
    for (const m of isQualifiedName(controller)) issues.push(fieldIssue.invalid(reportingField, controller, m));
    const instance = e.reportingInstance ?? '';
    if (instance === '') issues.push(fieldIssue.required('reportingInstance'));
    if (byteLength(instance) > REPORTING_INSTANCE_LENGTH_LIMIT) issues.push(atMost('reportingInstance', REPORTING_INSTANCE_LENGTH_LIMIT));
    const action = e.action ?? '';
    if (action === '') issues.push(fieldIssue.required('action'));
    if (byteLength(action) > ACTION_LENGTH_LIMIT) issues.push(atMost('action', ACTION_LENGTH_LIMIT));
    const reason = e.reason ?? '';
    if (reason === '') issues.push(fieldIssue.required('reason'));
    if (byteLength(reason) > REASON_LENGTH_LIMIT) issues.push(atMost('reason', REASON_LENGTH_LIMIT));
    if (byteLength(e.message ?? '') > NOTE_LENGTH_LIMIT) issues.push(atMost('message', NOTE_LENGTH_LIMIT));
  }
  for (const m of isDNS1123Subdomain(ns)) issues.push(fieldIssue.invalid('namespace', ns, m));
  return issues;
}

/** formatEventSource: component (or reportingController), then ", " and host (or reportingInstance) when there is one. */
function source(e: CoreEventShape): string {
  const component = e.source?.component || e.reportingComponent || '';
  const instance = e.source?.host || e.reportingInstance || '';
  return instance ? `${component}, ${instance}` : component;
}

export const coreEventStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  // Upstream's event strategy has no name rule of its own: only the generic path-segment check applies.
  nameValidator: nameIsPathSegment,
  // DELETE never adds orphan/foregroundDeletion finalizers to events, whatever propagationPolicy says
  // (upstream's event strategy answers rest.Unsupported).
  defaultGarbageCollectionPolicy: 'Unsupported',
  prepareForCreate() {},
  prepareForUpdate() {},
  // core/v1 (like events.k8s.io/v1beta1) keeps only the legacy checks, for old clients' sake.
  validate: (o) => legacyValidateEvent(o, 'v1'),
  validateUpdate: (o) => legacyValidateEvent(o, 'v1'),
  selectableFields(o) {
    const e = ev(o);
    const io = e.involvedObject ?? {};
    return {
      'involvedObject.kind': io.kind ?? '',
      'involvedObject.namespace': io.namespace ?? '',
      'involvedObject.name': io.name ?? '',
      'involvedObject.uid': io.uid ?? '',
      'involvedObject.apiVersion': io.apiVersion ?? '',
      'involvedObject.resourceVersion': io.resourceVersion ?? '',
      'involvedObject.fieldPath': io.fieldPath ?? '',
      reason: e.reason ?? '',
      reportingComponent: e.reportingComponent ?? '',
      // ToSelectableFields: the source component, or the reporting controller when there is none.
      source: e.source?.component || e.reportingComponent || '',
      type: e.type ?? '',
    };
  },
  // printers.go AddHandlers (eventColumnDefinitions) and printEvent, as the server's table
  // convertor runs it (always wide: the priority-1 columns are there, kubectl hides them).
  tableColumns: [
    { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', priority: 0 },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future', priority: 0 },
    {
      name: 'Reason',
      type: 'string',
      description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      priority: 0,
    },
    { name: 'Object', type: 'string', description: 'The object that this event is about.', priority: 0 },
    {
      name: 'Subobject',
      type: 'string',
      description:
        'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
      priority: 1,
    },
    { name: 'Source', type: 'string', description: 'The component reporting this event. Should be a short machine understandable string.', priority: 1 },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', priority: 0 },
    {
      name: 'First Seen',
      type: 'string',
      description: 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)',
      priority: 1,
    },
    { name: 'Count', type: 'string', description: 'The number of times this event has occurred.', priority: 1 },
    { ...nameColumn, priority: 1 },
  ],
  tableCells(o) {
    const e = ev(o);
    const first = timeIsSet(e.firstTimestamp) ? ageSince(e.firstTimestamp) : ageSince(e.eventTime);
    let last = timeIsSet(e.lastTimestamp) ? ageSince(e.lastTimestamp) : first;
    let count = e.count ?? 0;
    if (e.series) {
      // A series wins even when its time or count is unset ("<unknown>", 0).
      last = ageSince(e.series.lastObservedTime);
      count = e.series.count ?? 0;
    } else if (count === 0) {
      count = 1; // singleton events of the new API carry no count
    }
    const kind = (e.involvedObject?.kind ?? '').toLowerCase();
    const name = e.involvedObject?.name ?? '';
    return [
      last,
      e.type ?? '',
      e.reason ?? '',
      name ? `${kind}/${name}` : kind,
      e.involvedObject?.fieldPath ?? '',
      source(e),
      (e.message ?? '').trim(),
      first,
      count,
      o.metadata?.name ?? '',
    ];
  },
};
