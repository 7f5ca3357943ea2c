// POST of a subresource that creates something of its own kind from one object (upstream's
// NamedCreater; serviceaccounts/token → TokenRequest): decode the body as that kind, check its
// kind and Go types, run mutating admission on it, hand it to the strategy (which runs validating
// admission once it has completed the request), answer 201 with what it made. Nothing is stored.
import { notFound } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { RegisteredResource } from '../../registry/registry.js';
import type { RequestScope } from '../request-scope.js';
import { admissionAttributes, admit, validateAdmission } from './admission.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { setWarnings, writeNegotiated } from './responsewriters.js';
import { decodeSubresourceBody } from './rest.js';

export async function serveSubresourceCreate(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  const subStrategy = r.store.strategy.subresources![sub]!;
  const opts = writeParams(s.query, 'create');
  const { decoded, kind: k } = await decodeSubresourceBody(c, s, r);
  const obj = decoded.object;
  // Admission as upstream's create handler runs it for a subresource: the subresource's kind, the request's object.
  const kind = { group: k.group, version: k.version, kind: k.kind };
  const attributes = (o: KubeObject) => admissionAttributes(s, r, 'CREATE', namespace, name, o, undefined, opts.dryRun, sub, opts.options, kind);
  await admit(c, attributes(obj));
  const out = await subStrategy.create!({
    namespace,
    name,
    body: obj,
    dryRun: opts.dryRun,
    validate: (o) => validateAdmission(c, attributes(o), s),
    async get(resource: string, ns: string | undefined, objName: string): Promise<KubeObject> {
      const target = c.registry.lookup('', 'v1', resource);
      if (!target) throw notFound({ group: '', resource }, objName);
      return target.store.get(target.descriptor.namespaced ? ns : undefined, objName);
    },
  });
  if (out.warnings?.length) setWarnings(s.res, out.warnings);
  writeNegotiated(s, 201, out.object);
}
