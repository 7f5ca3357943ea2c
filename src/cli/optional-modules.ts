// The API modules `kplane serve --modules` adds to the default set, by name. Each entry is one line,
// so that modules land independently; the library equivalent is
// `createControlPlane({ apis: [...defaultModules(), <module>()] })`.
import type { ApiModule } from '../registry/registry.js';
import { olm } from '../controlplane/olm-module.js';
import { apiRegistration } from '../controlplane/modules.js';
import { cloud } from '../controlplane/cloud-module.js';

/** Flags of `kplane serve` that optional modules read (each module ignores the others; unset: the module's default). */
export interface OptionalModuleSettings {
  /** --global-catalog-namespace (olm): the namespace whose CatalogSources every namespace sees. */
  readonly globalCatalogNamespace?: string;
  /** --service-cluster-ip-range (cloud). */
  readonly serviceClusterIPRange?: string | undefined;
  /** --service-node-port-range (cloud). */
  readonly serviceNodePortRange?: string | undefined;
}

export interface OptionalModule {
  /** One line for `kplane serve --help`. */
  readonly help: string;
  /** Builds the module; throws an Error whose message names a bad flag value. */
  readonly module: (settings: OptionalModuleSettings) => ApiModule;
}

export const OPTIONAL_MODULES: Readonly<Record<string, OptionalModule>> = {
  olm: {
    help: "OLM's catalog APIs: operators.coreos.com CatalogSource (grpc: an address, or an image kplane pulls and serves), Subscription, InstallPlan, ClusterServiceVersion, OperatorGroup; packages.operators.coreos.com PackageManifest",
    module: (s) => olm(s.globalCatalogNamespace ? { globalCatalogNamespace: s.globalCatalogNamespace } : {}),
  },
  apiregistration: { help: 'apiregistration.k8s.io/v1 APIService: API aggregation (--aggregator-service-address)', module: () => apiRegistration() },
  cloud: {
    help: 'core/v1 nodes, services, endpoints, pods and discovery.k8s.io/v1 endpointslices (KEP-0008)',
    module: (s) =>
      cloud({
        ...(s.serviceClusterIPRange ? { serviceClusterIPRange: s.serviceClusterIPRange } : {}),
        ...(s.serviceNodePortRange ? { serviceNodePortRange: s.serviceNodePortRange } : {}),
      }),
  },
};

/** The modules a `--modules` list names (pflag's StringSlice: repeatable, comma-separated), or the message for an unknown name. */
export function optionalModulesFromFlag(values: readonly string[], settings: OptionalModuleSettings = {}): { modules: ApiModule[] } | { error: string } {
  const names = values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
  const modules: ApiModule[] = [];
  const seen = new Set<string>();
  for (const name of names) {
    const entry = Object.hasOwn(OPTIONAL_MODULES, name) ? OPTIONAL_MODULES[name] : undefined;
    if (!entry) {
      const known = Object.keys(OPTIONAL_MODULES).sort();
      return {
        error: `invalid argument ${JSON.stringify(values.join(','))} for "--modules" flag: unknown module ${JSON.stringify(name)} (known: ${known.length ? known.join(', ') : 'none'})`,
      };
    }
    if (seen.has(name)) continue;
    seen.add(name);
    try {
      modules.push(entry.module(settings));
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
  }
  return { modules };
}

/** The `--help` lines of the optional modules. */
export function optionalModulesUsage(): string {
  const names = Object.keys(OPTIONAL_MODULES).sort();
  if (!names.length) return 'none are built in yet';
  return names.map((n) => `${n}: ${OPTIONAL_MODULES[n]!.help}`).join('\n');
}
