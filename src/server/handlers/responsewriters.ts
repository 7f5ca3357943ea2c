// Writing answers (upstream's endpoints/handlers/responsewriters): an object, list or Status in the
// negotiated format, raw JSON, warnings, and the error answers of filters and handlers alike.
import { StatusError, toStatusError } from '../../apimachinery/errors.js';
import { encodeObject as encodeProtobuf, type ProtobufKinds } from '../../apimachinery/protobuf/index.js';

/** Where protobuf was not offered: every kind is without a protobuf form (the JSON fallback). */
const NO_KINDS: ProtobufKinds = { messageFor: () => undefined };
import type { KubeList, KubeObject } from '../../apimachinery/types.js';
import { parseGoBool } from '../../golang/strconv.js';
import type { RegisteredResource } from '../../registry/registry.js';
import { partialObjectMetadata, toTable, type IncludeObject } from '../../registry/table.js';
import { endBody } from '../compression.js';
import type { ErrorSink } from '../error-sink.js';
import { isSilenced } from '../deadline.js';
import { chooseOutput, contentTypeOf, partialMetadataMismatch, toYaml, type OutputChoice } from '../negotiation.js';
import { header, type Request, type RequestScope, type Response } from '../request-scope.js';
import { ClientWentAway } from './body.js';
import { setWarnings, warningHeaderValue } from '../warning-header.js';

export { setWarnings, warningHeaderValue };
import { stringifyJSON } from '../../golang/json-int64.js';

/** An error answered as Go's http.Error writes it: `text` and a newline, text/plain. */
export class PlainTextError extends StatusError {
  constructor(
    status: StatusError['status'],
    readonly text: string,
  ) {
    super(status);
  }
}

/**
 * Answers `e`. `s` is the request's scope once a handler runs; the filters' answers (400, 401,
 * 429) are written without it, as plain JSON whatever the Accept header says.
 */
export function writeError(sink: ErrorSink, res: Response, e: unknown, s: RequestScope | undefined): void {
  if (isSilenced(res)) {
    // The handler failed after its request timed out: nothing more to answer.
    // Upstream's labels: an error answer is a handler that returned (the timeout filter's `ok`, the
    // write handler's `error`); anything but a Status is a crash, its `panic`.
    if (s?.timedOutBy)
      sink.metrics?.recordPostTimeout(s.timedOutBy, !(e instanceof StatusError) ? 'panic' : s.timedOutBy === 'timeout-handler' ? 'ok' : 'error');
    sink.log?.(postTimeout(res.req ?? s?.req, undefined, e instanceof Error ? e.message : String(e)));
    return;
  }
  const err = toStatusError(e);
  // The answer's Status for the audit event; a plain-text answer leaves it the code only, as upstream's.
  if (s?.audit && !(e instanceof PlainTextError)) s.audit.responseStatus(err.status);
  // A Status made on purpose is logged by its message; anything else that failed, with its stack.
  if (err.code >= 500 && sink.log)
    sink.log(
      `${s?.req.method ?? ''} ${s?.req.url ?? ''}: ${e instanceof ClientWentAway || e instanceof StatusError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`,
    );
  if (res.headersSent) {
    res.destroy?.();
    return;
  }
  if (err.status.details?.retryAfterSeconds) res.setHeader('Retry-After', String(err.status.details.retryAfterSeconds));
  if (e instanceof PlainTextError) {
    // Go's http.Error, as upstream's not-found handler and max-in-flight filter answer.
    res.statusCode = e.code;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.end(`${e.text}\n`);
    return;
  }
  // An HTTP/1.1 body refused part-way is still on the wire: close the connection after the answer
  // so that its remaining bytes are not read as the next request (Go's server does the same).
  if (err.code === 413 && s?.req.httpVersionMajor === 1) res.setHeader('Connection', 'close');
  let choice: OutputChoice;
  try {
    choice = chooseOutput(s?.accept, { protobufOk: true, allowTransforms: false });
  } catch {
    choice = { format: 'json', transform: 'none', transformVersion: 'v1', pretty: false };
  }
  writeBody(
    res,
    err.code,
    err.status as unknown as KubeObject,
    choice,
    s ? prettyOutput(s, choice) : choice.pretty,
    s ? s.compress : sink.compression,
    sink.scheme,
  );
}

