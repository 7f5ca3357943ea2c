// The route of a resource request to its verb's handler (upstream's installer: one go-restful
// route per verb and path), with the router's 404 and 405 answers for what is not served.
import type { RegisteredResource } from '../../registry/registry.js';
import type { RequestScope } from '../request-scope.js';
import { setWarnings } from './responsewriters.js';
import type { ServerContext } from './context.js';
import { serveCreate } from './create.js';
import { serveDelete } from './delete.js';
import { serveDeleteCollection } from './deletecollection.js';
import { assertVerbAllowed, methodNotAllowed, pageNotFound } from './errors.js';
import { serveGet } from './get.js';
import { serveList } from './list.js';
import { servePatch } from './patch.js';
import { serveSubresourceCreate } from './subresource-create.js';
import { serveSubresourceReport } from './subresource-report.js';
import { serveView } from './subresource-view.js';
import { serveUpdate } from './update.js';
import { serveWatch } from './watch.js';

export function serveResource(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { info } = s;
  const d = r.descriptor;
  const itemName = info.parts[1] ?? '';
  const sub = info.subresource;
  if (sub && !d.subresources.some((x) => x.name === sub)) throw pageNotFound();
  if (info.parts.length > 3) throw pageNotFound();
  if (r.registration.warnings?.length) setWarnings(s.res, r.registration.warnings);
  // Namespaced resources need a namespace except for list/watch across all namespaces.
  const namespace = d.namespaced ? info.namespace || undefined : undefined;
  if (!d.namespaced && info.namespace && info.resource !== 'namespaces') throw pageNotFound();
  if (d.namespaced && !namespace && itemName) throw pageNotFound();
  s.resource = r;
  s.namespace = namespace;
  s.name = itemName;
  s.subresource = sub;
  const method = s.req.method ?? 'GET';
  if (itemName && sub && r.store.strategy.subresources?.[sub]?.view && info.verb !== 'watch') {
    if (method === 'GET' || method === 'HEAD') assertVerbAllowed(r, sub, 'get');
    else if (method === 'PUT') assertVerbAllowed(r, sub, 'update');
    else if (method === 'PATCH') assertVerbAllowed(r, sub, 'patch');
    else throw methodNotAllowed(r, method === 'DELETE' ? 'delete' : method === 'POST' ? 'create' : method.toLowerCase());
    return serveView(c, s, r);
  }
  if (itemName && sub && (method === 'POST' || method === 'PUT') && r.store.strategy.subresources?.[sub]?.report) {
    assertVerbAllowed(r, sub, method === 'POST' ? 'create' : 'update');
    return serveSubresourceReport(c, s, r);
  }
  if (itemName && sub && method === 'POST' && r.store.strategy.subresources?.[sub]?.create) {
    assertVerbAllowed(r, sub, 'create');
    return serveSubresourceCreate(c, s, r);
  }
  if (itemName) {
    switch (method) {
      case 'GET':
      case 'HEAD':
        if (info.verb === 'watch') {
          assertVerbAllowed(r, sub, 'watch');
          return serveWatch(c, s, r);
        }
        assertVerbAllowed(r, sub, 'get');
        return serveGet(c, s, r);
      case 'PUT':
        assertVerbAllowed(r, sub, 'update');
        return serveUpdate(c, s, r);
      case 'PATCH':
        assertVerbAllowed(r, sub, 'patch');
        return servePatch(c, s, r);
      case 'DELETE':
        if (sub) throw methodNotAllowed(r, 'delete');
        assertVerbAllowed(r, sub, 'delete');
        return serveDelete(c, s, r);
      case 'POST':
        throw methodNotAllowed(r, 'create');
      default:
        throw methodNotAllowed(r, method.toLowerCase());
    }
  }
  if (d.namespaced && !namespace && (method === 'POST' || method === 'DELETE')) throw pageNotFound();
  switch (method) {
    case 'GET':
    case 'HEAD':
      if (info.verb === 'watch') {
        assertVerbAllowed(r, sub, 'watch');
        return serveWatch(c, s, r);
      }
      assertVerbAllowed(r, sub, 'list');
      return serveList(c, s, r);
    case 'POST':
      assertVerbAllowed(r, sub, 'create');
      return serveCreate(c, s, r);
    case 'DELETE':
      assertVerbAllowed(r, sub, 'deletecollection');
      return serveDeleteCollection(c, s, r);
    default:
      throw methodNotAllowed(r, method.toLowerCase());
  }
}
