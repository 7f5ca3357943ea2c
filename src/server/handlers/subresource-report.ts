// POST/PUT of a report folded into its parent (features/<name>/uses): the body is the
// subresource's own kind (FeatureUse), checked as any typed body (kind, unknown fields, the
// strategy's field issues as a 422), then folded into the stored object inside the store's retry
// loop. The reporter gets no managedFields entry (thousands of reporters would each own one), and a
// report already there writes nothing: the call is idempotent per reporter.
import { invalid, notFound, undecodable } from '../../apimachinery/errors.js';
import { goTypeError } from '../../apimachinery/gotypes.js';
import { refTo, resolveSchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { pruneUnknownFields } from '../../apimachinery/unknown-fields.js';
import type { RegisteredResource } from '../../registry/registry.js';
import type { SubresourceReportResult } from '../../registry/strategy.js';
import { defaultGroupVersionKind } from '../gvk.js';
import { decodeBody } from '../negotiation.js';
import { header, type RequestScope } from '../request-scope.js';
import { strictFieldProblems } from '../strict-fields.js';
import { admissionAttributes, admit, validator } from './admission.js';
import { readBody } from './body.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { setWarnings, writeNegotiated } from './responsewriters.js';
import { checkKind } from './rest.js';

export async function serveSubresourceReport(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  const report = r.store.strategy.subresources![sub]!.report!;
  const sd = r.descriptor.subresources.find((x) => x.name === sub)!;
  const gvk = { group: sd.group ?? r.descriptor.group, version: sd.version ?? r.descriptor.version, kind: sd.kind };
  const opts = writeParams(s.query, s.req.method === 'PUT' ? 'update' : 'create');
  const body = await readBody(s.req, c.maxRequestBodyBytes);
  const decoded = decodeBody(header(s.req, 'content-type'), body, { numberTexts: false, scheme: r.scheme });
  const obj = decoded.object;
  defaultGroupVersionKind(obj, gvk);
  checkKind(obj, gvk);
  const schema = sd.definitionName ? resolveSchema(c.registry.definitions, refTo(sd.definitionName)) : undefined;
  // A field of the wrong JSON type is refused as Go's decoder would refuse it (400), before pruning.
  const why = sd.definitionName ? goTypeError(obj, sd.definitionName, c.registry.definitions, r.scheme.goFieldTypes) : undefined;
  if (why !== undefined) throw undecodable(gvk.kind, gvk.version, gvk.kind, why);
  const unknown = schema ? pruneUnknownFields(obj, schema, c.registry.definitions) : [];
  const warnings = strictFieldProblems({ ...decoded, unknown, customResource: false }, opts.fieldValidation);
  const issues = report.validate(obj);
  if (issues.length) throw invalid({ group: gvk.group, kind: gvk.kind }, name, issues);
  let outcome: Extract<SubresourceReportResult, { object: KubeObject }> | undefined;
  const result = await r.store.update(
    namespace,
    name,
    async (current) => {
      if (!current) throw notFound(r.store.groupResource, name);
      const folded = report.fold(obj, current, new Date());
      if ('issues' in folded) throw invalid({ group: gvk.group, kind: gvk.kind }, name, folded.issues);
      outcome = folded;
      if (folded.changed) {
        await admit(c, admissionAttributes(s, r, 'UPDATE', namespace, name, folded.object, current, opts.dryRun, sub));
      }
      return folded.object;
    },
    { dryRun: opts.dryRun, subresource: sub, validate: validator(c, s, r, 'UPDATE', namespace, name, opts.dryRun, sub) },
  );
  setWarnings(s.res, [...warnings, ...result.warnings]);
  writeNegotiated(s, outcome?.created ? 201 : 200, outcome?.answer ?? obj);
}
