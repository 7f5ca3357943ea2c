// The CatalogSource controller for `sourceType: grpc` with `spec.address` (OLM's catalog operator
// and package server, for a registry someone else runs): one gRPC channel per CatalogSource,
// status.connectionState {address, lastObservedState, lastConnect} written at every change of the
// channel's connectivity state as OLM writes it, reconnection with grpc's exponential backoff, and
// a cache of the catalog's packages as PackageManifests, refreshed when the channel becomes READY
// and every resync interval, dropped when it fails (the package server's gcPackages).
import type { KubeObject } from '../../apimachinery/types.js';
import { StatusError } from '../../apimachinery/errors.js';
import type { GVR, KubeClient } from '../../client/types.js';
import { join } from 'node:path';
import { parseGoDuration } from '../../golang/time.js';
import type { ApiBundle } from '../api/api.js';
import { CONFIGS_LABEL, pullImage } from '../oci/index.js';
import { serveCatalog, type RunningCatalogServer } from '../serve/index.js';
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
  /** spec.image: the content cache images are pulled through (default ~/.cache/kplane). */
  readonly imageCacheDir?: string;
  /** spec.image: the first and largest pause before a failed pull is tried again (default 5 s and 5 min). */
  readonly pullRetryMs?: number;
  readonly maxPullRetryMs?: number;
}

/** A catalog image kplane pulled and serves in process for a CatalogSource with spec.image. */
interface ImageSource {
  readonly key: string;
  readonly image: string;
  /** updateStrategy.registryPoll.interval in ms (undefined: pulled once). */
  readonly pollMs: number | undefined;
  ref: CatalogSourceRef;
  server?: RunningCatalogServer;
  digest?: string;
  servedSince?: string;
  lastPoll?: string;
  timer?: NodeJS.Timeout;
  failures: number;
  dropped: boolean;
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
  /** For an image: registryService and latestImageRegistryPoll, written with the connection state. */
  extraStatus?: () => Json;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export class CatalogSourceController {
  private readonly sources = new Map<string, Source>();
  private readonly images = new Map<string, ImageSource>();
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
    await Promise.all([...this.images.values()].map((img) => this.dropImage(img)));
    this.images.clear();
    await this.loop?.catch(() => {});
  }

  /** Every cached PackageManifest, in the namespace of its CatalogSource. */
  packageManifests(): KubeObject[] {
    const out: KubeObject[] = [];
    for (const s of this.sources.values()) out.push(...s.packages.values());
    return out;
  }

  /** The registry client of a READY catalog (the install flow lists and reads its bundles). */
  registryClient(namespace: string, name: string): RegistryClient | undefined {
    const s = this.sources.get(`${namespace}/${name}`);
    return s && s.state === 'READY' ? s.client : undefined;
  }

  /** package → default channel, from the catalog's cached PackageManifests. */
  defaultChannels(namespace: string, name: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const pm of this.sources.get(`${namespace}/${name}`)?.packages.values() ?? []) {
      const status = obj((pm as Json).status);
      out[str(status.packageName) || (pm.metadata?.name ?? '')] = str(status.defaultChannel);
    }
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
        for (const key of new Set([...this.sources.keys(), ...this.images.keys()])) {
          if (!seen.has(key)) this.forget(key);
        }
        const rv = list.metadata?.resourceVersion;
        for await (const ev of this.client.watch(CATALOG_SOURCES, undefined, { signal, ...(rv ? { resourceVersion: rv } : {}), allowWatchBookmarks: true })) {
          if (ev.type === 'BOOKMARK') continue;
          if (ev.type === 'DELETED') this.forget(keyOf(ev.object));
          else this.sync(ev.object);
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
    const ref = refOf(cs);
    const problem = specProblem(spec);
    if (problem) {
      this.forget(key);
      void this.writeStatus(cs.metadata?.namespace ?? '', cs.metadata?.name ?? '', { reason: REASON_SPEC_INVALID, message: problem, connectionState: null });
      return;
    }
    const address = str(spec.address);
    if (address) {
      const img = this.images.get(key);
      if (img) void this.dropImage(img);
      this.connect(key, ref, address);
      return;
    }
    // spec.image: pulled and served in process (OLM runs a registry pod for it).
    const image = str(spec.image);
    const pollMs = pollInterval(spec) ?? undefined;
    const img = this.images.get(key);
    if (img && img.image === image && img.pollMs === pollMs) {
      img.ref = ref;
      const s = this.sources.get(key);
      if (s) this.connect(key, ref, s.address, s.extraStatus);
      return;
    }
    if (img) void this.dropImage(img);
    const next: ImageSource = { key, image, pollMs, ref, failures: 0, dropped: false };
    this.images.set(key, next);
    void this.pullAndServe(next);
  }

