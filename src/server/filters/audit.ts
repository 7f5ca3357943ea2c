// WithAudit and WithFailedAuthenticationAudit (k8s.io/apiserver/pkg/endpoints/filters/audit.go,
// audit_annotations.go): between authentication and impersonation, the policy picks the request's
// level from the authenticated user and the RequestInfo (the first rule that matches), and the
// event goes to the backend at RequestReceived, at ResponseStarted for a long-running request (a
// watch, when its headers go out), and at ResponseComplete when the response closes; a filter
// inside that crashes sends Panic instead. A request that failed authentication never reaches
// WithAudit: the failed-authentication filter, around authentication, sends its one event
// (ResponseStarted, no user, the methods tried). Without a policy neither filter is in the chain.
import { StatusError } from '../../apimachinery/errors.js';
import { AuditContext, NOT_AUDITED, type AuditRuntime } from '../audit/context.js';
import { microsOf } from '../audit/event.js';
import { PlainTextError } from '../handlers/responsewriters.js';
import type { Filter, Handler, RequestScope, Response } from '../request-scope.js';

function auditIdOf(res: Response): string {
  const v = res.getHeader('Audit-Id');
  return Array.isArray(v) ? (v[0] ?? '') : String(v ?? '');
}

export function withAudit(rt: AuditRuntime | undefined): Filter {
  if (rt === undefined) return (next) => next;
  return (next) => (s) => {
    const config = rt.evaluator.evaluate(s.user, s.info);
    rt.metrics.level(config.level);
    if (config.level === 'None') {
      s.audit = NOT_AUDITED;
      return next(s);
    }
    const ac = new AuditContext(config, rt, s.req, auditIdOf(s.res), microsOf(s.started), s.info, s.user);
    s.audit = ac;
    // Hooked before the RequestReceived write, which the backend may group with others of this
    // turn: a client that goes away meanwhile still gets its ResponseComplete, after RequestReceived.
    const authenticated = s.user;
    let refused = false;
    if (s.longRunning) startedOnHeaders(s, ac, () => authenticated);
    s.res.once('close', () => {
      if (!refused) complete(s, ac, authenticated);
    });
    const stored = ac.process('RequestReceived');
    if (stored === true) return serve(s, ac, authenticated, next);
    if (stored === false) {
      refused = true;
      return refuse(s, rt);
    }
    return stored.then((ok) => {
      if (ok) return serve(s, ac, authenticated, next);
      refused = true;
      refuse(s, rt);
    });
  };
}

/** The request's event could not be stored, and the mode (blocking-strict) fails the request. */
function refuse(s: RequestScope, rt: AuditRuntime): void {
  rt.metrics.rejected.inc();
  // responsewriters.InternalError: http.Error's text, the request's URI quoted.
  s.res.statusCode = 500;
  s.res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  s.res.setHeader('X-Content-Type-Options', 'nosniff');
  s.res.end(`Internal Server Error: ${JSON.stringify(s.req.url ?? '')}: failed to store audit event\n`.replace(/[&<>]/g, htmlEscape));
}

function serve(s: RequestScope, ac: AuditContext, authenticated: RequestScope['user'], next: Handler): void | Promise<void> {
  let pending: void | Promise<void>;
  try {
    pending = next(s);
  } catch (e) {
    failed(s, ac, authenticated, e);
    throw e;
  }
  if (pending === undefined) return;
  return pending.catch((e: unknown) => {
    failed(s, ac, authenticated, e);
    throw e;
  });
}

function htmlEscape(c: string): string {
  return c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;';
}

function noteImpersonation(s: RequestScope, ac: AuditContext, authenticated: RequestScope['user']): void {
  if (s.user !== authenticated) ac.actingAs(s.user);
}

