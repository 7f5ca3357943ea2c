// GET of a collection (handlers/get.go ListResource): plain JSON lists are written from the store's
// bytes in chunks of reused memory, a large one chunk by chunk as the client reads it; other
// formats and Table/metadata transforms go through the object.
import { LIST_CHUNK_BYTES } from '../../registry/store.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { finishedWhenSent } from '../body-buffers.js';
import { chooseOutput } from '../negotiation.js';
import type { RequestScope } from '../request-scope.js';
import { streamBody } from '../stream-body.js';
import type { ServerContext } from './context.js';
import { listOptionsFrom } from './options.js';
import { plainJSON, respondList, sendJSON } from './responsewriters.js';

export async function serveList(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace } = s;
  const q = s.query;
  const choice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource });
  if (plainJSON(s, choice)) {
    const sent = finishedWhenSent(s.res);
    // The in-process response hands its chunks on to its reader (never reused memory), and HEAD has no body to pace.
    if (!sent || s.req.method === 'HEAD') return sendJSON(s, 200, await r.store.listJSON(namespace, listOptionsFrom(q)), []);
    const take = c.listBodies.takeFn;
    const give = c.listBodies.giveFn;
    const chunks = await r.store.listJSONChunks(namespace, listOptionsFrom(q), LIST_CHUNK_BYTES, take);
    const first = chunks.next();
    if (first.done) throw new Error('a list encodes to at least one chunk');
    const second = chunks.next();
    if (second.done) {
      // The whole answer in one chunk: sent as one body, as small answers always were. Its buffer
      // is given back only once the response has sent it (never after an abort).
      const { bytes, taken } = first.value;
      sent.once('finish', () => give(taken));
      return sendJSON(s, 200, bytes, []);
    }
    // More than a chunk (over the gzip threshold): written as the client reads it.
    s.res.statusCode = 200;
    s.res.setHeader('Content-Type', 'application/json');
    return streamBody(s.res, [first.value, second.value], chunks, { compress: s.compress, give });
  }
  const list = await r.store.list(namespace, listOptionsFrom(q));
  respondList(s, r, list, choice);
}