  /** Connects (or keeps connected) the source `key` to a registry server at `address`. */
  private connect(key: string, ref: CatalogSourceRef, address: string, extraStatus?: () => Json): void {
    const existing = this.sources.get(key);
    if (existing && existing.address === address) {
      const changed = JSON.stringify(existing.ref) !== JSON.stringify(ref);
      existing.ref = ref;
      // Display name, publisher or labels moved: the packages carry them.
      if (changed && existing.state === 'READY') this.refresh(existing);
      return;
    }
    if (existing) this.remove(existing);
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
      ...(extraStatus ? { extraStatus } : {}),
    };
    this.sources.set(key, s);
    s.client.watchState((state) => this.onState(s, state));
    this.onState(s, s.client.state(true));
  }

  /** Pulls the image, serves it when its digest is new, and polls again as updateStrategy.registryPoll asks. */
  private async pullAndServe(img: ImageSource): Promise<void> {
    const [namespace, name] = img.key.split('/') as [string, string];
    try {
      const pulled = await pullImage(img.image, this.opts.imageCacheDir ? { cacheDir: this.opts.imageCacheDir } : {});
      if (img.dropped) return;
      img.lastPoll = rfc3339(new Date());
      img.failures = 0;
      if (pulled.digest !== img.digest || !img.server) {
        const configs = pulled.labels[CONFIGS_LABEL] ?? '/configs';
        const server = await serveCatalog(join(pulled.root, configs));
        if (img.dropped) {
          await server.stop(0);
          return;
        }
        const old = img.server;
        img.server = server;
        img.digest = pulled.digest;
        img.servedSince = rfc3339(new Date());
        this.connect(img.key, img.ref, server.address, () => ({
          registryService: { protocol: 'grpc', port: String(server.port), createdAt: img.servedSince },
          ...(img.pollMs !== undefined && img.lastPoll ? { latestImageRegistryPoll: img.lastPoll } : {}),
        }));
        if (old) await old.stop(0);
        this.log(`catalogsource ${img.key}: serving ${img.image}@${pulled.digest} at ${server.address}`);
      } else {
        const s = this.sources.get(img.key);
        if (s) void this.writeConnectionState(s);
      }
      this.schedule(img, img.pollMs);
    } catch (e) {
      if (img.dropped) return;
      img.failures++;
      const message = `couldn't ensure registry server - failed to pull catalog image ${img.image}: ${e instanceof Error ? e.message : String(e)}`;
      this.log(`catalogsource ${img.key}: ${message}`);
      // A catalog already served stays served; only a first pull's failure is the CatalogSource's error.
      if (!img.server) void this.writeStatus(namespace, name, { reason: REASON_REGISTRY_SERVER, message });
      const first = this.opts.pullRetryMs ?? 5000;
      const retry = Math.min(first * 2 ** (img.failures - 1), this.opts.maxPullRetryMs ?? 300_000);
      this.schedule(img, img.server && img.pollMs !== undefined ? Math.min(retry, img.pollMs) : retry);
    }
  }

  private schedule(img: ImageSource, ms: number | undefined): void {
    if (ms === undefined || img.dropped || this.abort.signal.aborted) return;
    if (img.timer) clearTimeout(img.timer);
    img.timer = setTimeout(() => void this.pullAndServe(img), ms);
    img.timer.unref();
  }

  private async dropImage(img: ImageSource): Promise<void> {
    img.dropped = true;
    if (img.timer) clearTimeout(img.timer);
    if (this.images.get(img.key) === img) this.images.delete(img.key);
    const s = this.sources.get(img.key);
    if (s && img.server && s.address === img.server.address) this.remove(s);
    await img.server?.stop(0);
  }

  /** The CatalogSource is gone (or no longer served): its connection, image and packages go. */
  private forget(key: string): void {
    const s = this.sources.get(key);
    if (s) this.remove(s);
    const img = this.images.get(key);
    if (img) void this.dropImage(img);
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
        if (!byChannel) entries.set(b.packageName, (byChannel = new Map<string, { name: string; version: string }[]>()));
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
          ...(s.extraStatus?.() ?? {}),
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

/** updateStrategy.registryPoll.interval in ms: undefined when not set, null when it is not a positive Go duration. */
function pollInterval(spec: Json): number | undefined | null {
  const raw = obj(obj(spec.updateStrategy).registryPoll).interval;
  if (raw === undefined || raw === '') return undefined;
  const d = parseGoDuration(str(raw));
  if ('error' in d || d.ns <= 0n) return null;
  return Number(d.ns / 1_000_000n);
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
      if (str(spec.image))
        return pollInterval(spec) === null
          ? `invalid updateStrategy.registryPoll.interval ${JSON.stringify(str(obj(obj(spec.updateStrategy).registryPoll).interval))}`
          : undefined;
      return `image and address unset: at least one must be set for sourcetype: ${sourceType}`;
    default:
      return `unknown sourcetype: ${sourceType}`;
  }
}
