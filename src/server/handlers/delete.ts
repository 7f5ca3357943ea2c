// DELETE of one object (handlers/delete.go): DeleteOptions from body or query, admission where the
// store has read the object, and the Success Status or the object (still there while finalizers run).
import type { RegisteredResource } from '../../registry/registry.js';
import type { RequestScope } from '../request-scope.js';
import { deleteAdmission } from './admission.js';
import type { ServerContext } from './context.js';
import { readDeleteOptions } from './options.js';
import { respondObject, writeNegotiated } from './responsewriters.js';

export async function serveDelete(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name } = s;
  const { store: opts, options } = await readDeleteOptions(s, c.maxRequestBodyBytes, c.registry.scheme);
  const out = await r.store.delete(namespace, name, { ...opts, validate: deleteAdmission(c, s, r, namespace, name, opts.dryRun, options) });
  if (out.deleted && !r.registration.returnDeletedObject) {
    const status = r.store.deletedStatus(out.object);
    return writeNegotiated(s, 200, status);
  }
  const code = !out.deleted && opts.orphanDependents === false ? 202 : 200;
  respondObject(s, r, code, out.object);
}
