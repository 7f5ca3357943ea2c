// events.k8s.io/v1 Event: served from the same storage as core/v1 Event, converted field by field
// (the mapping upstream's conversion uses: regarding ↔ involvedObject, note ↔ message, ...).
import { fieldIssue, omitValue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { nameIsDNSSubdomain } from '../../../apimachinery/validation/names.js';
import { FIELD_IMMUTABLE_MESSAGE } from '../../../apimachinery/validation/objectmeta.js';
import { coreEventStrategy, ev, legacyValidateEvent, timeIsSet, type CoreEventShape, type ObjectRef } from '../../core/events/strategy.js';
import type { VersionConverter } from '../../store.js';
import type { Strategy } from '../../strategy.js';

type Json = Record<string, unknown>;

/** events.k8s.io/v1 field → core/v1 field (upstream's conversion); unlisted fields keep their name. */
const RENAMED: readonly (readonly [string, string])[] = [
  ['regarding', 'involvedObject'],
  ['note', 'message'],
  ['deprecatedSource', 'source'],
  ['deprecatedFirstTimestamp', 'firstTimestamp'],
  ['deprecatedLastTimestamp', 'lastTimestamp'],
  ['deprecatedCount', 'count'],
  ['reportingController', 'reportingComponent'],
];
const SAME = ['reason', 'type', 'eventTime', 'series', 'action', 'related', 'reportingInstance'];

function convert(obj: KubeObject, apiVersion: string, pairs: readonly (readonly [string, string])[]): KubeObject {
  const src = obj as Json;
  const out: Json = { apiVersion, kind: 'Event', metadata: obj.metadata };
  for (const [from, to] of pairs) if (src[from] !== undefined) out[to] = src[from];
  for (const k of SAME) if (src[k] !== undefined) out[k] = src[k];
  return out;
}

export const eventsV1Converter: VersionConverter = {
  toStorage: (obj) => convert(obj, 'v1', RENAMED),
  fromStorage: (obj) =>
    convert(
      obj,
      'events.k8s.io/v1',
      RENAMED.map(([a, b]) => [b, a] as const),
    ),
};

function asCore(o: KubeObject): KubeObject {
  return eventsV1Converter.toStorage(o);
}

// ---- validation (ValidateEventCreate / ValidateEventUpdate upstream) --------------------------
// Upstream validates the internal (core) Event, so errors name core's fields (involvedObject,
// message, count, source, firstTimestamp, ...) even for events.k8s.io/v1 writes: not renamed back.

/** An RFC 3339 time as seconds since the epoch plus nanoseconds; undefined when it does not parse. */
function parseTime(t: string): { sec: number; nsec: number } | undefined {
  const m = /^(\d{4})-(\d\d)-(\d\d)[Tt](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d\d):(\d\d))$/.exec(t);
  if (!m) return undefined;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: the latter maps years 0-99 to 1900-1999.
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  d.setUTCHours(Number(m[4]), Number(m[5]), Number(m[6]), 0);
  const offset = m[8] ? (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 3600 + Number(m[10]) * 60) : 0;
  return { sec: d.getTime() / 1000 - offset, nsec: Number((m[7] ?? '').padEnd(9, '0')) };
}

/** Semantic equality of two times: the same instant, optionally truncated to `unitNs` nanoseconds. */
function sameTime(a: string | null | undefined, b: string | null | undefined, unitNs = 1): boolean {
  if (!timeIsSet(a) || !timeIsSet(b)) return timeIsSet(a) === timeIsSet(b);
  const pa = parseTime(a);
  const pb = parseTime(b);
  if (!pa || !pb) return a === b;
  return pa.sec === pb.sec && Math.floor(pa.nsec / unitNs) === Math.floor(pb.nsec / unitNs);
}

/** Go's time.Time.String() in UTC (the apiserver's local zone in practice), as %v prints a metav1.Time. */
function goTimeString(t: string | null | undefined): string {
  if (!timeIsSet(t)) return '0001-01-01 00:00:00 +0000 UTC';
  const p = parseTime(t);
  if (!p) return t;
  const d = new Date(p.sec * 1000);
  const pad = (n: number, w = 2): string => String(n).padStart(w, '0');
  const frac = p.nsec ? `.${String(p.nsec).padStart(9, '0').replace(/0+$/, '')}` : '';
  return `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}${frac} +0000 UTC`;
}

const REF_FIELDS = [
  ['kind', 'Kind'],
  ['namespace', 'Namespace'],
  ['name', 'Name'],
  ['uid', 'UID'],
  ['apiVersion', 'APIVersion'],
  ['resourceVersion', 'ResourceVersion'],
  ['fieldPath', 'FieldPath'],
] as const;

const sameRef = (a: ObjectRef | null | undefined, b: ObjectRef | null | undefined): boolean => REF_FIELDS.every(([k]) => (a?.[k] ?? '') === (b?.[k] ?? ''));

/** Go's %#v of an internal core.ObjectReference, as field.Error prints a struct value. */
const goRef = (r: ObjectRef | null | undefined): string =>
  `core.ObjectReference{${REF_FIELDS.map(([k, g]) => `${g}:${JSON.stringify(r?.[k] ?? '')}`).join(', ')}}`;

/**
 * ValidateImmutableField's "Invalid value: <v>: field is immutable" where Go prints <v> unquoted
 * (a struct via %#v, a time via String()): the text goes in the detail, the value is omitted.
 */
const immutableRendered = (path: string, rendered: string): FieldIssue => fieldIssue.invalid(path, omitValue, `${rendered}: ${FIELD_IMMUTABLE_MESSAGE}`);

