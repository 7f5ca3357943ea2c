// The client every kplane controller talks through (client-go's dynamic client, JSON only). Two
// implementations share one REST layer (rest.ts): HTTPS to a remote server (https.ts) and an
// in-memory loopback into the API server's own request handler (loopback.ts), so a controller
// behaves the same inside `kplane serve` and in a separate process.
import type { KubeList, KubeObject, Status } from '../apimachinery/types.js';

export { StatusError, isStatusError } from '../apimachinery/errors.js';

/** group '' is the core group (`/api/v1`). */
export interface GVR {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

export interface RequestOptions {
  /** Cancels the request; a cancelled request rejects with an AbortError-named ClientNetworkError. */
  readonly signal?: AbortSignal;
}

export interface GetOptions extends RequestOptions {
  readonly resourceVersion?: string;
  readonly subresource?: string;
}

export interface ListOptions extends RequestOptions {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly limit?: number;
  readonly continue?: string;
  readonly resourceVersion?: string;
  readonly resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  readonly timeoutSeconds?: number;
  /** Ask for PartialObjectMetadataList: items carry only metadata (what the garbage collector needs). */
  readonly metadataOnly?: boolean;
}

export interface WatchOptions {
  readonly resourceVersion?: string;
  readonly allowWatchBookmarks?: boolean;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  readonly timeoutSeconds?: number;
  readonly sendInitialEvents?: boolean;
  readonly resourceVersionMatch?: 'NotOlderThan';
  /** Events carry PartialObjectMetadata instead of whole objects. */
  readonly metadataOnly?: boolean;
  /** Ends the watch: the iterator finishes quietly (no error) once aborted. */
  readonly signal: AbortSignal;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK';

export interface WatchEvent<T extends KubeObject = KubeObject> {
  readonly type: WatchEventType;
  readonly object: T;
}

export interface WriteOptions extends RequestOptions {
  readonly fieldManager?: string;
  readonly dryRun?: boolean;
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  /** e.g. 'status'; create does not take one. */
  readonly subresource?: string;
}

export type PatchType = 'merge' | 'json' | 'strategic' | 'apply';

export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  readonly force?: boolean;
}

export interface Preconditions {
  readonly uid?: string;
  readonly resourceVersion?: string;
}

export interface DeleteOptions extends RequestOptions {
  readonly gracePeriodSeconds?: number;
  readonly propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  readonly preconditions?: Preconditions;
  readonly dryRun?: boolean;
}

export type DeleteCollectionOptions = DeleteOptions & Omit<ListOptions, 'signal'>;

/** metav1.APIResource as discovery serves it. */
export interface APIResource {
  readonly name: string;
  readonly singularName: string;
  readonly namespaced: boolean;
  readonly group?: string;
  readonly version?: string;
  readonly kind: string;
  readonly verbs: readonly string[];
  readonly shortNames?: readonly string[];
  readonly categories?: readonly string[];
}

/** metav1.APIResourceList: the resources of one group/version. */
export interface APIResourceList {
  readonly kind: 'APIResourceList';
  readonly groupVersion: string;
  readonly resources: readonly APIResource[];
}

export interface KubeClient {
  get<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, name: string, opts?: GetOptions): Promise<T>;
  list<T extends KubeObject = KubeObject>(gvr: GVR, namespace?: string, opts?: ListOptions): Promise<KubeList<T>>;
  /**
   * Events in the order the server sent them. A server-side `ERROR` event is thrown from the
   * iterator as a StatusError (e.g. 410 Expired); the iterator ends when the server closes the
   * stream or `opts.signal` aborts. Breaking out of a `for await` cancels the request.
   */
  watch<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, opts: WatchOptions): AsyncIterable<WatchEvent<T>>;
  create<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, body: T, opts?: Omit<WriteOptions, 'subresource'>): Promise<T>;
  /** PUT to the object named in `body.metadata.name` (or its `opts.subresource`). */
  update<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, body: T, opts?: WriteOptions): Promise<T>;
  updateStatus<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, body: T, opts?: Omit<WriteOptions, 'subresource'>): Promise<T>;
  patch<T extends KubeObject = KubeObject>(
    gvr: GVR,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    body: unknown,
    opts?: PatchOptions,
  ): Promise<T>;
  /** Answers what the server answers: a Success Status, or the object (namespaces, or when finalizers hold it). */
  delete(gvr: GVR, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<KubeObject | Status>;
  deleteCollection<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, opts?: DeleteCollectionOptions): Promise<KubeList<T>>;
  /** One APIResourceList per served group/version, core first. */
  discovery(opts?: RequestOptions): Promise<APIResourceList[]>;
  /** Closes connections; requests in flight fail with ClientNetworkError. */
  close(): Promise<void>;
}
