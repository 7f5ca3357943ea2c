// Kube API errors: every failure a client sees is a metav1.Status with upstream's reason, code
// and message shapes (k8s.io/apimachinery/pkg/api/errors and pkg/util/validation/field).
import type { GroupResource, Status, StatusCause, StatusDetails, StatusReason } from './types.js';
import { stringifyJSON } from '../golang/json-int64.js';

/** field.ErrorType: the kind of problem a validator found at one field path. */
export type FieldIssueType =
  | 'FieldValueNotFound'
  | 'FieldValueRequired'
  | 'FieldValueDuplicate'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany'
  | 'FieldValueTypeInvalid'
  | 'InternalError';

const issueTypeText: Record<FieldIssueType, string> = {
  FieldValueNotFound: 'Not found',
  FieldValueRequired: 'Required value',
  FieldValueDuplicate: 'Duplicate value',
  FieldValueInvalid: 'Invalid value',
  FieldValueNotSupported: 'Unsupported value',
  FieldValueForbidden: 'Forbidden',
  FieldValueTooLong: 'Too long',
  FieldValueTooMany: 'Too many',
  FieldValueTypeInvalid: 'Invalid value',
  InternalError: 'Internal error',
};

/** Marker for "no bad value to print" (field.omitValue upstream). */
export const omitValue: unique symbol = Symbol('omitValue');

/** One validation problem (field.Error). Validators return lists of these and never throw. */
export interface FieldIssue {
  readonly type: FieldIssueType;
  /** Dotted kube field path, e.g. `metadata.labels[app]` or `spec.items[2].name`. */
  readonly field: string;
  readonly badValue?: unknown;
  readonly detail?: string;
}

export const fieldIssue = {
  required: (field: string, detail = ''): FieldIssue => ({ type: 'FieldValueRequired', field, badValue: omitValue, detail }),
  invalid: (field: string, badValue: unknown, detail = ''): FieldIssue => ({ type: 'FieldValueInvalid', field, badValue, detail }),
  notSupported: (field: string, badValue: unknown, valid: readonly string[]): FieldIssue => ({
    type: 'FieldValueNotSupported',
    field,
    badValue,
    detail: valid.length ? `supported values: ${valid.map((v) => JSON.stringify(v)).join(', ')}` : '',
  }),
  forbidden: (field: string, detail: string): FieldIssue => ({ type: 'FieldValueForbidden', field, badValue: omitValue, detail }),
  duplicate: (field: string, badValue: unknown): FieldIssue => ({ type: 'FieldValueDuplicate', field, badValue }),
  notFound: (field: string, badValue: unknown): FieldIssue => ({ type: 'FieldValueNotFound', field, badValue }),
  tooLong: (field: string, _badValue: unknown, maxLength: number): FieldIssue => ({
    type: 'FieldValueTooLong',
    field,
    badValue: omitValue,
    detail: `must have at most ${maxLength} bytes`,
  }),
  tooMany: (field: string, actual: number, max: number): FieldIssue => ({
    type: 'FieldValueTooMany',
    field,
    badValue: actual,
    detail: `must have at most ${max} items`,
  }),
  typeInvalid: (field: string, badValue: unknown, detail: string): FieldIssue => ({ type: 'FieldValueTypeInvalid', field, badValue, detail }),
  internal: (field: string, detail: string): FieldIssue => ({ type: 'InternalError', field, badValue: omitValue, detail }),
};

/** A bad value already written as Go prints it (field.Error's %#v of a struct value). */
export class GoRenderedValue {
  constructor(readonly text: string) {}
}

/** Go's %q / %v rendering of a bad value, as field.Error prints it. */
function renderValue(v: unknown): string {
  if (v instanceof GoRenderedValue) return v.text;
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  try {
    return stringifyJSON(v);
  } catch {
    return String(v);
  }
}

/** field.Error.ErrorBody(): the message without the field path. */
export function issueBody(issue: FieldIssue): string {
  const text = issueTypeText[issue.type];
  let s: string;
  switch (issue.type) {
    case 'FieldValueRequired':
    case 'FieldValueForbidden':
    case 'FieldValueTooLong':
    case 'InternalError':
      s = text;
      break;
    default:
      s = issue.badValue === omitValue ? text : `${text}: ${renderValue(issue.badValue)}`;
  }
  if (issue.detail) s += `: ${issue.detail}`;
  return s;
}