/** A long-running request sends ResponseStarted as its headers go out (upstream's auditResponseWriter). */
function startedOnHeaders(s: RequestScope, ac: AuditContext, authenticated: () => RequestScope['user']): void {
  const res = s.res as unknown as { writeHead: (...args: unknown[]) => unknown; statusCode: number };
  const writeHead = res.writeHead;
  let started = false;
  // An own property of this one response: watches are few, and every way to send headers
  // (write, end, flushHeaders) goes through writeHead in node:http and the HTTP/2 compatibility API.
  res.writeHead = function (this: unknown, ...args: unknown[]) {
    if (!started) {
      started = true;
      ac.setCode(typeof args[0] === 'number' ? args[0] : res.statusCode);
      noteImpersonation(s, ac, authenticated());
      void ac.process('ResponseStarted');
    }
    return writeHead.apply(this, args);
  };
}

/** The response closed: ResponseComplete (and for a watch that never answered, its faked ResponseStarted first). */
function complete(s: RequestScope, ac: AuditContext, authenticated: RequestScope['user']): void {
  if (ac.panicked) return;
  noteImpersonation(s, ac, authenticated);
  const ev = ac.event;
  if (s.res.headersSent) {
    ac.setCode(s.res.statusCode);
  } else if (ev.responseStatus === undefined) {
    // Nothing was answered (the client went away first): upstream's faked status.
    ev.responseStatus = { code: 200, status: 'Success', message: 'Connection closed early' };
    if (s.longRunning) void ac.process('ResponseStarted');
  }
  void ac.process('ResponseComplete');
}

/** What a filter inside threw: a StatusError is the answer's Status (written by panic-recovery); anything else is a panic. */
function failed(s: RequestScope, ac: AuditContext, authenticated: RequestScope['user'], e: unknown): void {
  if (e instanceof StatusError) {
    if (!(e instanceof PlainTextError)) ac.responseStatus(e.status);
    return;
  }
  noteImpersonation(s, ac, authenticated);
  ac.panicked = true;
  ac.event.responseStatus = {
    code: 500,
    status: 'Failure',
    reason: 'InternalError',
    message: `APIServer panic'd: ${e instanceof Error ? e.message : String(e)}`,
  };
  void ac.process('Panic');
}

/**
 * WithFailedAuthenticationAudit, around authentication: a 401 from the authenticator (the
 * request never reached WithAudit) is audited as upstream does, once, at ResponseStarted.
 */
export function withFailedAuthenticationAudit(rt: AuditRuntime | undefined): Filter {
  if (rt === undefined) return (next) => next;
  return (next: Handler) => (s) => {
    let pending: void | Promise<void>;
    try {
      pending = next(s);
    } catch (e) {
      auditFailedAuthentication(rt, s, e);
      throw e;
    }
    if (pending === undefined) return;
    return pending.catch((e: unknown) => {
      auditFailedAuthentication(rt, s, e);
      throw e;
    });
  };
}

function auditFailedAuthentication(rt: AuditRuntime, s: RequestScope, e: unknown): void {
  if (s.audit !== undefined || !(e instanceof StatusError) || e.code !== 401) return;
  const config = rt.evaluator.evaluate(undefined, s.info);
  rt.metrics.level(config.level);
  if (config.level === 'None') return;
  const ac = new AuditContext(config, rt, s.req, auditIdOf(s.res), microsOf(s.started), s.info, undefined);
  ac.event.responseStatus = { code: 401, message: authMethods(s) };
  void ac.process('ResponseStarted');
}

/** getAuthMethods: what the client tried. */
function authMethods(s: RequestScope): string {
  const methods: string[] = [];
  const auth = (s.req.headers.authorization ?? '').trim();
  const parts = auth.split(' ');
  if (parts[0]?.toLowerCase() === 'basic' && parts.length > 1) methods.push('basic');
  if (parts.length > 1 && parts[0]!.toLowerCase() === 'bearer') methods.push('bearer');
  if ((s.query.get('access_token') ?? '').trim()) methods.push('access_token');
  const socket = s.req.socket as { getPeerCertificate?: () => { subject?: unknown } } | undefined;
  if (typeof socket?.getPeerCertificate === 'function' && socket.getPeerCertificate()?.subject) methods.push('x509');
  return methods.length ? `Authentication failed, attempted: ${methods.join(', ')}` : 'Authentication failed, no credentials provided';
}
