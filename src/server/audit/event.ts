// An audit.k8s.io/v1 Event and its two encodings, as upstream's log backend writes them: JSON (the
// v1 struct's field order, omitempty as tagged, MicroTime with six fractional digits) and the legacy
// one-line text (pkg/audit/format.go EventString).
import { compareGoStrings, goString } from '../../golang/json.js';
import { stringifyJSON } from '../../golang/json-int64.js';
import type { Level, Stage } from './policy.js';

/** authentication/v1 UserInfo as the event holds it. */
export interface AuditUser {
  readonly name: string;
  readonly uid?: string | undefined;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>> | undefined;
}

/** audit/v1 ObjectReference: what the request addresses, completed from the request body. */
export interface ObjectRef {
  resource: string;
  namespace: string;
  name: string;
  uid: string;
  apiGroup: string;
  apiVersion: string;
  resourceVersion: string;
  subresource: string;
}

/** The bounded copy of the answer's Status upstream keeps (LogResponseObject), or just a code. */
export interface ResponseStatus {
  code: number;
  status?: string | undefined;
  message?: string | undefined;
  reason?: string | undefined;
  details?: unknown;
}

export interface AuditEvent {
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  /** undefined: no user, written `"user":{}` (a request that failed authentication). */
  user: AuditUser | undefined;
  impersonatedUser: AuditUser | undefined;
  sourceIPs: readonly string[];
  userAgent: string;
  objectRef: ObjectRef | undefined;
  responseStatus: ResponseStatus | undefined;
  /** JSON text of the request body (Request level and above). */
  requestObject: string | undefined;
  /** JSON text of the answer (RequestResponse). */
  responseObject: string | undefined;
  /** Microseconds since the epoch. */
  requestReceivedTimestamp: number;
  stageTimestamp: number;
  annotations: Map<string, string> | undefined;
  /** The encoded fields from requestURI to userAgent, which do not change between stages once made. */
  memo?: { readonly impersonatedUser: AuditUser | undefined; readonly text: string } | undefined;
}

/** Microseconds since the epoch, now (performance's clock: the wall clock at start plus a monotonic offset). */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** A performance.now() reading as microseconds since the epoch. */
export function microsOf(performanceNow: number): number {
  return Math.round((performance.timeOrigin + performanceNow) * 1000);
}

// The date and time of the last second formatted: every event of a second shares it.
let lastSecond = NaN;
let lastSecondText = '';

/** metav1.MicroTime as JSON: RFC 3339 in UTC with exactly six fractional digits. */
export function formatMicroTime(us: number): string {
  const second = Math.floor(us / 1_000_000);
  if (second !== lastSecond) {
    lastSecond = second;
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 19); // 2026-12-05T18:33:41
  }
  const frac = us - second * 1_000_000;
  return `${lastSecondText}.${frac < 100_000 ? String(frac).padStart(6, '0') : frac}Z`;
}

