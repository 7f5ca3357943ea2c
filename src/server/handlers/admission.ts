// Admission as the handlers run it: the attributes of a write (upstream's admission.NewAttributesRecord),
// the chain's mutating phase before the registry's own checks, and its validating phase as the store's
// last step before storage, where a request whose deadline passed stops.
import type { GroupVersionKind, GroupVersionResource, KubeObject } from '../../apimachinery/types.js';
import type { AdmissionAttributes, AdmissionOperation } from '../../admission/index.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { handlerTimeoutError } from '../deadline.js';
import type { RequestScope } from '../request-scope.js';
import type { ServerContext } from './context.js';

export function admissionAttributes(
  s: RequestScope,
  r: RegisteredResource,
  operation: AdmissionOperation,
  namespace: string | undefined,
  name: string,
  object: KubeObject | undefined,
  oldObject: KubeObject | undefined,
  dryRun: boolean,
  subresource = '',
  options?: Readonly<Record<string, unknown>>,
  /** A subresource's own kind (Scale, TokenRequest), which its objects are; else the resource's. */
  kind?: GroupVersionKind,
): AdmissionAttributes {
  const d = r.descriptor;
  const resource: GroupVersionResource = { group: d.group, version: d.version, resource: d.plural };
  return {
    operation,
    resource,
    subresource,
    kind: kind ?? { group: d.group, version: d.version, kind: d.kind },
    namespace: namespace ?? '',
    name,
    // Always present (undefined when absent): one object shape for every request, so the plugins'
    // property reads stay monomorphic.
    object,
    oldObject,
    dryRun,
    options,
    userInfo: s.user,
    warnings: s,
    annotations: s,
  };
}

/**
 * Mutating admission: undefined when every plugin answered at once (then there is nothing to
 * await: `const m = admit(...); if (m) await m;` costs no promise), else a promise of the rest.
 */
export function admit(c: ServerContext, a: AdmissionAttributes): Promise<void> | undefined {
  return c.admission.startAdmit(a);
}

/**
 * Validating admission, the last step before a write reaches storage. A request whose deadline
 * passed stops here, as upstream's storage calls fail once the request's context is done. As
 * `admit`, undefined when it finished at once; its refusals are rejected promises, never throws.
 */
export function validateAdmission(c: ServerContext, a: AdmissionAttributes, s: RequestScope): Promise<void> | undefined {
  const pending = c.admission.startValidate(a);
  if (pending !== undefined) return pending.then(() => deadlineCheck(s));
  return s.expired ? Promise.reject(handlerTimeoutError()) : undefined;
}

function deadlineCheck(s: RequestScope): void {
  if (s.expired) throw handlerTimeoutError();
}

/**
 * The store's validate hook for a write: validating admission of the object (an UPDATE when there
 * is an old object, else a CREATE, unless `operation` says). An unnamed arrow returned by a
 * function: tsx names a `const` arrow made per request with a defineProperty call.
 */
export function validator(
  c: ServerContext,
  s: RequestScope,
  r: RegisteredResource,
  operation: AdmissionOperation | undefined,
  namespace: string | undefined,
  name: string,
  dryRun: boolean,
  sub: string,
  options?: Readonly<Record<string, unknown>>,
): (o: KubeObject, old?: KubeObject) => Promise<void> | undefined {
  return (o, old) =>
    validateAdmission(c, admissionAttributes(s, r, operation ?? (old ? 'UPDATE' : 'CREATE'), namespace, name, o, old, dryRun, sub, options), s);
}

/**
 * rest.AdmissionToValidateObjectDeleteFunc: a DELETE is admitted where the store reads the object
 * (after it is found and the preconditions hold), mutating then validating admission, with no
 * object and the one being deleted as the old object.
 */
export function deleteAdmission(
  c: ServerContext,
  s: RequestScope,
  r: RegisteredResource,
  namespace: string | undefined,
  name: string,
  dryRun: boolean,
  options?: Readonly<Record<string, unknown>>,
): (old: KubeObject) => Promise<void> {
  return async (old) => {
    const attrs = admissionAttributes(s, r, 'DELETE', namespace, name, undefined, old, dryRun, '', options);
    await admit(c, attrs);
    await validateAdmission(c, attrs, s);
  };
}
