// GET/PUT/PATCH of a subresource with a kind of its own (scale): the subresource's view of the
// object in and out, mapped back onto the object by the strategy.
import { notFound } from '../../apimachinery/errors.js';
import { refTo, resolveSchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { pruneUnknownFields } from '../../apimachinery/unknown-fields.js';
import { cloneObject } from '../../registry/codec.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { managerOrUserAgent, trackViewUpdate } from '../fieldmanager.js';
import { defaultGroupVersionKind } from '../gvk.js';
import { decodeBody, patchTypeOf } from '../negotiation.js';
import { applyPatch } from '../patch.js';
import { strictFieldProblems, type DuplicateFields } from '../strict-fields.js';
import { header, type RequestScope } from '../request-scope.js';
import { admissionAttributes, admit, validateAdmission } from './admission.js';
import { readBody } from './body.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { setWarnings, writeNegotiated } from './responsewriters.js';
import { checkKind, fieldScope } from './rest.js';

/**
 * GET/PUT/PATCH of a subresource with a kind of its own (scale: autoscaling/v1 Scale): bodies and
 * answers are the subresource's view of the object; the strategy maps writes back onto it.
 */
export async function serveView(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  const subresource = r.store.strategy.subresources![sub]!;
  const view = subresource.view!.bind(subresource);
  const sd = r.descriptor.subresources.find((x) => x.name === sub)!;
  const gvk = { group: sd.group ?? r.descriptor.group, version: sd.version ?? r.descriptor.version, kind: sd.kind };
  const method = s.req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') {
    const rv = s.query.get('resourceVersion');
    const obj = await r.store.get(namespace, name, rv ? { resourceVersion: rv } : {});
    return writeNegotiated(s, 200, view(obj));
  }
  const patchType = method === 'PATCH' ? patchTypeOf(header(s.req, 'content-type')) : undefined;
  const opts = writeParams(s.query, patchType ? 'patch' : 'update');
  const body = await readBody(s.req, c.maxRequestBodyBytes);
  let warnings: string[] = [];
  const definitionName = `io.k8s.api.${gvk.group || 'core'}.${gvk.version}.${gvk.kind}`;
  const schema = resolveSchema(c.registry.definitions, refTo(definitionName));
  const toObject = (o: KubeObject, duplicates: DuplicateFields): KubeObject => {
    defaultGroupVersionKind(o, gvk);
    checkKind(o, { group: gvk.group, version: gvk.version, kind: gvk.kind });
    const unknown = schema ? pruneUnknownFields(o, schema, c.registry.definitions) : [];
    // A typed kind (autoscaling/v1 Scale): upstream's typed decoders' order and words.
    warnings = strictFieldProblems({ ...duplicates, unknown, customResource: false }, opts.fieldValidation);
    return o;
  };
  const decoded = patchType
    ? undefined
    : decodeBody(header(s.req, 'content-type'), body, { numberTexts: r.registration.goTypedBody === true, scheme: r.scheme });
  const result = await r.store.update(
    namespace,
    name,
    async (current) => {
      if (!current) throw notFound(r.store.groupResource, name);
      const base = view(current);
      let incoming: KubeObject;
      if (patchType) {
        const patched = applyPatch(patchType, base, body, {
          schema,
          definitions: c.registry.definitions,
          kind: gvk.kind,
          group: gvk.group,
          fieldValidation: opts.fieldValidation,
        });
        incoming = toObject(patched.object, patched);
      } else {
        incoming = toObject(cloneObject(decoded!.object), decoded!);
        // Like upstream's scale update: without a resourceVersion the write is unconditional.
        const m = (incoming.metadata ??= {});
        if (!m.resourceVersion) m.resourceVersion = base.metadata?.resourceVersion;
      }
      // managedFields: what the write changes in the parent, owned by its manager.
      const next = r.store.strategy.subresources![sub]!.merge(cloneObject(incoming), cloneObject(current));
      trackViewUpdate(fieldScope(c.registry.definitions, r, sub), current, next, incoming, managerOrUserAgent(opts.fieldManager, header(s.req, 'user-agent')));
      // Admission sees the subresource's kind, both objects in it, as upstream's scale REST shows them.
      await admit(c, admissionAttributes(s, r, 'UPDATE', namespace, name, incoming, view(current), opts.dryRun, sub, opts.options, gvk));
      return incoming;
    },
    {
      dryRun: opts.dryRun,
      subresource: sub,
      validate: (o, old) =>
        validateAdmission(c, admissionAttributes(s, r, 'UPDATE', namespace, name, view(o), old && view(old), opts.dryRun, sub, opts.options, gvk), s),
    },
  );
  setWarnings(s.res, [...warnings, ...result.warnings]);
  writeNegotiated(s, 200, view(result.object));
}
