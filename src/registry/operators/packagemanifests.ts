// packages.operators.coreos.com/v1 PackageManifest, served natively as OLM's package server serves
// it (pkg/package-server/storage/reststorage.go, provider/registry.go): read-only (get, list,
// watch), namespaced, computed from the catalogs' packages rather than stored. A namespace sees
// the packages of its own CatalogSources and of those in the global catalog namespace, with the
// namespace set to the one asked (the provider's List); across all namespaces each package is
// listed in its CatalogSource's namespace.
import { ALL_VERBS, type ResourceDescriptor } from '../../apimachinery/resource.js';
import type { Definitions, OpenAPISchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { apiVersionField, kind, kindField, listKind, objectMetaField, struct } from '../../apimachinery/definitions/util.js';
import { ExpiredError, type KV, type ListOptions, type ListResult, type Storage, type WatchEvent, type WatchOptions } from '../../storage/storage.js';
import type { ResourceRegistration } from '../registry.js';
import type { Strategy } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';

export const PACKAGES_GROUP = 'packages.operators.coreos.com';

/** Where the PackageManifests come from (the CatalogSource controller's cache). */
export interface PackageManifestSource {
  /** Every package of every READY catalog, each in its CatalogSource's namespace. */
  manifests(): readonly KubeObject[];
  /** Calls `listener` whenever manifests() may answer differently; returns the unsubscribe. */
  subscribe(listener: () => void): () => void;
}

export interface PackageManifestsOptions {
  /** The namespace whose catalogs every namespace sees (OLM's `olm`). */
  readonly globalNamespace: string;
}

/** How many revisions of the source a watch may start from. */
const HISTORY = 64;
const KEY_PREFIX = `/registry/${PACKAGES_GROUP}/packagemanifests/`;
const encoder = new TextEncoder();

/** Writes never reach it (the resource serves get, list and watch only). */
async function readOnly(): Promise<never> {
  throw new Error('packagemanifests are read-only');
}

/**
 * A Storage that computes its keys from the source at each read: revisions count the source's
 * changes, every object carries the revision of the last change.
 */
class PackageManifestStorage implements Storage {
  private revision = 1;
  private readonly waiters = new Set<() => void>();
  /** The source's manifests at the last revisions, so that a watch from a recent list misses nothing. */
  private readonly history = new Map<number, readonly KubeObject[]>();
  readonly revisionIsLocal = true;

  constructor(
    private readonly source: PackageManifestSource,
    private readonly globalNamespace: string,
  ) {
    this.history.set(this.revision, source.manifests());
    source.subscribe(() => {
      this.revision++;
      this.history.set(this.revision, source.manifests());
      if (this.history.size > HISTORY) this.history.delete(this.revision - HISTORY);
      for (const w of [...this.waiters]) w();
    });
  }

  /** The view under a prefix (of the manifests at a revision kept, default the latest): key → object, sorted by key. */
  private view(prefix: string, all: readonly KubeObject[] = this.source.manifests()): Map<string, KubeObject> {
    const rest = prefix.slice(KEY_PREFIX.length);
    const namespace = rest ? rest.replace(/\/$/, '') : undefined;
    const out = new Map<string, KubeObject>();
    const add = (o: KubeObject, ns: string): void => {
      const key = `${KEY_PREFIX}${ns}/${o.metadata?.name ?? ''}`;
      if (out.has(key)) return; // a namespace's own catalog comes first (the provider's Get takes the first)
      out.set(key, ns === o.metadata?.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: ns } });
    };
    if (namespace === undefined) {
      for (const o of all) add(o, o.metadata?.namespace ?? '');
    } else {
      for (const o of all) if (o.metadata?.namespace === namespace) add(o, namespace);
      if (namespace !== this.globalNamespace) for (const o of all) if (o.metadata?.namespace === this.globalNamespace) add(o, namespace);
    }
    return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private kv(key: string, o: KubeObject): KV {
    return { key, value: encoder.encode(JSON.stringify(o)), createRevision: this.revision, modRevision: this.revision };
  }

  private namespacePrefix(key: string): string {
    const rest = key.slice(KEY_PREFIX.length);
    const slash = rest.indexOf('/');
    return slash < 0 ? KEY_PREFIX : KEY_PREFIX + rest.slice(0, slash + 1);
  }

  async get(key: string): Promise<KV | undefined> {
    const o = this.view(this.namespacePrefix(key)).get(key);
    return o ? this.kv(key, o) : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    let entries = [...this.view(prefix).entries()];
    if (opts.startKey !== undefined) entries = entries.filter(([k]) => k >= opts.startKey!);
    const limit = opts.limit ?? 0;
    const more = limit > 0 && entries.length > limit;
    const page = more ? entries.slice(0, limit) : entries;
    return {
      items: page.map(([k, o]) => this.kv(k, o)),
      revision: this.revision,
      more,
      ...(more ? { remaining: entries.length - limit } : {}),
    };
  }

  async count(prefix: string): Promise<number> {
    return this.view(prefix).size;
  }

  /** Changes of the view under `prefix` from now on, one revision per change of the source. */
  async *watch(prefix: string, opts: WatchOptions): AsyncIterable<WatchEvent> {
    const { signal } = opts;
    const from = opts.afterRevision > 0 && opts.afterRevision < this.revision ? this.history.get(opts.afterRevision) : this.source.manifests();
    if (!from) throw new ExpiredError(opts.afterRevision, Math.min(...this.history.keys()));
    let seen = new Map([...this.view(prefix, from)].map(([k, o]) => [k, JSON.stringify(o)]));
    // Changes after the revision asked for are sent at once.
    let pending = opts.afterRevision > 0 && opts.afterRevision < this.revision;
    const wake: { fn?: () => void } = {};
    const waiter = (): void => {
      pending = true;
      wake.fn?.();
    };
    this.waiters.add(waiter);
    const onAbort = (): void => wake.fn?.();
    signal.addEventListener('abort', onAbort);
    try {
      while (!signal.aborted) {
        if (!pending) await new Promise<void>((r) => (wake.fn = r));
        wake.fn = undefined;
        if (signal.aborted) return;
        pending = false;
        const revision = this.revision;
        const now = this.view(prefix);
        const next = new Map<string, string>();
        for (const [key, o] of now) {
          const json = JSON.stringify(o);
          next.set(key, json);
          if (seen.get(key) === json) continue;
          const kv: KV = { key, value: encoder.encode(json), createRevision: revision, modRevision: revision };
          yield { type: 'put', kv, revision };
        }
        for (const [key, json] of seen) {
          if (next.has(key)) continue;
          const kv: KV = { key, value: encoder.encode(json), createRevision: revision, modRevision: revision };
          yield { type: 'delete', kv, revision };
        }
        seen = next;
      }
    } finally {
      this.waiters.delete(waiter);
      signal.removeEventListener('abort', onAbort);
    }
  }

  async currentRevision(): Promise<number> {
    return this.revision;
  }
  async oldestRevision(): Promise<number> {
    return 1;
  }
  async compact(): Promise<void> {}
  async ping(): Promise<void> {}
  async close(): Promise<void> {}
  create = readOnly;
  update = readOnly;
  delete = readOnly;
}

const strategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: () => [],
  validateUpdate: () => [],
  // The package server's printer: Name, Catalog (the CatalogSource's display name), Age.
  tableColumns: [nameColumn, { name: 'Catalog', type: 'string', description: 'The source catalog for this package', priority: 0 }, ageColumn],
  tableCells: (o) => [
    o.metadata?.name ?? '',
    (o as { status?: { catalogSourceDisplayName?: string } }).status?.catalogSourceDisplayName ?? '',
    o.metadata?.creationTimestamp ? ageSince(o.metadata.creationTimestamp) : '<unknown>',
  ],
};

const DEF = 'com.github.operator-framework.operator-lifecycle-manager.pkg.package-server.apis.operators.v1.';
const anyObject = (description: string): OpenAPISchema => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

const definitions: Definitions = {
  [`${DEF}PackageManifest`]: kind(
    { group: PACKAGES_GROUP, version: 'v1', kind: 'PackageManifest' },
    'PackageManifest holds information about a package, which is a reference to one (or more) channels under a single package.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: struct('PackageManifestSpec defines the desired state of PackageManifest', {}),
      status: anyObject(
        'The package as its catalog serves it: catalogSource, catalogSourceDisplayName, catalogSourcePublisher, catalogSourceNamespace, provider, packageName, channels (name, currentCSV, currentCSVDesc, entries) and defaultChannel.',
      ),
    },
  ),
  [`${DEF}PackageManifestList`]: listKind({ group: PACKAGES_GROUP, version: 'v1' }, `${DEF}PackageManifest`, 'PackageManifest', 'The package manifests.'),
};

export const packageManifestsResource: ResourceDescriptor = {
  group: PACKAGES_GROUP,
  version: 'v1',
  kind: 'PackageManifest',
  listKind: 'PackageManifestList',
  plural: 'packagemanifests',
  singular: 'packagemanifest',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS.filter((v) => v === 'get' || v === 'list' || v === 'watch'),
  subresources: [],
  definitionName: `${DEF}PackageManifest`,
};

/** The resource, reading from `source`. */
export function packageManifests(source: PackageManifestSource, opts: PackageManifestsOptions): ResourceRegistration {
  return {
    descriptor: packageManifestsResource,
    strategy,
    definitions,
    keyPrefix: KEY_PREFIX,
    storage: new PackageManifestStorage(source, opts.globalNamespace),
  };
}
