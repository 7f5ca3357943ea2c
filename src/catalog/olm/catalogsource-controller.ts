// The CatalogSource controller for `sourceType: grpc` with `spec.address` (OLM's catalog operator
// and package server, for a registry someone else runs): one gRPC channel per CatalogSource,
// status.connectionState {address, lastObservedState, lastConnect} written at every change of the
// channel's connectivity state as OLM writes it, reconnection with grpc's exponential backoff, and
// a cache of the catalog's packages as PackageManifests, refreshed when the channel becomes READY
// and every resync interval, dropped when it fails (the package server's gcPackages).
import type { KubeObject } from '../../apimachinery/types.js';
import { StatusError } from '../../apimachinery/errors.js';
import type { GVR, KubeClient } from '../../client/types.js';
import type { ApiBundle } from '../api/api.js';
import { packageManifest, type CatalogSourceRef, type ChannelEntries } from './packagemanifest.js';
import { grpcErrorText, RegistryClient, type ConnectivityState, type RegistryClientOptions } from './registry-client.js';

export const CATALOG_SOURCES: GVR = { group: 'operators.coreos.com', version: 'v1alpha1', resource: 'catalogsources' };

/** OLM's CatalogSource status reasons (operator-framework/api catalogsource_types.go). */
export const REASON_SPEC_INVALID = 'SpecInvalidError';
export const REASON_REGISTRY_SERVER = 'RegistryServerError';

export interface CatalogSourceControllerOptions extends RegistryClientOptions {
  readonly log?: (msg: string) => void;
  /** Called whenever the cached packages change. */
  readonly onPackagesChanged?: () => void;
  /** How often a READY catalog's packages are read again (the package server's wakeup interval; default 5 min). */
  readonly resyncMs?: number;
  /** Pause before the CatalogSource watch is started again after it failed (default 1 s). */
  readonly rewatchMs?: number;
}

interface Source {
  readonly key: string;
  ref: CatalogSourceRef;
  readonly address: string;
  readonly client: RegistryClient;
  state: ConnectivityState | undefined;
  packages: ReadonlyMap<string, KubeObject>;
  /** The last failure of a refresh or of the connection, for status.message. */
  message: string;
  refreshing?: Promise<void>;
  refreshAgain: boolean;
  timer?: NodeJS.Timeout;
  /** When the state last changed (OLM's lastConnect). */
  lastConnect: string;
  writer?: Promise<void>;
  dirty?: boolean;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export class CatalogSourceController {
  private readonly sources = new Map<string, Source>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private readonly log: (msg: string) => void;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: CatalogSourceControllerOptions = {},
  ) {
    this.log = opts.log ?? (() => {});
  }

