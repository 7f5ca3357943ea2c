// spec.desired (KEP-0007, research §5.3 and A3): a cluster admin turns a feature on or off through
// the Feature API, but only a feature its author marked dynamic and the operator listed in the
// API server's `--dynamic-features`. Anything else is refused with 422 `spec.desired: Forbidden`,
// as upstream refuses a field a gate or a configuration does not allow. RBAC (verb `update` on
// `features`, cluster-admin only by default) is checked before this; an unknown value is the
// strategy's `Unsupported value`.
import { fieldIssue, invalid } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { AdmissionPlugin } from '../../../admission/interfaces.js';
import { FEATURES_GROUP, KPLANE_FEATURE_CLASS } from './types.js';

/** What the plugin asks of the control plane's gate. */
export interface DynamicFeatureLookup {
  /** Whether the feature is known to this server's gate. */
  known(name: string): boolean;
  /** Whether its author marked it dynamic. */
  isDynamic(name: string): boolean;
}

const desiredOf = (o: KubeObject | undefined): unknown => {
  const spec = (o as { spec?: unknown } | undefined)?.spec;
  return spec && typeof spec === 'object' ? (spec as Record<string, unknown>)['desired'] : undefined;
};

/**
 * The validating admission plugin of `spec.desired` for the server's own class (kube-system).
 * A value already stored is kept on update (ratcheting: a feature dropped from the list later
 * does not make its object unwritable); setting or changing it is judged.
 */
export function featureDesiredAdmission(gate: DynamicFeatureLookup, dynamicFeatures: ReadonlySet<string>, namespace = KPLANE_FEATURE_CLASS): AdmissionPlugin {
  return {
    name: 'FeatureDesired',
    handles: (op) => op === 'CREATE' || op === 'UPDATE',
    validate(a) {
      if (a.resource.group !== FEATURES_GROUP || a.resource.resource !== 'features' || a.subresource !== '' || a.namespace !== namespace) return;
      const desired = desiredOf(a.object);
      if (desired === undefined || desired === null || desired === '') return;
      if (a.operation === 'UPDATE' && desiredOf(a.oldObject) === desired) return;
      const name = a.name;
      let why: string | undefined;
      if (!gate.known(name)) why = `feature ${name} is not known to this API server`;
      else if (!gate.isDynamic(name)) why = `feature ${name} is not dynamic: it can only be set with --feature-gates`;
      else if (!dynamicFeatures.has(name)) why = `feature ${name} is not listed in the API server's --dynamic-features`;
      if (why) throw invalid({ group: FEATURES_GROUP, kind: 'Feature' }, name, [fieldIssue.forbidden('spec.desired', why)]);
    },
  };
}
