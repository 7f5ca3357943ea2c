// core/v1 Event, which is also the storage form of events.k8s.io/v1 Event (see events/events.ts).
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { Strategy } from '../strategy.js';
import { ageSince, nameColumn } from '../table.js';

interface ObjectRef {
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
  series?: { count?: number; lastObservedTime?: string };
  action?: string;
  related?: ObjectRef;
  reportingComponent?: string;
  reportingInstance?: string;
}

const ev = (o: KubeObject): CoreEventShape => o as CoreEventShape;

function validateEvent(o: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const e = ev(o);
  const ns = o.metadata?.namespace ?? '';
  const involvedNs = e.involvedObject?.namespace;
  if (involvedNs && ns && involvedNs !== ns) {
    issues.push(fieldIssue.invalid('involvedObject.namespace', involvedNs, 'does not match event.namespace'));
  }
  if (e.type !== undefined && e.type !== '' && e.type !== 'Normal' && e.type !== 'Warning') {
    issues.push(fieldIssue.notSupported('type', e.type, ['Normal', 'Warning']));
  }
  if (e.eventTime && !e.reportingComponent) {
    issues.push(fieldIssue.required('reportingComponent', ''));
  }
  if (typeof e.message === 'string' && e.message.length > 4096 && e.eventTime) {
    issues.push(fieldIssue.tooLong('message', '', 4096));
  }
  return issues;
}

function lastSeen(e: CoreEventShape): string | null | undefined {
  if (e.series?.lastObservedTime) return e.series.lastObservedTime;
  return e.lastTimestamp || e.eventTime;
}

function source(e: CoreEventShape): string {
  const parts = [e.source?.component || e.reportingComponent, e.source?.host || e.reportingInstance].filter((x) => !!x);
  return parts.join(', ');
}

export const coreEventStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateEvent,
  validateUpdate: validateEvent,
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
      source: e.source?.component ?? '',
      type: e.type ?? '',
    };
  },
  tableColumns: [
    { name: 'Last Seen', type: 'string', description: 'The time at which the most recent occurrence of this event was recorded.', priority: 0 },
    { name: 'Type', type: 'string', description: 'Type of this event (Normal, Warning), new types could be added in the future.', priority: 0 },
    { name: 'Reason', type: 'string', description: 'This should be a short, machine understandable string that gives the reason for the transition into the object\'s current status.', priority: 0 },
    { name: 'Object', type: 'string', description: 'The object that this event is about.', priority: 0 },
    { name: 'Subobject', type: 'string', description: 'The field of the object this event is about.', priority: 1 },
    { name: 'Source', type: 'string', description: 'The component reporting this event.', priority: 1 },
    { name: 'Message', type: 'string', description: 'A human-readable description of the status of this operation.', priority: 0 },
    { name: 'First Seen', type: 'string', description: 'The time at which the event was first recorded.', priority: 1 },
    { name: 'Count', type: 'string', description: 'The number of times this event has occurred.', priority: 1 },
    { ...nameColumn, priority: 1 },
  ],
  tableCells(o) {
    const e = ev(o);
    const count = e.series?.count ?? e.count ?? 1;
    return [
      ageSince(lastSeen(e) ?? null),
      e.type ?? '',
      e.reason ?? '',
      `${(e.involvedObject?.kind ?? '').toLowerCase()}/${e.involvedObject?.name ?? ''}`,
      e.involvedObject?.fieldPath ?? '',
      source(e),
      (e.message ?? '').trim(),
      ageSince(e.firstTimestamp || e.eventTime || null),
      count,
      o.metadata?.name ?? '',
    ];
  },
};