  /** Starts watching CatalogSources (returns at once; the first list happens in the background). */
  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const s of this.sources.values()) this.drop(s);
    this.sources.clear();
    await this.loop?.catch(() => {});
  }

  /** Every cached PackageManifest, in the namespace of its CatalogSource. */
  packageManifests(): KubeObject[] {
    const out: KubeObject[] = [];
    for (const s of this.sources.values()) out.push(...s.packages.values());
    return out;
  }

  private async run(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      try {
        const list = await this.client.list(CATALOG_SOURCES, undefined, { signal });
        const seen = new Set<string>();
        for (const cs of list.items) {
          seen.add(keyOf(cs));
          this.sync(cs);
        }
        for (const [key, s] of this.sources) {
          if (!seen.has(key)) this.remove(s);
        }
        const rv = list.metadata?.resourceVersion;
        for await (const ev of this.client.watch(CATALOG_SOURCES, undefined, { signal, ...(rv ? { resourceVersion: rv } : {}), allowWatchBookmarks: true })) {
          if (ev.type === 'BOOKMARK') continue;
          if (ev.type === 'DELETED') {
            const s = this.sources.get(keyOf(ev.object));
            if (s) this.remove(s);
          } else this.sync(ev.object);
        }
      } catch (e) {
        if (signal.aborted) return;
        this.log(`catalogsources: watch failed, listing again: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, this.opts.rewatchMs ?? 1000).unref());
    }
  }

  /** A CatalogSource was added or changed. */
  private sync(cs: KubeObject): void {
    const key = keyOf(cs);
    const spec = obj((cs as Json).spec);
    const address = str(spec.address);
    const existing = this.sources.get(key);
    const ref = refOf(cs);
    if (existing && existing.address === address && address) {
      const changed = JSON.stringify(existing.ref) !== JSON.stringify(ref);
      existing.ref = ref;
      // Display name, publisher or labels moved: the packages carry them.
      if (changed && existing.state === 'READY') this.refresh(existing);
      return;
    }
    if (existing) this.remove(existing);
    const problem = specProblem(spec);
    if (problem) {
      void this.writeStatus(cs.metadata?.namespace ?? '', cs.metadata?.name ?? '', { reason: REASON_SPEC_INVALID, message: problem, connectionState: null });
      return;
    }
    const s: Source = {
      key,
      ref,
      address,
      client: new RegistryClient(address, this.opts),
      state: undefined,
      packages: new Map(),
      message: '',
      refreshAgain: false,
      lastConnect: rfc3339(new Date()),
    };
    this.sources.set(key, s);
    s.client.watchState((state) => this.onState(s, state));
    this.onState(s, s.client.state(true));
  }

  private onState(s: Source, state: ConnectivityState): void {
    if (this.sources.get(s.key) !== s || state === s.state) return;
    s.state = state;
    s.lastConnect = rfc3339(new Date());
    // Always try to connect again (OLM's source store): a lost connection leaves the channel IDLE.
    if (state === 'IDLE') s.client.state(true);
    if (state === 'READY') this.refresh(s);
    if (state === 'TRANSIENT_FAILURE' || state === 'SHUTDOWN') {
      if (s.packages.size) {
        s.packages = new Map();
        this.opts.onPackagesChanged?.();
      }
      void this.explainFailure(s);
    }
    void this.writeConnectionState(s);
  }

  /** The connection failed: a health check says why, for status.message. */
  private async explainFailure(s: Source): Promise<void> {
    try {
      await s.client.healthCheck();
    } catch (e) {
      if (this.sources.get(s.key) !== s || s.state === 'READY') return;
      const message = `failed to connect to registry server at ${s.address}: ${grpcErrorText(e)}`;
      if (message !== s.message) {
        s.message = message;
        void this.writeConnectionState(s);
      }
    }
  }

  /** Reads the catalog's packages again (one refresh at a time; one more if asked meanwhile). */
  private refresh(s: Source): void {
    if (s.refreshing) {
      s.refreshAgain = true;
      return;
    }
    s.refreshing = (async () => {
      do {
        s.refreshAgain = false;
        try {
          const packages = await this.readPackages(s);
          if (this.sources.get(s.key) !== s) return;
          s.packages = packages;
          if (s.message) {
            s.message = '';
            void this.writeConnectionState(s);
          }
          this.opts.onPackagesChanged?.();
        } catch (e) {
          if (this.sources.get(s.key) !== s) return;
          const message = `failed to list packages of registry server at ${s.address}: ${grpcErrorText(e)}`;
          this.log(`catalogsource ${s.key}: ${message}`);
          if (message !== s.message) {
            s.message = message;
            void this.writeConnectionState(s);
          }
        }
      } while (s.refreshAgain && this.sources.get(s.key) === s);
    })().finally(() => {
      s.refreshing = undefined;
      if (this.sources.get(s.key) !== s || this.abort.signal.aborted) return;
      if (s.timer) clearTimeout(s.timer);
      s.timer = setTimeout(() => {
        if (s.state === 'READY') this.refresh(s);
      }, this.opts.resyncMs ?? 300_000);
      s.timer.unref();
    });
  }

  /** The package server's refreshCache: ListPackages, then GetPackage and each channel head's bundle. */
  private async readPackages(s: Source): Promise<Map<string, KubeObject>> {
    const names = await s.client.listPackages();
    // The channels' entries (name and version of every bundle in each channel).
    const entries = new Map<string, Map<string, { name: string; version: string }[]>>();
    try {
      for (const b of await s.client.listBundles()) {
        let byChannel = entries.get(b.packageName);
        if (!byChannel) entries.set(b.packageName, (byChannel = new Map()));
        let list = byChannel.get(b.channelName);
        if (!list) byChannel.set(b.channelName, (list = []));
        list.push({ name: b.csvName, version: b.version });
      }
    } catch (e) {
      this.log(`catalogsource ${s.key}: listing bundles failed, channels without entries: ${grpcErrorText(e)}`);
    }
    const out = new Map<string, KubeObject>();
    await Promise.all(
      names.map(async (name) => {
        let pkg;
        try {
          pkg = await s.client.getPackage(name);
        } catch (e) {
          this.log(`catalogsource ${s.key}: eliding package ${name}: error getting package: ${grpcErrorText(e)}`);
          return;
        }
        const heads = new Map<string, ApiBundle>();
        await Promise.all(
          pkg.channels.map(async (ch) => {
            try {
              heads.set(ch.name, await s.client.getBundleForChannel(name, ch.name));
            } catch (e) {
              this.log(`catalogsource ${s.key}: package ${name} channel ${ch.name}: error getting bundle, eliding channel: ${grpcErrorText(e)}`);
            }
          }),
        );
        const problems: string[] = [];
        const pm = packageManifest(pkg, heads, (entries.get(name) ?? new Map()) as ChannelEntries, s.ref, problems);
        for (const p of problems) this.log(`catalogsource ${s.key}: ${p}`);
        if (pm) out.set(name, pm);
      }),
    );
    return new Map([...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** Writes the source's state as it is when the write starts; writes of one source never overlap, the last state always lands. */
  private writeConnectionState(s: Source): Promise<void> {
    s.dirty = true;
    s.writer ??= (async () => {
      while (s.dirty && s.state && this.sources.get(s.key) === s) {
        s.dirty = false;
        const [namespace, name] = s.key.split('/') as [string, string];
        await this.writeStatus(namespace, name, {
          connectionState: { address: s.address, lastObservedState: s.state, lastConnect: s.lastConnect },
          ...(s.message && s.state !== 'READY' ? { message: s.message, reason: REASON_REGISTRY_SERVER } : { message: null, reason: null }),
        });
      }
    })().finally(() => {
      s.writer = undefined;
    });
    return s.writer;
  }

  private async writeStatus(namespace: string, name: string, status: Json): Promise<void> {
    if (this.abort.signal.aborted) return;
    try {
      await this.client.patch(CATALOG_SOURCES, namespace, name, 'merge', { status }, { subresource: 'status', fieldManager: 'catalog-operator' });
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return;
      this.log(`catalogsource ${namespace}/${name}: writing status failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  private remove(s: Source): void {
    this.drop(s);
    this.sources.delete(s.key);
    if (s.packages.size) this.opts.onPackagesChanged?.();
  }

  private drop(s: Source): void {
    if (s.timer) clearTimeout(s.timer);
    s.client.close();
  }
}

function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

function keyOf(o: KubeObject): string {
  return `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
}

function refOf(cs: KubeObject): CatalogSourceRef {
  const spec = obj((cs as Json).spec);
  return {
    name: cs.metadata?.name ?? '',
    namespace: cs.metadata?.namespace ?? '',
    labels: { ...(cs.metadata?.labels ?? {}) },
    ...(cs.metadata?.creationTimestamp ? { creationTimestamp: cs.metadata.creationTimestamp } : {}),
    displayName: str(spec.displayName),
    publisher: str(spec.publisher),
  };
}

/**
 * validateSourceType's errors (the status message with reason SpecInvalidError), and what kplane
 * does not serve yet of a valid spec.
 */
function specProblem(spec: Json): string | undefined {
  const sourceType = str(spec.sourceType);
  switch (sourceType) {
    case 'internal':
    case 'configmap':
      if (!str(spec.configMap)) return `configmap name unset: must be set for sourcetype: ${sourceType}`;
      return `sourcetype ${sourceType} is not served by kplane: use sourcetype grpc with spec.address`;
    case 'grpc':
      if (str(spec.address)) return undefined;
      if (str(spec.image)) return 'spec.image is not served by kplane yet: give spec.address (a kplane catalog serve or opm registry server)';
      return `image and address unset: at least one must be set for sourcetype: ${sourceType}`;
    default:
      return `unknown sourcetype: ${sourceType}`;
  }
}
