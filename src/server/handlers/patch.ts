// PATCH (handlers/patch.go): JSON, merge, strategic merge or apply (server-side apply), applied to
// the current object inside the store's retry loop, then checked as an update's body would be.
import { StatusError, badRequest, notFound } from '../../apimachinery/errors.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { applyRequest, forceOf, managerOrUserAgent, patchOptionsIssues, trackUpdate } from '../fieldmanager.js';
import { patchTypeOf, type PatchType } from '../negotiation.js';
import { applyPatch } from '../patch.js';
import { header, type RequestScope } from '../request-scope.js';
import { admissionAttributes, admit, validator } from './admission.js';
import { readObjectBody } from './body.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { respondWritten } from './responsewriters.js';
import { checkFields, checkGoTypes, checkKind, dedupOwnerReferences, fieldScope, schemaOf } from './rest.js';

export async function servePatch(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  let patchType: PatchType;
  try {
    patchType = patchTypeOf(header(s.req, 'content-type'));
  } catch (e) {
    // A built-in PATCH route consumes only the patch types: go-restful refuses any other with a
    // body before the handler runs (its own 415 words, empty details).
    if (!r.registration.customResource && Number(header(s.req, 'content-length') ?? 0) > 0) {
      throw new StatusError({ reason: 'UnsupportedMediaType', code: 415, message: '415: Unsupported Media Type', details: {} });
    }
    throw e;
  }
  const opts = writeParams(s.query, 'patch', patchOptionsIssues(s.query, patchType));
  const body = await readObjectBody(s.req, r, c.maxRequestBodyBytes);
  s.audit?.requestPatch(body);
  const schema = schemaOf(c.registry.definitions, r);
  const fields = fieldScope(c.registry.definitions, r, sub);
  const manager = managerOrUserAgent(opts.fieldManager, header(s.req, 'user-agent'));
  let warnings: string[] = [];
  const result = await r.store.update(
    namespace,
    name,
    async (current) => {
      if (patchType === 'apply') {
        const applied = applyRequest(fields, current, { body, manager, force: forceOf(s.query), fieldValidation: opts.fieldValidation });
        checkGoTypes(c.registry.definitions, r, applied.object, true);
        warnings = applied.warnings;
        await admit(c, admissionAttributes(s, r, current ? 'UPDATE' : 'CREATE', namespace, name, applied.object, current, opts.dryRun, sub, opts.options));
        // A patch is deduplicated only after mutating admission (patch.go).
        dedupOwnerReferences(applied.object, true, warnings);
        return applied.object;
      }
      if (!current) throw notFound(r.store.groupResource, name);
      const patched = applyPatch(patchType, current, body, {
        schema: r.registration.strategicMergePatch === false ? undefined : schema,
        definitions: c.registry.definitions,
        kind: r.descriptor.kind,
        group: r.descriptor.group,
        fieldValidation: opts.fieldValidation,
      });
      checkKind(patched.object, r);
      checkGoTypes(c.registry.definitions, r, patched.object, true);
      // checkName: a patch that leaves the object without a name (null, "", or no metadata) names nothing.
      if (!patched.object.metadata?.name) throw badRequest(`the name of the object (${name} based on URL) was undeterminable: name must be provided`);
      warnings = checkFields(c.registry.definitions, r, patched.object, patched, opts.fieldValidation);
      trackUpdate(fields, current, patched.object, manager);
      await admit(c, admissionAttributes(s, r, current ? 'UPDATE' : 'CREATE', namespace, name, patched.object, current, opts.dryRun, sub, opts.options));
      dedupOwnerReferences(patched.object, true, warnings);
      return patched.object;
    },
    {
      dryRun: opts.dryRun,
      ...(sub ? { subresource: sub } : {}),
      ...(patchType === 'apply' ? { forceAllowCreate: true } : {}),
      validate: validator(c, s, r, undefined, namespace, name, opts.dryRun, sub, opts.options),
    },
  );
  respondWritten(s, r, result.created ? 201 : 200, result, [...warnings, ...result.warnings]);
}
