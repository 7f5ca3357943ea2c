// OLM's catalog and install APIs (issue 27), an optional module (`kplane serve --modules=olm`):
// operators.coreos.com CatalogSource, Subscription, InstallPlan, ClusterServiceVersion (v1alpha1)
// and OperatorGroup (v1), shaped as OLM's CRDs; the CatalogSource controller for grpc catalogs at
// an address or in an image (pulled and served in process); packages.operators.coreos.com/v1
// PackageManifests built from those catalogs.
import type { KubeObject } from '../apimachinery/types.js';
import { CatalogSourceController } from '../catalog/olm/catalogsource-controller.js';
import { InstallController } from '../catalog/olm/install/controller.js';
import { resolve as satResolve } from '../catalog/olm/resolver/resolve.js';
import type { Resolve } from '../catalog/olm/resolver/types.js';
import { crdSchemaValidator } from './olm-schema.js';
import type { ApiModule } from '../registry/registry.js';
import { catalogSources, clusterServiceVersions, installPlans, operatorGroups, subscriptions } from '../registry/operators/olm-kinds.js';
import { packageManifests, type PackageManifestSource } from '../registry/operators/packagemanifests.js';

/** OLM's default global catalog namespace: its CatalogSources are visible in every namespace. */
export const DEFAULT_GLOBAL_CATALOG_NAMESPACE = 'olm';

export interface OlmOptions {
  /** Where log lines of the catalog controller go (default: the control plane's log). */
  readonly log?: (msg: string) => void;
  /** The namespace whose catalogs every namespace sees (default `olm`, as upstream). */
  readonly globalCatalogNamespace?: string;
  /** Reconnect backoff to a catalog's registry server (grpc's; default 1 s up to 30 s). */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** How often a READY catalog's packages are read again (default 5 min). */
  readonly resyncMs?: number;
  /** spec.image: the content cache catalog images are pulled through (default ~/.cache/kplane). */
  readonly imageCacheDir?: string;
  /** spec.image: the first pause before a failed pull is tried again (default 5 s, doubling up to 5 min). */
  readonly pullRetryMs?: number;
  /** The install flow's resolver (default: OLM's rules as a SAT problem, src/catalog/olm/resolver/). */
  readonly resolve?: Resolve;
  /** How often every namespace with Subscriptions is synced again (default 60 s). */
  readonly installResyncMs?: number;
  /** Called before each InstallPlan step is applied (tests inject faults mid-plan). */
  readonly beforeInstallStep?: (plan: string, index: number) => void | Promise<void>;
}

export function olm(opts: OlmOptions = {}): ApiModule {
  let controller: CatalogSourceController | undefined;
  let install: InstallController | undefined;
  const listeners = new Set<() => void>();
  const source: PackageManifestSource = {
    manifests: (): readonly KubeObject[] => controller?.packageManifests() ?? [],
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    name: 'operators.coreos.com',
    resources: [
      catalogSources,
      subscriptions,
      installPlans,
      clusterServiceVersions,
      operatorGroups,
      packageManifests(source, { globalNamespace: opts.globalCatalogNamespace ?? DEFAULT_GLOBAL_CATALOG_NAMESPACE }),
    ],
    async bootstrap(ctx) {
      const log = opts.log ?? ctx.log;
      controller = new CatalogSourceController(ctx.client, {
        ...(log ? { log } : {}),
        ...(opts.initialBackoffMs !== undefined ? { initialBackoffMs: opts.initialBackoffMs } : {}),
        ...(opts.maxBackoffMs !== undefined ? { maxBackoffMs: opts.maxBackoffMs } : {}),
        ...(opts.resyncMs !== undefined ? { resyncMs: opts.resyncMs } : {}),
        ...(opts.imageCacheDir !== undefined ? { imageCacheDir: opts.imageCacheDir } : {}),
        ...(opts.pullRetryMs !== undefined ? { pullRetryMs: opts.pullRetryMs } : {}),
        onPackagesChanged: () => {
          for (const l of listeners) l();
          install?.packagesChanged();
        },
      });
      const catalogs = controller;
      // The install flow: Subscriptions → InstallPlans → applied bundles → CSV phases.
      install = new InstallController(ctx.client, {
        resolve: opts.resolve ?? satResolve,
        resolveIsPure: opts.resolve === undefined,
        catalogs: {
          registryClient: (ns, name) => catalogs.registryClient(ns, name),
          defaultChannels: (ns, name) => catalogs.defaultChannels(ns, name),
        },
        globalCatalogNamespace: opts.globalCatalogNamespace ?? DEFAULT_GLOBAL_CATALOG_NAMESPACE,
        validateAgainstSchema: crdSchemaValidator,
        ...(log ? { log } : {}),
        ...(opts.installResyncMs !== undefined ? { resyncMs: opts.installResyncMs } : {}),
        ...(opts.beforeInstallStep ? { beforeStep: opts.beforeInstallStep } : {}),
      });
      controller.start();
      install.start();
    },
    async shutdown() {
      await install?.stop();
      await controller?.stop();
    },
  };
}
