// matchPolicy: Equivalent, shared by the webhook dispatchers and the admission policies: a request
// none of whose rules match its own version is matched against the other versions of the same
// resource (upstream's order: rules outside, versions inside), and the objects are converted to the
// version that matched before the webhook or policy sees them.
import { StatusError, internalError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { AdmissionAttributes, EquivalentResources, EquivalentVersion } from './interfaces.js';

/**
 * The first equivalent version of the request's resource some rule matches (each rule in turn
 * against every other version the resource is served in), or undefined.
 */
export function equivalentMatch<R>(
  rules: readonly R[],
  a: AdmissionAttributes,
  eq: EquivalentResources,
  matches: (rule: R, a: AdmissionAttributes) => boolean,
): EquivalentVersion | undefined {
  if (rules.length === 0) return undefined;
  const versions = eq.versionsOf(a.resource.group, a.resource.resource);
  if (versions.length < 2) return undefined;
  for (const r of rules) {
    for (const v of versions) {
      if (v.version !== a.resource.version && matches(r, { ...a, resource: { ...a.resource, version: v.version } })) return v;
    }
  }
  return undefined;
}

/** The request's objects converted to the equivalent version a webhook or policy sees. */
export interface Converted extends EquivalentVersion {
  readonly object: KubeObject | undefined;
  readonly oldObject: KubeObject | undefined;
}

export async function convertFor(eq: EquivalentResources, a: AdmissionAttributes, to: EquivalentVersion): Promise<Converted> {
  const { group, resource, version } = a.resource;
  const conv = (o: KubeObject | undefined): Promise<KubeObject | undefined> | undefined =>
    o === undefined ? undefined : eq.convert(o, group, resource, version, to.version);
  const [object, oldObject] = await Promise.all([conv(a.object), conv(a.oldObject)]);
  return { ...to, object, oldObject };
}

/** A conversion to or from an equivalent version that failed: upstream's InternalError. */
export function conversionFailed(e: unknown): StatusError {
  return internalError(e instanceof StatusError ? new Error(e.message) : e);
}
