// GET of a collection (handlers/get.go ListResource): plain JSON lists are written from the store's
// bytes into reused buffers; other formats and Table/metadata transforms go through the object.
import type { RegisteredResource } from '../../registry/registry.js';
import { finishedWhenSent } from '../body-buffers.js';
import { chooseOutput } from '../negotiation.js';
import type { RequestScope } from '../request-scope.js';
import type { ServerContext } from './context.js';
import { listOptionsFrom } from './options.js';
import { plainJSON, respondList, sendJSON } from './responsewriters.js';

export async function serveList(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace } = s;
  const q = s.query;
  const choice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource });
  if (plainJSON(s, choice)) {
    const sent = finishedWhenSent(s.res);
    if (!sent) return sendJSON(s, 200, await r.store.listJSON(namespace, listOptionsFrom(q)), []);
    const lease: { buf?: Buffer } = {};
    const body = await r.store.listJSON(namespace, listOptionsFrom(q), (size) => (lease.buf = c.listBodies.take(size)));
    // Given back only once the response has sent it (never after an abort).
    const buf = lease.buf;
    if (buf) sent.once('finish', () => c.listBodies.give(buf));
    return sendJSON(s, 200, body, []);
  }
  const list = await r.store.list(namespace, listOptionsFrom(q));
  respondList(s, r, list, choice);
}
