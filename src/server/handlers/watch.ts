// Watches (handlers/watch.go): one stream of events in the negotiated framing, ended by shutdown,
// the client, the timeout or an error event. Headers go out once the first step settles, or after a
// short grace so clients waiting for them (client-go's Watch()) are not kept waiting.
import { StatusError, badRequest, notAcceptable, toStatusError } from '../../apimachinery/errors.js';
import { exactMetadataName, parseFieldSelector } from '../../apimachinery/fields.js';
import { PROTOBUF_WATCH_MEDIA_TYPE } from '../../apimachinery/protobuf/index.js';
import { WatchList } from '../../featuregate/index.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { RegisteredResource } from '../../registry/registry.js';
import type { IncludeObject } from '../../registry/table.js';
import { resetResponse } from '../deadline.js';
import { NOT_ACCEPTABLE_STREAM, chooseOutput } from '../negotiation.js';
import type { RequestScope, Response } from '../request-scope.js';
import { queryBool } from '../requestinfo.js';
import type { ServerContext } from './context.js';
import { parseInt64Param } from './options.js';
import { checkPartialMetadata } from './responsewriters.js';
import { WatchFrames } from './watch-frames.js';

export async function serveWatch(c: ServerContext, s: RequestScope, r: RegisteredResource): Promise<void> {
  const namespace = s.namespace;
  // A watch of the collection names nothing; one of an object (…/{name}?watch) names it.
  const name = s.name || undefined;
  const q = s.query;
  const { req, res } = s;
  if (c.watches.shuttingDown) throw new StatusError({ reason: 'ServiceUnavailable', code: 503, message: 'the server is shutting down' });
  const choice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource });
  // YAML has no stream serializer upstream: a watch cannot be negotiated to it.
  if (choice.format === 'yaml') throw notAcceptable(NOT_ACCEPTABLE_STREAM);
  // The events carry single objects.
  checkPartialMetadata(choice, r, false);
  let fieldSelector = q.get('fieldSelector') ?? '';
  if (name !== undefined) {
    // A watch of one object allows no field selector but one naming that object (get.go ListResource).
    if (fieldSelector && exactMetadataName(parseFieldSelector(fieldSelector)) !== name)
      throw badRequest("fieldSelector metadata.name doesn't match requested name");
    fieldSelector = `metadata.name=${name}`;
  }
  // Go's int64 parameter: 0 (or none) is the server's default; a negative one ends the watch at once.
  const timeoutParam = q.get('timeoutSeconds');
  const requested = timeoutParam ? parseInt64Param(timeoutParam) : 0;
  const minTimeout = c.minRequestTimeoutSeconds ?? 1800;
  const timeoutSeconds = requested !== 0 ? Math.max(0, requested) : minTimeout * (1 + Math.random());
  const sendInitial = q.get('sendInitialEvents');
  const abort = new AbortController();
  c.watches.open.add(abort);
  const timer = longTimeout(() => abort.abort(), timeoutSeconds * 1000);
  const onClose = (): void => abort.abort();
  req.on('close', onClose);
  res.on('close', onClose);
  const d = r.descriptor;
  const untrack = c.metrics?.trackWatcher({ group: d.group, version: d.version, kind: d.kind });
  const unLongRunning = c.metrics?.trackLongRunning({
    verb: 'WATCH',
    group: d.group,
    version: d.version,
    resource: d.plural,
    subresource: '',
    scope: namespace ? 'namespace' : 'cluster',
  });
  const protobuf = choice.format === 'protobuf';
  let headersWritten = false;
  const writeHeaders = (): void => {
    if (headersWritten) return;
    headersWritten = true;
    res.statusCode = 200;
    res.setHeader('Content-Type', protobuf ? PROTOBUF_WATCH_MEDIA_TYPE : choice.format === 'yaml' ? 'application/yaml' : 'application/json');
    res.setHeader('Cache-Control', 'no-cache, private');
    if ('flushHeaders' in res && typeof res.flushHeaders === 'function') res.flushHeaders();
  };
  const frames = new WatchFrames(r, choice, (q.get('includeObject') ?? 'Metadata') as IncludeObject);
  try {
    const events = r.store.watch(namespace, {
      ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
      ...(fieldSelector ? { fieldSelector } : {}),
      ...(q.has('resourceVersion') ? { resourceVersion: q.get('resourceVersion')! } : {}),
      ...(q.get('resourceVersionMatch') ? { resourceVersionMatch: q.get('resourceVersionMatch')! } : {}),
      allowWatchBookmarks: queryBool(q.get('allowWatchBookmarks')),
      ...(c.watchBookmarkIntervalMs !== undefined ? { progressIntervalMs: c.watchBookmarkIntervalMs } : {}),
      ...(sendInitial !== null ? { sendInitialEvents: queryBool(sendInitial) } : {}),
      ...(q.get('continue') ? { continue: q.get('continue')! } : {}),
      signal: abort.signal,
      watchListEnabled: c.features.enabled(WatchList),
    });
    const it = events[Symbol.asyncIterator]();
    // Errors the store finds at once (a bad selector or resourceVersion) are plain answers, so the
    // first step gets a moment before the headers go out. A watch with nothing to say yet must still
    // send its headers promptly, as upstream does: clients (client-go's Watch()) wait for them.
    const firstStep = it.next();
    let graceTimer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([
      firstStep.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((ok) => (graceTimer = setTimeout(() => ok(false), WATCH_HEADER_GRACE_MS))),
    ]);
    clearTimeout(graceTimer);
    if (!settled) writeHeaders();
    let first: IteratorResult<{ type: string; object: KubeObject }>;
    try {
      first = await firstStep;
    } catch (e) {
      const err = toStatusError(e);
      if (err.code !== 410 && !headersWritten) throw err;
      writeHeaders();
      res.write(frames.encode('ERROR', err.status as unknown as KubeObject));
      res.end();
      return;
    }
    writeHeaders();
    let next: IteratorResult<{ type: string; object: KubeObject }> | undefined = first;
    while (next && !next.done) {
      const ok = res.write(frames.encode(next.value.type, next.value.object));
      c.metrics?.watchEventsSent({ group: d.group, version: d.version, kind: d.kind });
      if (!ok && !(await waitForDrain(res, abort.signal, c.requestTimeoutMs))) {
        // The client has read nothing for a whole request timeout: its watch is cut (as the cacher
        // ends a watcher that cannot keep up), and the frames it held are freed with the stream.
        resetResponse(res);
        break;
      }
      if (abort.signal.aborted) break;
      try {
        next = await it.next();
      } catch (e) {
        if (abort.signal.aborted) break;
        const err = toStatusError(e);
        res.write(frames.encode('ERROR', err.status as unknown as KubeObject));
        break;
      }
    }
    void it.return?.(undefined);
    if (!res.writableEnded) res.end();
  } finally {
    timer.cancel();
    abort.abort();
    c.watches.open.delete(abort);
    req.off('close', onClose);
    untrack?.();
    unLongRunning?.();
  }
}