/** The log line of work that went on after its request timed out (upstream's "post-timeout activity"). */
export function postTimeout(req: Request | undefined, timedOutAt: number | undefined, result: string): string {
  const elapsed = timedOutAt === undefined ? '' : ` - time-elapsed: ${(performance.now() - timedOutAt).toFixed(1)}ms,`;
  return `post-timeout activity${elapsed} ${req?.method ?? ''} ${JSON.stringify(req?.url ?? '')} result: ${result}`;
}

/** Whether the answer may be JSON bytes as stored: plain JSON, no transform, not pretty-printed. */
export function plainJSON(s: RequestScope, choice: OutputChoice): boolean {
  return choice.format === 'json' && choice.transform === 'none' && !prettyOutput(s, choice);
}

/** Pretty output: the media type's `pretty=1`, or negotiation's isPrettyPrint. */
export function prettyOutput(s: RequestScope, choice: OutputChoice): boolean {
  return choice.pretty || isPrettyPrint(s.req, s.query);
}

/**
 * negotiation's isPrettyPrint: `pretty` as strconv.ParseBool reads it when given, otherwise pretty for
 * the user agents of browsers and command-line HTTP tools (curl, Wget).
 */
function isPrettyPrint(req: Request, query: URLSearchParams): boolean {
  const p = query.get('pretty');
  if (p) return parseGoBool(p) === true; // its error counts as false
  const ua = header(req, 'user-agent') ?? '';
  return ua.startsWith('curl') || ua.startsWith('Wget') || ua.startsWith('Mozilla/5.0');
}

/** Sends JSON bytes that are already the answer (the store's stored-bytes fast paths). */
export function sendJSON(s: RequestScope, code: number, body: Buffer, warnings: readonly string[]): void {
  s.audit?.responseJSON(body);
  setWarnings(s.res, warnings);
  s.res.statusCode = code;
  s.res.setHeader('Content-Type', 'application/json');
  endBody(s.res, body, s.compress);
}

export function writeJson(res: Response, code: number, obj: unknown): void {
  res.statusCode = code;
  res.setHeader('Content-Type', 'application/json');
  res.end(stringifyJSON(obj) + '\n');
}

/** A document that is not an API resource (discovery, Status of deletes) in JSON or YAML, never protobuf. */
export function writeNegotiated(s: RequestScope, code: number, obj: unknown): void {
  const choice = chooseOutput(s.accept, { protobufOk: false, allowTransforms: false });
  s.audit?.responseObject(obj as object);
  writeBody(s.res, code, obj as KubeObject, choice, prettyOutput(s, choice), s.compress, undefined);
}

/**
 * An API object in the negotiated format (SerializeObject): gzipped when large and asked for, if
 * `compress`. `scheme`: the control plane's kind table for protobuf (undefined where it was not offered).
 */
export function writeBody(
  res: Response,
  code: number,
  obj: KubeObject,
  choice: OutputChoice,
  pretty: boolean,
  compress: boolean,
  scheme: ProtobufKinds | undefined,
): void {
  res.statusCode = code;
  let body: Uint8Array | string;
  let format = choice.format;
  try {
    // json.MarshalIndent for pretty output (no newline after it), json.Encoder otherwise.
    body =
      format === 'json'
        ? pretty
          ? stringifyJSON(obj, 2)
          : stringifyJSON(obj) + '\n'
        : format === 'yaml'
          ? toYaml(obj)
          : encodeProtobuf(obj, scheme ?? NO_KINDS);
  } catch {
    // Kinds without a protobuf form (discovery documents, Status of foreign groups) fall back to JSON.
    format = 'json';
    body = stringifyJSON(obj) + '\n';
  }
  res.setHeader('Content-Type', contentTypeOf(format));
  endBody(res, body, compress);
}

