// One request's audit event while it is served (upstream's AuditContext): made by the audit filter
// from the policy's decision, completed by the handlers through the AuditHooks of the RequestScope,
// and handed to the backend at each stage the policy does not omit.
import type { UserInfo } from '../../admission/index.js';
import { parseJSONExact, stringifyJSON } from '../../golang/json-int64.js';
import type { AuditHooks, Request } from '../request-scope.js';
import type { RequestInfo } from '../requestinfo.js';
import type { AuditBackend, AuditMetrics } from './backend.js';
import { nowMicros, type AuditEvent, type AuditUser, type ResponseStatus } from './event.js';
import { levelRank, type PolicyRuleEvaluator, type RequestAuditConfig, type Stage } from './policy.js';

/** What the audit filters share, made once per server. */
export interface AuditRuntime {
  readonly evaluator: PolicyRuleEvaluator;
  readonly backend: AuditBackend;
  readonly metrics: AuditMetrics;
}

const MAX_USER_AGENT_LENGTH = 1024;
const USER_AGENT_TRUNCATE_SUFFIX = '...TRUNCATED';
const RANK_REQUEST = levelRank('Request');
const RANK_REQUEST_RESPONSE = levelRank('RequestResponse');

/** The recorder of a request at level None: every hook does nothing. */
export const NOT_AUDITED: AuditHooks = Object.freeze({
  requestObject() {},
  requestPatch() {},
  responseObject() {},
  responseJSON() {},
  responseStatus() {},
  annotate() {},
});

export class AuditContext implements AuditHooks {
  readonly event: AuditEvent;
  /** Whether the Panic stage was sent: nothing follows it. */
  panicked = false;
  private readonly rank: number;

  constructor(
    readonly config: RequestAuditConfig,
    private readonly rt: AuditRuntime,
    req: Request,
    auditID: string,
    receivedMicros: number,
    info: RequestInfo,
    user: UserInfo | undefined,
  ) {
    this.rank = levelRank(config.level);
    let ua = req.headers['user-agent'] ?? '';
    if (ua.length > MAX_USER_AGENT_LENGTH) ua = ua.slice(0, MAX_USER_AGENT_LENGTH) + USER_AGENT_TRUNCATE_SUFFIX;
    this.event = {
      level: config.level,
      auditID,
      stage: 'RequestReceived',
      requestURI: req.url ?? '',
      verb: info.verb,
      user: user && auditUser(user),
      impersonatedUser: undefined,
      sourceIPs: sourceIPs(req),
      userAgent: ua,
      objectRef: info.isResourceRequest
        ? {
            resource: info.resource,
            namespace: info.namespace,
            name: info.name,
            uid: '',
            apiGroup: info.apiGroup,
            apiVersion: info.apiVersion,
            resourceVersion: '',
            subresource: info.subresource,
          }
        : undefined,
      responseStatus: undefined,
      requestObject: undefined,
      responseObject: undefined,
      requestReceivedTimestamp: receivedMicros,
      stageTimestamp: receivedMicros,
      annotations: undefined,
    };
  }

  /**
   * processAuditEvent: sends the event at `stage` unless the policy omits it. False only when the
   * backend could not store it and says the request must fail (blocking-strict); a promise when
   * the backend groups the write with others (AuditBackend.processEvent).
   */
  process(stage: Stage): boolean | Promise<boolean> {
    const ev = this.event;
    ev.stage = stage;
    if (this.config.omitStages.includes(stage)) return true;
    ev.stageTimestamp = stage === 'RequestReceived' ? ev.requestReceivedTimestamp : nowMicros();
    this.rt.metrics.event();
    return this.rt.backend.processEvent(ev);
  }

  /** The user the request acts as, once impersonation replaced the authenticated one. */
  actingAs(user: UserInfo): void {
    this.event.impersonatedUser = auditUser(user);
  }

  requestObject(obj: object): void {
    const ref = this.event.objectRef;
    const meta = (obj as { metadata?: Record<string, unknown> }).metadata;
    if (ref && meta && typeof meta === 'object') {
      if (!ref.namespace && typeof meta.namespace === 'string') ref.namespace = meta.namespace;
      if (!ref.name && typeof meta.name === 'string') ref.name = meta.name;
      if (!ref.uid && typeof meta.uid === 'string') ref.uid = meta.uid;
      if (!ref.resourceVersion && typeof meta.resourceVersion === 'string') ref.resourceVersion = meta.resourceVersion;
    }
    if (this.rank < RANK_REQUEST) return;
    this.event.requestObject = this.encode(obj);
  }

  requestPatch(body: Uint8Array): void {
    if (this.rank < RANK_REQUEST) return;
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    // runtime.Unknown holds the patch as sent; a YAML apply patch is written as JSON here (upstream's
    // encoder would refuse it).
    try {
      this.event.requestObject = stringifyJSON(parseJSONExact(text));
    } catch {
      this.event.requestObject = stringifyJSON(text);
    }
  }

