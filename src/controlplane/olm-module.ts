// OLM's catalog and install APIs (issue 27), an optional module (`kplane serve --modules=olm`):
// operators.coreos.com CatalogSource, Subscription, InstallPlan, ClusterServiceVersion (v1alpha1)
// and OperatorGroup (v1), shaped as OLM's CRDs.
import type { ApiModule } from '../registry/registry.js';
import { catalogSources, clusterServiceVersions, installPlans, operatorGroups, subscriptions } from '../registry/operators/olm-kinds.js';

export interface OlmOptions {
  /** Where log lines of the catalog controller go (default: the control plane's log). */
  readonly log?: (msg: string) => void;
}

export function olm(_opts: OlmOptions = {}): ApiModule {
  return {
    name: 'operators.coreos.com',
    resources: [catalogSources, subscriptions, installPlans, clusterServiceVersions, operatorGroups],
  };
}