/** field.Error.Error(): `<field>: <body>`. */
export function issueString(issue: FieldIssue): string {
  return issue.field ? `${issue.field}: ${issueBody(issue)}` : issueBody(issue);
}

/** An error that carries a complete kube Status; handlers serialise `status` as is. */
export class StatusError extends Error {
  override readonly name = 'StatusError';
  readonly status: Status;
  constructor(status: Omit<Status, 'kind' | 'apiVersion' | 'metadata' | 'status'>) {
    super(status.message ?? status.reason ?? `status ${status.code}`);
    // Fields in metav1.Status's declaration order, as Go's encoder writes them: message, reason, details, code.
    const { message, reason, details, code, ...rest } = status;
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      ...(message !== undefined ? { message } : {}),
      ...(reason !== undefined ? { reason } : {}),
      ...(details !== undefined ? { details } : {}),
      code,
      ...rest,
    };
  }
  get code(): number {
    return this.status.code;
  }
  get reason(): StatusReason | undefined {
    return this.status.reason;
  }
}

export function isStatusError(e: unknown): e is StatusError {
  return e instanceof StatusError;
}

export function reasonOf(e: unknown): StatusReason | undefined {
  return isStatusError(e) ? e.reason : undefined;
}

function qualified(gr: GroupResource): string {
  return gr.group ? `${gr.resource}.${gr.group}` : gr.resource;
}

function details(gr: GroupResource, name: string | undefined, extra?: Partial<StatusDetails>): StatusDetails {
  const d: StatusDetails = {};
  if (name) d.name = name;
  if (gr.group) d.group = gr.group;
  d.kind = gr.resource;
  return { ...d, ...extra };
}

export function notFound(gr: GroupResource, name: string): StatusError {
  return new StatusError({ reason: 'NotFound', code: 404, message: `${qualified(gr)} "${name}" not found`, details: details(gr, name) });
}

export function alreadyExists(gr: GroupResource, name: string): StatusError {
  return new StatusError({ reason: 'AlreadyExists', code: 409, message: `${qualified(gr)} "${name}" already exists`, details: details(gr, name) });
}

/** A stale resourceVersion or failed precondition on update/delete. */
export function conflict(
  gr: GroupResource,
  name: string,
  why = 'the object has been modified; please apply your changes to the latest version and try again',
): StatusError {
  return new StatusError({
    reason: 'Conflict',
    code: 409,
    message: `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${why}`,
    details: details(gr, name),
  });
}

/** 422 Invalid with one cause per issue: `Kind "name" is invalid: <issues>`. */
export function invalid(gk: { group: string; kind: string }, name: string, issues: readonly FieldIssue[]): StatusError {
  const causes: StatusCause[] = issues.map((i) => ({ reason: i.type, message: issueBody(i), field: i.field }));
  const msgs = issues.map(issueString);
  const agg = msgs.length === 1 ? msgs[0] : `[${msgs.join(', ')}]`;
  const kindText = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
  const d: StatusDetails = { name, ...(gk.group ? { group: gk.group } : {}), kind: gk.kind, causes };
  return new StatusError({ reason: 'Invalid', code: 422, message: `${kindText} "${name}" is invalid: ${agg}`, details: d });
}

export function badRequest(message: string): StatusError {
  return new StatusError({ reason: 'BadRequest', code: 400, message });
}

/**
 * The 400 of a body the decoder cannot turn into the expected type (the serializer's
 * "... cannot be handled as a ..."), with the decoder's reason after a colon when there is one.
 */
export function undecodable(kind: string, version: string, expected: string, why?: string): StatusError {
  return badRequest(`${kind} in version "${version}" cannot be handled as a ${expected}${why === undefined ? '' : `: ${why}`}`);
}

export function unauthorized(message = 'Unauthorized'): StatusError {
  return new StatusError({ reason: 'Unauthorized', code: 401, message });
}

