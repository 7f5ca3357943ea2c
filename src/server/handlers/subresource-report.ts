// POST/PUT of a report folded into its parent (features/<name>/uses): the body is the
// subresource's own kind (FeatureUse), checked as any typed body (kind, unknown fields, the
// strategy's field issues as a 422), then folded into the stored object inside the store's retry
// loop. The reporter gets no managedFields entry (thousands of reporters would each own one), and a
// report already there writes nothing: the call is idempotent per reporter.
//
// Reports of one object are coalesced: while a write of the object is in flight, the reports that
// arrive wait, and the next write folds all of them (one read, one validation, one storage write),
// as SQLite's group commit does for writes. Hundreds of components reporting on one Feature so
// cost a few writes of it, not one each, and never conflict with one another on this server (only
// with another server's or the leader's writes, which the store's retry loop absorbs).
import { invalid, notFound } from '../../apimachinery/errors.js';
import { refTo, resolveSchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { pruneUnknownFields } from '../../apimachinery/unknown-fields.js';
import type { GenericStore } from '../../registry/store.js';
import type { RegisteredResource } from '../../registry/registry.js';
import type { SubresourceReportResult } from '../../registry/strategy.js';
import type { RequestScope } from '../request-scope.js';
import { strictFieldProblems } from '../strict-fields.js';
import { admissionAttributes, admit, validateAdmission, validator } from './admission.js';
import type { ServerContext } from './context.js';
import { writeParams } from './options.js';
import { setWarnings, writeNegotiated } from './responsewriters.js';
import { decodeSubresourceBody } from './rest.js';

type Folded = Extract<SubresourceReportResult, { object: KubeObject }>;
interface Outcome {
  readonly answer: KubeObject;
  readonly created: boolean;
  readonly warnings: readonly string[];
}
interface Pending {
  readonly s: RequestScope;
  readonly body: KubeObject;
  /** The report's kind, as its 422s name it (FeatureUse.features.kplane.io). */
  readonly gk: { readonly group: string; readonly kind: string };
  readonly resolve: (o: Outcome) => void;
  readonly reject: (e: unknown) => void;
}

/** Per store, per object (`namespace/name`): the reports waiting for the next write. A key is present while a write of it runs. */
const waiting = new WeakMap<GenericStore, Map<string, Pending[]>>();
/** Thrown out of the update function when no report of a batch changes the object: nothing to write. */
class Unchanged extends Error {}

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
  if (opts.dryRun) {
    // A dry run is answered alone: it must not ride on a batch that writes.
    let outcome: Folded | undefined;
    const result = await r.store.update(
      namespace,
      name,
      async (current) => {
        if (!current) throw notFound(r.store.groupResource, name);
        const folded = report.fold(obj, current, new Date());
        if ('issues' in folded) throw invalid({ group: gvk.group, kind: gvk.kind }, name, folded.issues);
        outcome = folded;
        if (folded.changed) await admit(c, admissionAttributes(s, r, 'UPDATE', namespace, name, folded.object, current, true, sub));
        return folded.object;
      },
      { dryRun: true, subresource: sub, validate: validator(c, s, r, 'UPDATE', namespace, name, true, sub) },
    );
    setWarnings(s.res, [...warnings, ...result.warnings]);
    writeNegotiated(s, outcome?.created ? 201 : 200, outcome?.answer ?? obj);
    return;
  }
  const outcome = await new Promise<Outcome>((resolve, reject) =>
    enqueue(c, r, namespace, name, { s, body: obj, gk: { group: gvk.group, kind: gvk.kind }, resolve, reject }),
  );
  setWarnings(s.res, [...warnings, ...outcome.warnings]);
  writeNegotiated(s, outcome.created ? 201 : 200, outcome.answer);
}

function enqueue(c: ServerContext, r: RegisteredResource, namespace: string | undefined, name: string, p: Pending): void {
  let byKey = waiting.get(r.store);
  if (!byKey) waiting.set(r.store, (byKey = new Map<string, Pending[]>()));
  const key = `${namespace ?? ''}/${name}`;
  const queue = byKey.get(key);
  if (queue) {
    queue.push(p); // a write of this object is in flight: the next one takes it
    return;
  }
  byKey.set(key, [p]);
  void drain(c, r, namespace, name, byKey, key);
}

/** Writes the waiting reports of one object, batch after batch, until none is left. */
async function drain(
  c: ServerContext,
  r: RegisteredResource,
  namespace: string | undefined,
  name: string,
  byKey: Map<string, Pending[]>,
  key: string,
): Promise<void> {
  for (;;) {
    const batch = byKey.get(key) ?? [];
    if (batch.length === 0) {
      byKey.delete(key);
      return;
    }
    byKey.set(key, []);
    await writeBatch(c, r, namespace, name, batch);
  }
}

/**
 * One write of the parent with every report of the batch folded in, in arrival order. Each
 * report is admitted (mutating, then validating) as its own request with its own user, against
 * the object as the reports before it left it; one refused leaves the others to be written.
 */
async function writeBatch(c: ServerContext, r: RegisteredResource, namespace: string | undefined, name: string, batch: readonly Pending[]): Promise<void> {
  const sub = batch[0]!.s.subresource;
  const report = r.store.strategy.subresources![sub]!.report!;
  const outcomes = new Map<Pending, { folded: Folded } | { error: unknown }>();
  let storeWarnings: readonly string[] = [];
  let failure: unknown;
  try {
    const result = await r.store.update(
      namespace,
      name,
      async (current) => {
        outcomes.clear(); // a retry (a conflict with another writer) folds the batch again
        if (!current) throw notFound(r.store.groupResource, name);
        let obj = current;
        let changed = false;
        for (const p of batch) {
          try {
            const folded = report.fold(p.body, obj, new Date());
            if ('issues' in folded) throw invalid(p.gk, name, folded.issues);
            if (folded.changed) {
              await admit(c, admissionAttributes(p.s, r, 'UPDATE', namespace, name, folded.object, obj, false, sub));
              await validateAdmission(c, admissionAttributes(p.s, r, 'UPDATE', namespace, name, folded.object, obj, false, sub), p.s);
              obj = folded.object;
              changed = true;
            }
            outcomes.set(p, { folded });
          } catch (e) {
            outcomes.set(p, { error: e });
          }
        }
        if (!changed) throw new Unchanged();
        return obj;
      },
      { subresource: sub },
    );
    storeWarnings = result.warnings;
  } catch (e) {
    if (!(e instanceof Unchanged)) failure = e;
  }
  for (const p of batch) {
    const o = outcomes.get(p);
    if (failure !== undefined && !(o && 'error' in o)) p.reject(failure);
    else if (!o) p.reject(new Error('report not folded'));
    else if ('error' in o) p.reject(o.error);
    else p.resolve({ answer: o.folded.answer, created: o.folded.created, warnings: storeWarnings });
  }
}
