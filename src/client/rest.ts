// The REST layer shared by the HTTPS and loopback clients: kube URL layout, query parameters,
// JSON bodies, Status errors and newline-delimited JSON watch streams, over a small Transport.
import { isStatusError } from '../apimachinery/errors.js';
import type { KubeList, KubeObject, Status } from '../apimachinery/types.js';
import { AbortLinks } from './abort-links.js';
import { ClientAbortError, ClientNetworkError, statusErrorFrom, statusErrorFromStatus } from './errors.js';
import type {
  APIResourceList,
  DeleteCollectionOptions,
  DeleteOptions,
  GetOptions,
  GVR,
  KubeClient,
  ListOptions,
  PatchOptions,
  PatchType,
  RequestOptions,
  WatchEvent,
  WatchOptions,
  WriteOptions,
} from './types.js';
import { parseJSONExact, stringifyJSON } from '../golang/json-int64.js';

/** kube's metadata-only media types (what client-go's metadata client asks for). */
const METADATA_LIST_ACCEPT = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const METADATA_ACCEPT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface TransportRequest {
  readonly method: HttpMethod;
  /** Absolute path with query string. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  /** Aborting cancels the request or, once answered, the response body. */
  readonly signal?: AbortSignal;
}

export interface TransportResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** Fails with ClientNetworkError when the connection breaks mid-body. */
  readonly body: AsyncIterable<Uint8Array>;
  /** Stops receiving and releases the stream; safe to call more than once. */
  cancel(): void;
}

/** Moves one request; throws ClientNetworkError (ClientAbortError on abort) when no response arrives. */
export interface Transport {
  request(req: TransportRequest): Promise<TransportResponse>;
  close(): Promise<void>;
}

export interface RestClientOptions {
  /** Upper bound for every non-watch request (default 60 s; 0 = none). Watches end by their signal or timeoutSeconds. */
  readonly requestTimeoutMs?: number;
  readonly userAgent?: string;
}

const PATCH_CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  // JSON is YAML, so the body is sent as JSON under apply's YAML media type (as client-go does).
  apply: 'application/apply-patch+yaml',
};

export function groupVersionPath(gvr: Pick<GVR, 'group' | 'version'>): string {
  return gvr.group ? `/apis/${gvr.group}/${gvr.version}` : `/api/${gvr.version}`;
}

/** `/api[s]/<gv>[/namespaces/<ns>]/<resource>[/<name>[/<subresource>]]`. */
export function resourcePath(gvr: GVR, namespace: string | undefined, name?: string, subresource?: string): string {
  let p = groupVersionPath(gvr);
  if (namespace) p += `/namespaces/${encodeURIComponent(namespace)}`;
  p += `/${gvr.resource}`;
  if (name !== undefined) {
    if (name === '') throw new TypeError(`a name is required for ${gvr.resource}`);
    p += `/${encodeURIComponent(name)}`;
    if (subresource) p += `/${subresource}`;
  }
  return p;
}