export function forbidden(gr: GroupResource, name: string, why: string): StatusError {
  const what = name ? `${qualified(gr)} "${name}"` : qualified(gr);
  return new StatusError({ reason: 'Forbidden', code: 403, message: `${what} is forbidden: ${why}`, details: details(gr, name) });
}

export function methodNotSupported(gr: GroupResource, action: string): StatusError {
  return new StatusError({
    reason: 'MethodNotAllowed',
    code: 405,
    message: `${action} is not supported on resources of kind "${qualified(gr)}"`,
    details: details(gr, undefined),
  });
}

export function notAcceptable(message: string): StatusError {
  return new StatusError({ reason: 'NotAcceptable', code: 406, message });
}

/** negotiation's errUnsupportedMediaType (no details). */
export function unsupportedMediaType(_contentType: string, accepted: readonly string[]): StatusError {
  return new StatusError({
    reason: 'UnsupportedMediaType',
    code: 415,
    message: `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  });
}

export function requestEntityTooLarge(limitBytes: number): StatusError {
  return new StatusError({ reason: 'RequestEntityTooLarge', code: 413, message: `Request entity too large: limit is ${limitBytes}` });
}

/** 410 Expired for a resourceVersion older than the retained history (watch and list). */
export function resourceExpired(message: string): StatusError {
  return new StatusError({ reason: 'Expired', code: 410, message });
}

export function tooOldResourceVersion(requested: number | string, oldest: number | string): StatusError {
  return resourceExpired(`too old resource version: ${requested} (${oldest})`);
}

export const CONTINUE_EXPIRED_MESSAGE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

export function gone(message: string): StatusError {
  return new StatusError({ reason: 'Gone', code: 410, message });
}

export function tooManyRequests(message: string, retryAfterSeconds = 1): StatusError {
  return new StatusError({ reason: 'TooManyRequests', code: 429, message, details: { retryAfterSeconds } });
}

export function internalError(err: unknown): StatusError {
  const m = err instanceof Error ? err.message : String(err);
  return new StatusError({ reason: 'InternalError', code: 500, message: `Internal error occurred: ${m}`, details: { causes: [{ message: m }] } });
}

/**
 * ErrorToAPIStatus of an error that is no Status (a decoder's error a handler passes on as it is):
 * a 500 with an empty reason (StatusReasonUnknown, left out as Go's omitempty does) and the error's text.
 */
export function unknownError(message: string): StatusError {
  return new StatusError({ code: 500, message });
}

export function serviceUnavailable(message: string): StatusError {
  return new StatusError({ reason: 'ServiceUnavailable', code: 503, message });
}

/**
 * storage.NewTooLargeResourceVersionError: a read at a resourceVersion the server has not reached
 * in time. client-go's reflector recognises it by the cause and relists from the latest state.
 */
export function tooLargeResourceVersion(requested: number, current: number, retryAfterSeconds = 1): StatusError {
  return new StatusError({
    reason: 'Timeout',
    code: 504,
    message: `Timeout: Too large resource version: ${requested}, current: ${current}`,
    // Go's omitempty: a 0 (etcd's future-revision error) leaves the field out.
    details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], ...(retryAfterSeconds ? { retryAfterSeconds } : {}) },
  });
}

/** NewTimeoutError; a retryAfterSeconds of 0 is left out (Go's omitempty). */
export function timeout(message: string, retryAfterSeconds = 1): StatusError {
  return new StatusError({ reason: 'Timeout', code: 504, message: `Timeout: ${message}`, details: retryAfterSeconds ? { retryAfterSeconds } : {} });
}

/** V8's RangeError for a recursion past its stack (not the other RangeErrors, e.g. of toISOString). */
export function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError && e.message === 'Maximum call stack size exceeded';
}

/**
 * Wraps anything thrown below the handlers into a Status, keeping StatusErrors as they are. V8's
 * stack overflow comes from a body nested deeper than the server's recursive processing goes
 * (about 3,000 levels of a custom resource; the decoders take Go's 10,000): the client's 400, not
 * an internal error.
 */
export function toStatusError(e: unknown): StatusError {
  if (isStatusError(e)) return e;
  if (isStackOverflow(e)) {
    return badRequest('the object is nested too deeply to be processed (maximum call stack size exceeded); reduce its nesting');
  }
  return internalError(e);
}