  responseObject(obj: object): void {
    const o = obj as { kind?: unknown; apiVersion?: unknown };
    if (o.kind === 'Status' && o.apiVersion === 'v1') this.responseStatus(obj);
    if (this.rank < RANK_REQUEST_RESPONSE) return;
    this.event.responseObject = this.encode(obj);
  }

  responseJSON(body: Uint8Array): void {
    if (this.rank < RANK_REQUEST_RESPONSE) return;
    const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8').trimEnd();
    this.event.responseObject = this.config.omitManagedFields ? this.encode(JSON.parse(text) as object) : text;
  }

  responseStatus(status: object): void {
    const s = status as { status?: string; message?: string; reason?: string; details?: unknown; code?: number };
    // The bounded fields upstream copies.
    this.event.responseStatus = { code: s.code ?? 0, status: s.status, message: s.message, reason: s.reason, details: s.details };
  }

  annotate(key: string, value: string, level?: 'Request'): void {
    // AddAnnotationWithLevel: kept when the event's level is at least the annotation's.
    if (level !== undefined && this.rank < RANK_REQUEST) return;
    const ev = this.event;
    ev.annotations ??= new Map();
    // Upstream keeps the first value of a key.
    if (!ev.annotations.has(key)) ev.annotations.set(key, value);
  }

  /** The answer's code once headers went out (the status a Status answer set stays). */
  setCode(code: number): void {
    const rs: ResponseStatus = this.event.responseStatus ?? { code };
    rs.code = code;
    this.event.responseStatus = rs;
  }

  private encode(obj: object): string {
    return stringifyJSON(this.config.omitManagedFields ? withoutManagedFields(obj) : obj);
  }
}

function auditUser(u: UserInfo): AuditUser {
  return { name: u.name, uid: u.uid, groups: u.groups, extra: u.extra };
}

/** copyWithoutManagedFields: an object, a list's items or a Table's rows' objects, copied without metadata.managedFields. */
function withoutManagedFields(obj: object): object {
  const strip = (o: unknown): unknown => {
    if (!o || typeof o !== 'object') return o;
    const m = (o as { metadata?: Record<string, unknown> }).metadata;
    if (!m || typeof m !== 'object' || m.managedFields === undefined) return o;
    const { managedFields: _drop, ...rest } = m;
    return { ...o, metadata: rest };
  };
  const o = obj as { items?: unknown; rows?: { object?: unknown }[]; kind?: unknown };
  let out = strip(obj) as Record<string, unknown>;
  if (Array.isArray(o.items)) out = { ...out, items: o.items.map(strip) };
  if (o.kind === 'Table' && Array.isArray(o.rows)) out = { ...out, rows: o.rows.map((r) => (r && r.object ? { ...r, object: strip(r.object) } : r)) };
  return out;
}

/** utilnet.SourceIPs: X-Forwarded-For's addresses, X-Real-Ip if new, then the peer unless it is the last already. */
export function sourceIPs(req: Request): string[] {
  const ips: string[] = [];
  const xff = req.headers['x-forwarded-for'];
  const forwarded = Array.isArray(xff) ? xff[0] : xff;
  if (forwarded) {
    for (const part of forwarded.split(',')) {
      const ip = parseIP(part.trim());
      if (ip) ips.push(ip);
    }
  }
  const xri = req.headers['x-real-ip'];
  const real = parseIP((Array.isArray(xri) ? xri[0] : xri) ?? '');
  if (real && !ips.includes(real)) ips.push(real);
  const remote = parseIP(req.socket?.remoteAddress ?? '');
  if (remote && (ips.length === 0 || ips[ips.length - 1] !== remote)) ips.push(remote);
  return ips;
}

// The addresses met lately, parsed: a client's address repeats on every request of its connection.
const parsedIPs = new Map<string, string | undefined>();

/** An IP as Go's net.IP.String() writes it (an IPv4-mapped IPv6 address as IPv4), or undefined. */
function parseIP(s: string): string | undefined {
  if (!s) return undefined;
  const known = parsedIPs.get(s);
  if (known !== undefined || parsedIPs.has(s)) return known;
  const ip = parseIPText(s);
  if (parsedIPs.size >= 1024) parsedIPs.clear();
  parsedIPs.set(s, ip);
  return ip;
}

function parseIPText(s: string): string | undefined {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(s);
  if (mapped) return mapped[1];
  if (/^\d+\.\d+\.\d+\.\d+$/.test(s)) return s.split('.').every((o) => Number(o) <= 255) ? s.replace(/\b0+(\d)/g, '$1') : undefined;
  if (s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s)) return s.toLowerCase();
  return undefined;
}
