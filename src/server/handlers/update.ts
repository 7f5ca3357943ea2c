// PUT of an object or subresource (handlers/update.go): the body replaces the object inside the
// store's retry loop, where managedFields and mutating admission run against the current object.
import { badRequest } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { cloneObject } from '../../registry/codec.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { managerOrUserAgent, trackUpdate } from '../fieldmanager.js';
import { defaultGroupVersionKind } from '../gvk.js';
import { header, type RequestScope } from '../request-scope.js';
import { admissionAttributes, admit, validator } from './admission.js';
import { decodeObjectBody, readObjectBody } from './body.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { respondWritten } from './responsewriters.js';
import { checkFields, checkGoTypes, checkKind, dedupOwnerReferences, fieldScope } from './rest.js';

export async function serveUpdate(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  const opts = writeParams(s.query, 'update');
  const body = await readObjectBody(s.req, r, c.maxRequestBodyBytes);
  const decoded = decodeObjectBody(header(s.req, 'content-type'), body, r);
  const obj = decoded.object;
  // Like kube's decoder, the endpoint's group/version/kind fills what the body leaves out.
  defaultGroupVersionKind(obj, r.descriptor);
  s.audit?.requestObject(obj);
  checkKind(obj, r);
  checkGoTypes(c.registry.definitions, r, obj);
  // checkName (handlers/rest.go): the body must name the object of the URL; an empty name does not.
  const bodyName = obj.metadata?.name ?? '';
  if (bodyName !== name) throw badRequest(`the name of the object (${bodyName}) does not match the name on the URL (${name})`);
  const warnings = checkFields(c.registry.definitions, r, obj, decoded, opts.fieldValidation);
  const fields = fieldScope(c.registry.definitions, r, sub);
  const manager = managerOrUserAgent(opts.fieldManager, header(s.req, 'user-agent'));
  const dedupWarnings: string[] = [];
  dedupOwnerReferences(obj, false, dedupWarnings);
  const result = await r.store.update(
    namespace,
    name,
    (current) => {
      const incoming = cloneObject(obj);
      trackUpdate(fields, current, incoming, manager);
      // A promise only when a plugin waited (admission.ts): otherwise the store gets the object at once.
      const admitted = admit(c, admissionAttributes(s, r, current ? 'UPDATE' : 'CREATE', namespace, name, incoming, current, opts.dryRun, sub, opts.options));
      if (admitted !== undefined) return admitted.then(() => afterAdmission(incoming, dedupWarnings));
      return afterAdmission(incoming, dedupWarnings);
    },
    {
      dryRun: opts.dryRun,
      ...(sub ? { subresource: sub } : {}),
      validate: validator(c, s, r, undefined, namespace, name, opts.dryRun, sub, opts.options),
    },
  );
  respondWritten(s, r, result.created ? 201 : 200, result, [...warnings, ...dedupWarnings, ...result.warnings]);
}

/** What follows mutating admission in the update function: owner references deduplicated again. */
function afterAdmission(incoming: KubeObject, warnings: string[]): KubeObject {
  dedupOwnerReferences(incoming, true, warnings);
  return incoming;
}
