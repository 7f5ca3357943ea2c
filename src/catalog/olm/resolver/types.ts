// The contract between OLM's install flow (Subscriptions → InstallPlans) and the resolver: what the
// flow knows (the Subscriptions of a namespace, what is installed, a snapshot of every CatalogSource
// in scope) and what the resolver answers (the bundles to install, in order, or why it cannot).
// Bundles are operator-registry's api.Bundle, as a registry server's ListBundles sends them.
import type { ApiBundle, GroupVersionKind } from '../../api/api.js';

export type { ApiBundle, GroupVersionKind };

/** A CatalogSource by name. */
export interface CatalogKey {
  name: string;
  namespace: string;
}

/** What one CatalogSource offered when the snapshot was taken. */
export interface CatalogSnapshot {
  key: CatalogKey;
  /** spec.priority: higher is preferred when two catalogs offer a candidate. */
  priority: number;
  /** Every bundle of every channel (one entry per bundle and channel, as ListBundles). */
  bundles: ApiBundle[];
  /** package name → its default channel. */
  defaultChannels: Record<string, string>;
}

/** One Subscription's wish. */
export interface SubscriptionInput {
  name: string;
  namespace: string;
  package: string;
  /** spec.channel; the package's default channel when absent. */
  channel?: string;
  startingCSV?: string;
  /** spec.source / spec.sourceNamespace: the catalog the Subscription names. */
  source: string;
  sourceNamespace: string;
  /** status.installedCSV: the upgrade graph continues from here. */
  installedCSV?: string;
}

/** An operator already in the namespace (a CSV), so it is kept, upgraded, or satisfies a dependency. */
export interface InstalledOperator {
  csvName: string;
  package?: string;
  version?: string;
  catalog?: CatalogKey;
  providedApis: GroupVersionKind[];
}

export interface ResolveInput {
  namespace: string;
  subscriptions: SubscriptionInput[];
  installed: InstalledOperator[];
  /** Every CatalogSource in scope: the namespace's and the global catalog namespace's. */
  catalogs: CatalogSnapshot[];
}

export interface ResolvedStep {
  bundle: ApiBundle;
  catalog: CatalogKey;
  /** The Subscription this answers; absent for a bundle installed to satisfy a dependency. */
  subscription?: string;
  /** The installed CSV this bundle replaces (an upgrade), if any. */
  replaces?: string;
}

export type ResolveResult =
  | { ok: true; steps: ResolvedStep[] }
  | {
      ok: false;
      /** OLM's Subscription condition reason, e.g. ConstraintsNotSatisfiable. */
      reason: string;
      /** OLM's explanation, e.g. "constraints not satisfiable: ...". */
      message: string;
    };

export type Resolve = (input: ResolveInput) => ResolveResult | Promise<ResolveResult>;
