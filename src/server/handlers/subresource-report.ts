// POST/PUT of a report folded into its parent (features/<name>/uses): the body is the
// subresource's own kind (FeatureUse), checked as any typed body (kind, unknown fields, the
// strategy's field issues as a 422), then folded into the stored object inside the store's retry
// loop. The reporter gets no managedFields entry (thousands of reporters would each own one), and a
// report already there writes nothing: the call is idempotent per reporter.
import { invalid, notFound } from '../../apimachinery/errors.js';
import { refTo, resolveSchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { pruneUnknownFields } from '../../apimachinery/unknown-fields.js';
import type { RegisteredResource } from '../../registry/registry.js';
import type { SubresourceReportResult } from '../../registry/strategy.js';
import type { RequestScope } from '../request-scope.js';
import { strictFieldProblems } from '../strict-fields.js';
import { admissionAttributes, admit, validator } from './admission.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { setWarnings, writeNegotiated } from './responsewriters.js';
import { decodeSubresourceBody } from './rest.js';

export async function serveSubresourceReport(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const { namespace, name, subresource: sub } = s;
  const report = r.store.strategy.subresources![sub]!.report!;
  const opts = writeParams(s.query, s.req.method === 'PUT' ? 'update' : 'create');
  const { decoded, kind: gvk } = await decodeSubresourceBody(c, s, r);
  const obj = decoded.object;
  const schema = resolveSchema(c.registry.definitions, refTo(gvk.definitionName));
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
