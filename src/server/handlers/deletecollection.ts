// DELETE of a collection (handlers/delete.go DeleteCollection): each matching item is deleted as
// one DELETE would be, with admission naming no object; the answer is the list of what was deleted.
import type { RegisteredResource } from '../../registry/registry.js';
import { chooseOutput } from '../negotiation.js';
import type { RequestScope } from '../request-scope.js';
import { deleteAdmission } from './admission.js';
import type { ServerContext } from './context.js';
import { listOptionsFrom, readDeleteOptions } from './options.js';
import { respondList } from './responsewriters.js';

export async function serveDeleteCollection(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace } = s;
  const listOpts = listOptionsFrom(s.query);
  const { store: opts, options } = await readDeleteOptions(s, c.maxRequestBodyBytes, c.registry.scheme);
  // Each item's admission names no object: the request's namespace and an empty name.
  const out = await r.store.deleteCollection(namespace, listOpts, { ...opts, validate: deleteAdmission(c, s, r, namespace, '', opts.dryRun, options) });
  const choice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource });
  respondList(s, r, out, choice);
}
