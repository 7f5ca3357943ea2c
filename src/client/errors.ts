// Client-side failures. A response from the server is always a StatusError (the server's own
// Status body, or one made from the HTTP status when the body is not a Status, as client-go's
// NewGenericServerResponse does); anything that prevented a response is a ClientNetworkError, so
// callers can tell "the server said no" from "we never heard back".
import { StatusError } from '../apimachinery/errors.js';
import type { Status, StatusReason } from '../apimachinery/types.js';

export class ClientNetworkError extends Error {
  override readonly name: string = 'ClientNetworkError';
  readonly code: string = 'KPL_ERR_CLIENT_NETWORK';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The caller's signal aborted the request. */
export class ClientAbortError extends ClientNetworkError {
  override readonly name = 'AbortError';
  override readonly code = 'KPL_ERR_CLIENT_ABORTED';
  constructor(message = 'the request was aborted') {
    super(message);
  }
}

export function isNetworkError(e: unknown): e is ClientNetworkError {
  return e instanceof ClientNetworkError;
}

const reasonByCode: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function isStatusBody(v: unknown): v is Status {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'Status' && typeof (v as { code?: unknown }).code === 'number';
}

/** A StatusError for a non-2xx answer: the body's Status when it is one, else a generic one. */
export function statusErrorFrom(httpStatus: number, body: Uint8Array | string): StatusError {
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  try {
    const parsed: unknown = JSON.parse(text);
    if (isStatusBody(parsed)) return statusErrorFromStatus(parsed, httpStatus);
  } catch {
    // not JSON: fall through to a generic Status
  }
  const reason = reasonByCode[httpStatus] ?? (httpStatus >= 500 ? 'InternalError' : '');
  const message = text.trim()
    ? `the server responded with the status code ${httpStatus}: ${text.trim().slice(0, 500)}`
    : `the server responded with the status code ${httpStatus} but did not return more information`;
  return new StatusError({
    code: httpStatus,
    reason,
    message,
    details: { causes: [{ reason: 'UnexpectedServerResponse', message: text.trim().slice(0, 500) }] },
  });
}

/** Wraps a Status object (a response body or a watch ERROR event's object). */
export function statusErrorFromStatus(status: Status, httpStatus?: number): StatusError {
  const e = new StatusError({ ...status, code: status.code || httpStatus || 500 });
  // Some servers omit metadata; callers read e.status.metadata unconditionally.
  Object.assign(e.status, { metadata: status.metadata ?? {} });
  return e;
}