/** How long a watch's first step may take before its headers are sent anyway. */
const WATCH_HEADER_GRACE_MS = 100;

/** Resolves true once `res` drains or the signal aborted; false when it did not drain within `stallMs`. */
function waitForDrain(res: Response, signal: AbortSignal, stallMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (drained: boolean): void => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      signal.removeEventListener('abort', onDrain);
      resolve(drained);
    };
    const onDrain = (): void => done(true);
    // No request timeout (0): a watch waits for its client as long as it stays connected.
    const timer = stallMs > 0 ? setTimeout(() => done(false), stallMs) : undefined;
    res.on('drain', onDrain);
    signal.addEventListener('abort', onDrain);
  });
}

/** setTimeout's longest delay (a signed 32-bit count of ms, about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A timer for any delay: node runs a longer setTimeout after 1 ms (TimeoutOverflowWarning), which
 * ended a watch asked for `timeoutSeconds=2200000` at once; this one waits in steps instead.
 */
function longTimeout(fn: () => void, ms: number): { cancel(): void } {
  let t: NodeJS.Timeout;
  const due = Date.now() + ms;
  const step = (left: number): void => {
    t = setTimeout(
      () => {
        const rest = due - Date.now();
        if (rest > 0) step(rest);
        else fn();
      },
      Math.min(Math.max(left, 0), MAX_TIMER_MS),
    );
  };
  step(ms);
  return { cancel: () => clearTimeout(t) };
}