/** time.RFC3339Nano: the fraction without trailing zeros (and without the dot when zero). */
function formatRFC3339Nano(us: number): string {
  const t = formatMicroTime(us);
  const frac = t.slice(20, 26).replace(/0+$/, '');
  return `${t.slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

function userJSON(u: AuditUser | undefined): string {
  if (u === undefined) return '{}';
  const parts: string[] = [];
  if (u.name) parts.push(`"username":${goString(u.name, true)}`);
  if (u.uid) parts.push(`"uid":${goString(u.uid, true)}`);
  if (u.groups.length) parts.push(`"groups":[${u.groups.map((g) => goString(g, true)).join(',')}]`);
  const extra = u.extra ? Object.keys(u.extra).sort(compareGoStrings) : [];
  if (extra.length) {
    const entries = extra.map((k) => `${goString(k, true)}:${u.extra![k]!.length ? `[${u.extra![k]!.map((v) => goString(v, true)).join(',')}]` : 'null'}`);
    parts.push(`"extra":{${entries.join(',')}}`);
  }
  return `{${parts.join(',')}}`;
}

function objectRefJSON(r: ObjectRef): string {
  // Field by field without a helper closure: a closure made per event cost more than the rest.
  let out = '';
  if (r.resource) out += `,"resource":${goString(r.resource, true)}`;
  if (r.namespace) out += `,"namespace":${goString(r.namespace, true)}`;
  if (r.name) out += `,"name":${goString(r.name, true)}`;
  if (r.uid) out += `,"uid":${goString(r.uid, true)}`;
  if (r.apiGroup) out += `,"apiGroup":${goString(r.apiGroup, true)}`;
  if (r.apiVersion) out += `,"apiVersion":${goString(r.apiVersion, true)}`;
  if (r.resourceVersion) out += `,"resourceVersion":${goString(r.resourceVersion, true)}`;
  if (r.subresource) out += `,"subresource":${goString(r.subresource, true)}`;
  return out ? `{${out.slice(1)}}` : '{}';
}

function statusJSON(s: ResponseStatus): string {
  let out = '{"metadata":{}';
  if (s.status) out += `,"status":${goString(s.status, true)}`;
  if (s.message) out += `,"message":${goString(s.message, true)}`;
  if (s.reason) out += `,"reason":${goString(s.reason, true)}`;
  if (s.details !== undefined && s.details !== null && Object.keys(s.details).length > 0) out += `,"details":${stringifyJSON(s.details)}`;
  if (s.code) out += `,"code":${s.code}`;
  return out + '}';
}

/** The event as the JSON log backend writes it (one line, without the newline). */
export function encodeEventJSON(ev: AuditEvent): string {
  let out = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${ev.level}","auditID":${goString(ev.auditID, true)},"stage":"${ev.stage}"`;
  if (ev.memo === undefined || ev.memo.impersonatedUser !== ev.impersonatedUser) {
    let text = `,"requestURI":${goString(ev.requestURI, true)},"verb":${goString(ev.verb, true)},"user":${userJSON(ev.user)}`;
    if (ev.impersonatedUser) text += `,"impersonatedUser":${userJSON(ev.impersonatedUser)}`;
    if (ev.sourceIPs.length) text += `,"sourceIPs":[${ev.sourceIPs.map((ip) => goString(ip, true)).join(',')}]`;
    if (ev.userAgent) text += `,"userAgent":${goString(ev.userAgent, true)}`;
    ev.memo = { impersonatedUser: ev.impersonatedUser, text };
  }
  out += ev.memo.text;
  if (ev.objectRef) out += `,"objectRef":${objectRefJSON(ev.objectRef)}`;
  if (ev.responseStatus) out += `,"responseStatus":${statusJSON(ev.responseStatus)}`;
  if (ev.requestObject !== undefined) out += `,"requestObject":${ev.requestObject}`;
  if (ev.responseObject !== undefined) out += `,"responseObject":${ev.responseObject}`;
  out += `,"requestReceivedTimestamp":"${formatMicroTime(ev.requestReceivedTimestamp)}","stageTimestamp":"${formatMicroTime(ev.stageTimestamp)}"`;
  if (ev.annotations?.size) {
    const keys = [...ev.annotations.keys()].sort(compareGoStrings);
    out += `,"annotations":{${keys.map((k) => `${goString(k, true)}:${goString(ev.annotations!.get(k)!, true)}`).join(',')}}`;
  }
  return out + '}';
}

/** Go's %q of a string (strconv.Quote), close enough for what the legacy line holds. */
function q(s: string): string {
  return JSON.stringify(s);
}

/** The legacy format's line (EventString). */
export function encodeEventLegacy(ev: AuditEvent): string {
  let username = '<none>';
  let groups = '<none>';
  if (ev.user?.name) {
    username = ev.user.name;
    if (ev.user.groups.length) groups = ev.user.groups.map(q).join(',');
  }
  let asUser = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    asUser = ev.impersonatedUser.name;
    asGroups = ev.impersonatedUser.groups.map(q).join(',');
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs[0] ?? '<unknown>';
  return (
    `${formatRFC3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${q(ev.auditID)} stage=${q(ev.stage)} ip=${q(ip)} method=${q(ev.verb)}` +
    ` user=${q(username)} groups=${q(groups)} as=${q(asUser)} asgroups=${q(asGroups)} user-agent=${q(ev.userAgent)} namespace=${q(namespace)}` +
    ` uri=${q(ev.requestURI)} response="${response}"`
  );
}
