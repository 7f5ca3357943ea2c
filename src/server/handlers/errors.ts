// The router's own answers: go-restful's 404 and 405 (a fixed message, empty details), the
// not-found handler's `404 page not found`, and the CRD handler's 405 naming verb and kind.
import { StatusError, methodNotSupported } from '../../apimachinery/errors.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { PlainTextError } from './responsewriters.js';

/** go-restful's 404 for a path its web service does not route (NewGenericServerResponse: empty details). */
export function pageNotFound(): StatusError {
  return new StatusError({ reason: 'NotFound', code: 404, message: 'the server could not find the requested resource', details: {} });
}

/** The not-found handler's answer for a path no API group serves: `404 page not found`. */
export function notFoundPage(): PlainTextError {
  return new PlainTextError(pageNotFound().status, '404 page not found');
}

/** go-restful's 405 (NewGenericServerResponse: a fixed message, empty details). */
export function routerMethodNotAllowed(): StatusError {
  return new StatusError({ reason: 'MethodNotAllowed', code: 405, message: 'the server does not allow this method on the requested resource', details: {} });
}

/**
 * 405 for a method a resource does not serve. Built-in resources answer from go-restful's router
 * upstream (NewGenericServerResponse: a fixed message, empty details); custom resources from the
 * CRD handler (NewMethodNotSupported: `create is not supported on resources of kind ...`).
 */
export function methodNotAllowed(r: RegisteredResource, action: string): StatusError {
  return r.registration.customResource ? methodNotSupported(r.store.groupResource, action) : routerMethodNotAllowed();
}

/** 405 unless the resource (or its subresource `sub`) serves `verb`. */
export function assertVerbAllowed(r: RegisteredResource, sub: string, verb: string): void {
  const d = r.descriptor;
  const verbs = sub ? (d.subresources.find((x) => x.name === sub)?.verbs ?? []) : d.verbs;
  if (!verbs.includes(verb)) throw methodNotAllowed(r, verb);
}
