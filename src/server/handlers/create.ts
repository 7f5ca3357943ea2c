// POST of a collection (handlers/create.go): decode, default the group/version/kind, check types and
// fields, wipe system fields, track managedFields, mutating admission, then the store, whose last
// step before storage is validating admission.
import type { RegisteredResource } from '../../registry/registry.js';
import { managerOrUserAgent, trackUpdate } from '../fieldmanager.js';
import { defaultGroupVersionKind } from '../gvk.js';
import { chooseOutput } from '../negotiation.js';
import { header, type RequestScope } from '../request-scope.js';
import { admissionAttributes, admit, validateAdmission } from './admission.js';
import { decodeObjectBody, readObjectBody } from './body.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { respondObject, respondWritten } from './responsewriters.js';
import { checkFields, checkGoTypes, checkKind, dedupOwnerReferences, fieldScope, wipeObjectMetaSystemFields } from './rest.js';

export async function serveCreate(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace } = s;
  const opts = writeParams(s.query, 'create');
  const body = await readObjectBody(s.req, r, c.maxRequestBodyBytes);
  const decoded = decodeObjectBody(header(s.req, 'content-type'), body, r);
  const obj = decoded.object;
  // Like kube's decoder, the endpoint's group/version/kind fills what the body leaves out.
  defaultGroupVersionKind(obj, r.descriptor);
  s.audit?.requestObject(obj);
  checkKind(obj, r);
  checkGoTypes(c.registry.definitions, r, obj);
  const warnings = checkFields(c.registry.definitions, r, obj, decoded, opts.fieldValidation);
  const review = r.registration.review;
  if (review !== undefined) {
    // A review: answered from the body and the user, nothing stored. Admission is not run: the
    // only built-in plugin, NamespaceLifecycle, exempts the reviews upstream too. Answered as JSON
    // (every client that accepts protobuf accepts JSON too): review kinds carry maps of string
    // lists (UserInfo.extra) that kplane's protobuf codec has no form for.
    const answer = await review(obj, { user: s.user, namespace });
    return respondObject(s, r, 201, answer, warnings, chooseOutput(s.accept, { protobufOk: false }));
  }
  // rest.WipeObjectMetaSystemFields: what the server sets is not the client's, nor its managed fields'.
  wipeObjectMetaSystemFields(obj);
  dedupOwnerReferences(obj, false, warnings);
  trackUpdate(fieldScope(c.registry.definitions, r, ''), undefined, obj, managerOrUserAgent(opts.fieldManager, header(s.req, 'user-agent')));
  // Nothing to await when every plugin answered at once (admission.ts).
  const admitted = admit(c, admissionAttributes(s, r, 'CREATE', namespace, obj.metadata?.name ?? '', obj, undefined, opts.dryRun, '', opts.options));
  if (admitted !== undefined) await admitted;
  dedupOwnerReferences(obj, true, warnings);
  // Methods, not arrow functions in properties: tsx (esbuild's keepNames) names each of those with
  // a defineProperty call when it is made, ~0.5 µs per request.
  const out = await r.store.create(namespace, obj, {
    dryRun: opts.dryRun,
    ...(opts.fieldManager ? { fieldManager: opts.fieldManager } : {}),
    validate(o) {
      return validateAdmission(c, admissionAttributes(s, r, 'CREATE', namespace, o.metadata?.name ?? '', o, undefined, opts.dryRun, '', opts.options), s);
    },
  });
  respondWritten(s, r, 201, out, [...warnings, ...out.warnings]);
}