function withQuery(path: string, q: URLSearchParams): string {
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

function listQuery(o: Omit<ListOptions, 'signal'> | undefined): URLSearchParams {
  const q = new URLSearchParams();
  if (!o) return q;
  if (o.labelSelector) q.set('labelSelector', o.labelSelector);
  if (o.fieldSelector) q.set('fieldSelector', o.fieldSelector);
  if (o.limit !== undefined && o.limit > 0) q.set('limit', String(o.limit));
  if (o.continue) q.set('continue', o.continue);
  if (o.resourceVersion !== undefined) q.set('resourceVersion', o.resourceVersion);
  if (o.resourceVersionMatch) q.set('resourceVersionMatch', o.resourceVersionMatch);
  if (o.timeoutSeconds !== undefined) q.set('timeoutSeconds', String(o.timeoutSeconds));
  return q;
}

function writeQuery(o: WriteOptions | PatchOptions | undefined): URLSearchParams {
  const q = new URLSearchParams();
  if (!o) return q;
  if (o.fieldManager) q.set('fieldManager', o.fieldManager);
  if (o.dryRun) q.set('dryRun', 'All');
  if (o.fieldValidation) q.set('fieldValidation', o.fieldValidation);
  if ('force' in o && o.force !== undefined) q.set('force', String(o.force));
  return q;
}

function deleteBody(o: DeleteOptions | undefined): Uint8Array | undefined {
  if (!o) return undefined;
  const body: Record<string, unknown> = { kind: 'DeleteOptions', apiVersion: 'v1' };
  if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
  if (o.propagationPolicy) body.propagationPolicy = o.propagationPolicy;
  if (o.preconditions) body.preconditions = o.preconditions;
  if (o.dryRun) body.dryRun = ['All'];
  return Object.keys(body).length > 2 ? encodeJson(body) : undefined;
}

function encodeJson(v: unknown): Uint8Array {
  return Buffer.from(stringifyJSON(v), 'utf8');
}

export async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

interface RawWatchEvent {
  type: string;
  object: KubeObject;
}

export class RestClient implements KubeClient {
  private readonly requestTimeoutMs: number;
  private readonly userAgent: string;
  /** Requests sharing a caller's signal share one listener on it (discovery runs dozens at once). */
  private readonly abortLinks = new AbortLinks();

  constructor(
    private readonly transport: Transport,
    opts: RestClientOptions = {},
  ) {
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
    this.userAgent = opts.userAgent ?? 'kplane-client/0.1.0';
  }

  /** One request/response with a JSON answer; non-2xx answers throw StatusError. */
  async request<T>(method: HttpMethod, path: string, body?: Uint8Array, contentType?: string, opts?: RequestOptions, accept?: string): Promise<T> {
    const local = new AbortController();
    const outer = opts?.signal;
    if (outer?.aborted) throw new ClientAbortError();
    const unlink = outer ? this.abortLinks.link(outer, () => local.abort()) : undefined;
    let timedOut = false;
    const timer =
      this.requestTimeoutMs > 0
        ? setTimeout(() => {
            timedOut = true;
            local.abort();
          }, this.requestTimeoutMs)
        : undefined;
    const headers: Record<string, string> = { accept: accept ?? 'application/json', 'user-agent': this.userAgent };
    if (body) {
      headers['content-type'] = contentType ?? 'application/json';
      headers['content-length'] = String(body.byteLength);
    }
    try {
      const res = await this.transport.request({ method, path, headers, ...(body ? { body } : {}), signal: local.signal });
      let bytes: Buffer;
      try {
        bytes = await readAll(res.body);
      } finally {
        res.cancel();
      }
      // An abort mid-body ends the body early and quietly; the bytes are then a truncated answer.
      if (local.signal.aborted) throw new ClientAbortError();
      if (res.status < 200 || res.status > 299) throw statusErrorFrom(res.status, bytes);
      if (bytes.length === 0) return {} as T;
      try {
        return parseJSONExact(bytes.toString('utf8')) as T;
      } catch (e) {
        throw new ClientNetworkError(`${method} ${path}: the server answered ${res.status} with a body that is not JSON`, { cause: e });
      }
    } catch (e) {
      if (timedOut) throw new ClientNetworkError(`${method} ${path}: no answer within ${this.requestTimeoutMs} ms`, { cause: e });
      if (isStatusError(e) || e instanceof ClientNetworkError) throw e;
      throw new ClientNetworkError(`${method} ${path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    } finally {
      if (timer) clearTimeout(timer);
      unlink?.();
    }
  }

  get<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, name: string, opts?: GetOptions): Promise<T> {
    const q = new URLSearchParams();
    if (opts?.resourceVersion !== undefined) q.set('resourceVersion', opts.resourceVersion);
    return this.request<T>('GET', withQuery(resourcePath(gvr, namespace, name, opts?.subresource), q), undefined, undefined, opts);
  }

  list<T extends KubeObject = KubeObject>(gvr: GVR, namespace?: string, opts?: ListOptions): Promise<KubeList<T>> {
    const accept = opts?.metadataOnly ? METADATA_LIST_ACCEPT : undefined;
    return this.request<KubeList<T>>('GET', withQuery(resourcePath(gvr, namespace), listQuery(opts)), undefined, undefined, opts, accept);
  }

  watch<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, opts: WatchOptions): AsyncIterable<WatchEvent<T>> {
    const q = listQuery(opts);
    q.set('watch', 'true');
    if (opts.allowWatchBookmarks) q.set('allowWatchBookmarks', 'true');
    if (opts.sendInitialEvents !== undefined) q.set('sendInitialEvents', String(opts.sendInitialEvents));
    const path = withQuery(resourcePath(gvr, namespace), q);
    const accept = opts.metadataOnly ? METADATA_ACCEPT : 'application/json';
    return { [Symbol.asyncIterator]: () => this.watchStream<T>(path, opts.signal, accept) };
  }

  private async *watchStream<T extends KubeObject>(path: string, outer: AbortSignal, accept: string): AsyncGenerator<WatchEvent<T>> {
    if (outer.aborted) return;
    // Our own controller so that leaving the loop early (break/return) also cancels the stream.
    const local = new AbortController();
    const unlink = this.abortLinks.link(outer, () => local.abort());
    let res: TransportResponse | undefined;
    try {
      try {
        res = await this.transport.request({ method: 'GET', path, headers: { accept, 'user-agent': this.userAgent }, signal: local.signal });
      } catch (e) {
        if (outer.aborted) return;
        throw e;
      }
      if (res.status !== 200) throw statusErrorFrom(res.status, await readAll(res.body));
      const decoder = new TextDecoder();
      let pending = '';
      try {
        for await (const chunk of res.body) {
          pending += decoder.decode(chunk, { stream: true });
          let start = 0;
          for (let nl = pending.indexOf('\n', start); nl >= 0; nl = pending.indexOf('\n', start)) {
            const line = pending.slice(start, nl);
            start = nl + 1;
            if (!line.trim()) continue;
            const ev = parseWatchLine(line, path);
            if (ev.type === 'ERROR') throw statusErrorFromStatus(ev.object as unknown as Status);
            yield ev as WatchEvent<T>;
          }
          pending = pending.slice(start);
        }
      } catch (e) {
        // An abort tears the stream down under us: that is the caller ending the watch, not a failure.
        if (outer.aborted && !isStatusError(e)) return;
        if (isStatusError(e) || e instanceof ClientNetworkError) throw e;
        throw new ClientNetworkError(`watch ${path}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      }
      // A stream cut mid-event (pending text) ends like any closed watch: the caller resumes from
      // the last resourceVersion it saw, so the partial event is re-sent, not lost.
    } finally {
      unlink();
      local.abort();
      res?.cancel();
    }
  }

  create<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, body: T, opts?: Omit<WriteOptions, 'subresource'>): Promise<T> {
    return this.request<T>('POST', withQuery(resourcePath(gvr, namespace), writeQuery(opts)), encodeJson(body), 'application/json', opts);
  }

  update<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, body: T, opts?: WriteOptions): Promise<T> {
    const name = body.metadata?.name;
    if (!name) throw new TypeError('update needs body.metadata.name');
    return this.request<T>(
      'PUT',
      withQuery(resourcePath(gvr, namespace, name, opts?.subresource), writeQuery(opts)),
      encodeJson(body),
      'application/json',
      opts,
    );
  }

  updateStatus<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, body: T, opts?: Omit<WriteOptions, 'subresource'>): Promise<T> {
    return this.update(gvr, namespace, body, { ...opts, subresource: 'status' });
  }

  patch<T extends KubeObject = KubeObject>(
    gvr: GVR,
    namespace: string | undefined,
    name: string,
    patchType: PatchType,
    body: unknown,
    opts?: PatchOptions,
  ): Promise<T> {
    if (patchType === 'apply' && !opts?.fieldManager) throw new TypeError('server-side apply needs opts.fieldManager');
    const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body instanceof Uint8Array ? body : encodeJson(body);
    return this.request<T>(
      'PATCH',
      withQuery(resourcePath(gvr, namespace, name, opts?.subresource), writeQuery(opts)),
      bytes,
      PATCH_CONTENT_TYPES[patchType],
      opts,
    );
  }

  delete(gvr: GVR, namespace: string | undefined, name: string, opts?: DeleteOptions): Promise<KubeObject | Status> {
    const q = new URLSearchParams();
    if (opts?.dryRun) q.set('dryRun', 'All');
    return this.request<KubeObject | Status>('DELETE', withQuery(resourcePath(gvr, namespace, name), q), deleteBody(opts), 'application/json', opts);
  }

  deleteCollection<T extends KubeObject = KubeObject>(gvr: GVR, namespace: string | undefined, opts?: DeleteCollectionOptions): Promise<KubeList<T>> {
    const q = listQuery(opts);
    if (opts?.dryRun) q.set('dryRun', 'All');
    return this.request<KubeList<T>>('DELETE', withQuery(resourcePath(gvr, namespace), q), deleteBody(opts), 'application/json', opts);
  }

  async discovery(opts?: RequestOptions): Promise<APIResourceList[]> {
    const [core, groups] = await Promise.all([
      this.request<{ versions?: string[] }>('GET', '/api', undefined, undefined, opts),
      this.request<{ groups?: { name: string; versions: { groupVersion: string }[] }[] }>('GET', '/apis', undefined, undefined, opts),
    ]);
    const paths = [...(core.versions ?? []).map((v) => `/api/${v}`), ...(groups.groups ?? []).flatMap((g) => g.versions.map((v) => `/apis/${v.groupVersion}`))];
    return Promise.all(paths.map((p) => this.request<APIResourceList>('GET', p, undefined, undefined, opts)));
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

function parseWatchLine(line: string, path: string): RawWatchEvent {
  let v: unknown;
  try {
    v = parseJSONExact(line);
  } catch (e) {
    throw new ClientNetworkError(`watch ${path}: undecodable event: ${line.slice(0, 200)}`, { cause: e });
  }
  const ev = v as Partial<RawWatchEvent>;
  if (typeof ev.type !== 'string' || typeof ev.object !== 'object' || ev.object === null) {
    throw new ClientNetworkError(`watch ${path}: malformed event: ${line.slice(0, 200)}`);
  }
  return ev as RawWatchEvent;
}
