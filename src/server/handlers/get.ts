// GET of one object (upstream's handlers/get.go): the stored JSON with its resourceVersion spliced
// in when the answer is plain JSON, otherwise the object in the negotiated format or as a Table.
import type { RegisteredResource } from '../../registry/registry.js';
import { chooseOutput } from '../negotiation.js';
import type { RequestScope } from '../request-scope.js';
import type { ServerContext } from './context.js';
import { plainJSON, respondObject, sendJSON } from './responsewriters.js';

export async function serveGet(_c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name } = s;
  const rv = s.query.get('resourceVersion');
  const opts = rv ? { resourceVersion: rv } : {};
  const choice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource });
  if (plainJSON(s, choice)) {
    const got = await r.store.getJSON(namespace, name, opts);
    if ('object' in got) return respondObject(s, r, 200, got.object, [], choice);
    return sendJSON(s, 200, got.json, []);
  }
  respondObject(s, r, 200, await r.store.get(namespace, name, opts), [], choice);
}
