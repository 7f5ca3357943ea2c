// POST of a subresource that creates something of its own kind from one object (upstream's
// NamedCreater; serviceaccounts/token → TokenRequest): decode the body as that kind, check its
// kind and Go types, hand it to the strategy, answer 201 with what it made. Nothing is stored.
import { notFound, undecodable } from '../../apimachinery/errors.js';
import { goTypeError } from '../../apimachinery/gotypes.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { defaultGroupVersionKind } from '../gvk.js';
import { decodeBody } from '../negotiation.js';
import { header, type RequestScope } from '../request-scope.js';
import { readBody } from './body.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { setWarnings, writeNegotiated } from './responsewriters.js';
import { checkKind } from './rest.js';

export async function serveSubresourceCreate(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  const subStrategy = r.store.strategy.subresources![sub]!;
  const sd = r.descriptor.subresources.find((x) => x.name === sub)!;
  const gvk = { group: sd.group ?? r.descriptor.group, version: sd.version ?? r.descriptor.version, kind: sd.kind };
  const opts = writeParams(s.query, 'create');
  const body = await readBody(s.req, c.maxRequestBodyBytes);
  const decoded = decodeBody(header(s.req, 'content-type'), body, { numberTexts: true, scheme: r.scheme });
  const obj = decoded.object;
  defaultGroupVersionKind(obj, gvk);
  checkKind(obj, gvk);
  const definitionName = `io.k8s.api.${gvk.group.replace(/\.k8s\.io$/, '').split('.')[0] || 'core'}.${gvk.version}.${gvk.kind}`;
  const why = goTypeError(obj, definitionName, c.registry.definitions, r.scheme.goFieldTypes);
  if (why !== undefined) throw undecodable(gvk.kind, gvk.version, gvk.kind, why);
  const out = await subStrategy.create!({
    namespace,
    name,
    body: obj,
    dryRun: opts.dryRun,
    async get(resource: string, ns: string | undefined, objName: string): Promise<KubeObject> {
      const target = c.registry.lookup('', 'v1', resource);
      if (!target) throw notFound({ group: '', resource }, objName);
      return target.store.get(target.descriptor.namespaced ? ns : undefined, objName);
    },
  });
  if (out.warnings?.length) setWarnings(s.res, out.warnings);
  writeNegotiated(s, 201, out.object);
}