/** validateV1EventSeries. */
function validateSeries(e: CoreEventShape): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (e.series) {
    if ((e.series.count ?? 0) < 2) issues.push(fieldIssue.invalid('series.count', '', 'should be at least 2'));
    if (!timeIsSet(e.series.lastObservedTime)) issues.push(fieldIssue.required('series.lastObservedTime'));
  }
  return issues;
}

/** ValidateEventCreate for an events.k8s.io/v1 request, on the core form (metadata is the store's). */
export function validateEventCreate(o: KubeObject): FieldIssue[] {
  const e = ev(o);
  const issues = [...legacyValidateEvent(o, 'events.k8s.io/v1'), ...validateSeries(e)];
  if (!timeIsSet(e.eventTime)) issues.push(fieldIssue.required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning') issues.push(fieldIssue.invalid('type', '', `has invalid value: ${e.type ?? ''}`));
  const unset = (path: string): FieldIssue => fieldIssue.invalid(path, '', 'needs to be unset');
  if (timeIsSet(e.firstTimestamp)) issues.push(unset('firstTimestamp'));
  if (timeIsSet(e.lastTimestamp)) issues.push(unset('lastTimestamp'));
  if ((e.count ?? 0) !== 0) issues.push(unset('count'));
  if (e.source?.component || e.source?.host) issues.push(unset('source'));
  return issues;
}

/** ValidateEventUpdate for an events.k8s.io/v1 request: legacy rules, then almost everything is immutable. */
export function validateEventUpdate(o: KubeObject, old: KubeObject): FieldIssue[] {
  const n = ev(o);
  const p = ev(old);
  const issues = legacyValidateEvent(o, 'events.k8s.io/v1');
  // The series is checked only when it changed (reflect.DeepEqual upstream).
  const seriesSame =
    !n.series === !p.series &&
    (!n.series || ((n.series.count ?? 0) === (p.series?.count ?? 0) && sameTime(n.series.lastObservedTime, p.series?.lastObservedTime)));
  if (!seriesSame) issues.push(...validateSeries(n));
  const str = (path: string, a: string | undefined, b: string | undefined): void => {
    if ((a ?? '') !== (b ?? '')) issues.push(fieldIssue.invalid(path, a ?? '', FIELD_IMMUTABLE_MESSAGE));
  };
  if (!sameRef(n.involvedObject, p.involvedObject)) issues.push(immutableRendered('involvedObject', goRef(n.involvedObject)));
  str('reason', n.reason, p.reason);
  str('message', n.message, p.message);
  const src = (s: CoreEventShape['source']) => [s?.component ?? '', s?.host ?? ''] as const;
  const [nc, nh] = src(n.source);
  const [pc, ph] = src(p.source);
  if (nc !== pc || nh !== ph) issues.push(immutableRendered('source', `core.EventSource{Component:${JSON.stringify(nc)}, Host:${JSON.stringify(nh)}}`));
  if (!sameTime(n.firstTimestamp, p.firstTimestamp)) issues.push(immutableRendered('firstTimestamp', goTimeString(n.firstTimestamp)));
  if (!sameTime(n.lastTimestamp, p.lastTimestamp)) issues.push(immutableRendered('lastTimestamp', goTimeString(n.lastTimestamp)));
  if ((n.count ?? 0) !== (p.count ?? 0)) issues.push(fieldIssue.invalid('count', n.count ?? 0, FIELD_IMMUTABLE_MESSAGE));
  // Upstream checks reason twice, so a changed reason is reported twice.
  str('reason', n.reason, p.reason);
  str('type', n.type, p.type);
  // Sub-microsecond changes are tolerated (clients truncate MicroTime; kubernetes#111928).
  if (!sameTime(n.eventTime, p.eventTime, 1000)) issues.push(immutableRendered('eventTime', goTimeString(n.eventTime)));
  str('action', n.action, p.action);
  // related is a pointer: absent and {} differ; field.Error prints a nil pointer as "null" (quoted).
  if (!n.related !== !p.related || (n.related && !sameRef(n.related, p.related))) {
    issues.push(n.related ? immutableRendered('related', goRef(n.related)) : fieldIssue.invalid('related', 'null', FIELD_IMMUTABLE_MESSAGE));
  }
  str('reportingController', n.reportingComponent, p.reportingComponent);
  str('reportingInstance', n.reportingInstance, p.reportingInstance);
  return issues;
}

export const eventsV1Strategy: Strategy = {
  ...coreEventStrategy,
  // Only events.k8s.io/v1 writes get core's ValidateObjectMeta wrapper (ValidateEventCreate/Update);
  // core/v1 events keep the generic rules.
  finalizerNames: 'kube',
  // ValidateEventCreate checks ObjectMeta with NameIsDNSSubdomain for this API (not path segments as core/v1).
  nameValidator: nameIsDNSSubdomain,
  validate: (o) => validateEventCreate(asCore(o)),
  validateUpdate: (o, old) => validateEventUpdate(asCore(o), asCore(old)),
  // AddFieldLabelConversionsForEvent (events/v1): this API's names only (regarding.*, reportingController),
  // not core's involvedObject.* or reportingComponent.
  selectableFields(o) {
    const core = coreEventStrategy.selectableFields!(asCore(o));
    const out: Record<string, string> = { reason: core.reason ?? '', type: core.type ?? '', source: core.source ?? '' };
    for (const [k, v] of Object.entries(core)) {
      if (k.startsWith('involvedObject.')) out['regarding.' + k.slice('involvedObject.'.length)] = v;
    }
    out.reportingController = (asCore(o) as CoreEventShape).reportingComponent ?? '';
    return out;
  },
  tableCells: (o) => coreEventStrategy.tableCells!(asCore(o)),
};