/** An API object of resource `r` in the negotiated format, or as a Table row or PartialObjectMetadata. */
export function respondObject(
  s: RequestScope,
  r: RegisteredResource,
  code: number,
  obj: KubeObject,
  warnings: readonly string[] = [],
  choice: OutputChoice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource }),
): void {
  checkPartialMetadata(choice, r, false);
  setWarnings(s.res, warnings);
  let out: unknown = obj;
  if (choice.transform === 'Table') {
    out = toTable(r.store.strategy, [obj], {
      listMeta: { resourceVersion: obj.metadata?.resourceVersion ?? '' },
      includeObject: (s.query.get('includeObject') ?? 'Metadata') as IncludeObject,
      apiVersion: `meta.k8s.io/${choice.transformVersion}`,
    });
  } else if (choice.transform === 'PartialObjectMetadata') {
    out = partialObjectMetadata(obj, `meta.k8s.io/${choice.transformVersion}`);
  }
  s.audit?.responseObject(out as object);
  writeBody(s.res, code, out as KubeObject, choice, prettyOutput(s, choice), s.compress, r.scheme);
}

/**
 * The answer to a write: the stored bytes with the resourceVersion spliced in when plain JSON is
 * asked for and the store can send them as stored (no parse, no stringify, as a GET), else the object.
 */
export function respondWritten(
  s: RequestScope,
  r: RegisteredResource,
  code: number,
  out: { readonly object: KubeObject; json?(): Buffer | undefined },
  warnings: readonly string[],
): void {
  const choice = chooseOutput(s.accept, { protobufOk: !r.registration.customResource });
  const json = plainJSON(s, choice) ? out.json?.() : undefined;
  if (json) return sendJSON(s, code, json, warnings);
  respondObject(s, r, code, out.object, warnings, choice);
}

export function respondList(s: RequestScope, r: RegisteredResource, list: KubeList, choice: OutputChoice): void {
  checkPartialMetadata(choice, r, true);
  let out: unknown = list;
  if (choice.transform === 'Table') {
    out = toTable(r.store.strategy, list.items, {
      listMeta: list.metadata,
      includeObject: (s.query.get('includeObject') ?? 'Metadata') as IncludeObject,
      apiVersion: `meta.k8s.io/${choice.transformVersion}`,
    });
  } else if (choice.transform === 'PartialObjectMetadataList') {
    const v = `meta.k8s.io/${choice.transformVersion}`;
    out = { kind: 'PartialObjectMetadataList', apiVersion: v, metadata: list.metadata, items: list.items.map((i) => partialObjectMetadata(i, v)) };
  }
  s.audit?.responseObject(out as object);
  writeBody(s.res, 200, out as KubeObject, choice, prettyOutput(s, choice), s.compress, r.scheme);
}

/** The handler's 406 for a PartialObjectMetadata(List) transform that does not fit the answer. */
export function checkPartialMetadata(choice: OutputChoice, r: RegisteredResource, list: boolean): void {
  if (choice.transform !== 'PartialObjectMetadata' && choice.transform !== 'PartialObjectMetadataList') return;
  const e = partialMetadataMismatch(choice, list, goTypeOf(r, list));
  if (e) throw e;
}

/** Internal packages of the built-in kinds upstream's handlers hold (events.k8s.io's Event is core's). */
const INTERNAL_PACKAGES: Readonly<Record<string, string>> = { '': 'core', 'events.k8s.io': 'core' };

/** The Go type (%T) upstream's handler holds for the resource: its internal type, or unstructured for custom resources. */
function goTypeOf(r: RegisteredResource, list: boolean): string {
  if (r.registration.customResource) return list ? '*unstructured.UnstructuredList' : '*unstructured.Unstructured';
  const d = r.descriptor;
  return `*${INTERNAL_PACKAGES[d.group] ?? d.group.split('.')[0]}.${d.kind}${list ? 'List' : ''}`;
}
