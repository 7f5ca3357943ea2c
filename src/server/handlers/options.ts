// The options of a request as upstream's handlers read and validate them: create/update/patch
// options (dryRun, fieldManager, fieldValidation), list options, and DeleteOptions (body or query).
import { badRequest, fieldIssue, invalid, undecodable, unknownError, type FieldIssue } from '../../apimachinery/errors.js';
import { numberTextAt } from '../../apimachinery/json.js';
import { jsonKind, numberValue, unmarshalTypeError } from '../../golang/json-errors.js';
import { decodeObject, type ProtobufKinds } from '../../apimachinery/protobuf/index.js';
import { isJsonObject } from '../../apimachinery/types.js';
import { NumError, parseGoInt } from '../../golang/strconv.js';
import type { DeleteOptions, ListOptions } from '../../registry/store.js';
import { decodeBody } from '../negotiation.js';
import { header, type RequestScope } from '../request-scope.js';
import { queryBool } from '../requestinfo.js';
import { readBody } from './body.js';

/** ValidateDryRun: every value must be All; the whole list is the bad value. */
function dryRunIssues(values: readonly string[]): FieldIssue[] {
  return values.every((v) => v === 'All') ? [] : [fieldIssue.notSupported('dryRun', values, ['All'])];
}

/** unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;

/** ValidateFieldManager: at most 128 bytes, printable runes only (each other one named with its byte offset). */
function fieldManagerIssues(fieldManager: string, path = 'fieldManager'): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (Buffer.byteLength(fieldManager) > 128) issues.push(fieldIssue.tooLong(path, fieldManager, 128));
  let offset = 0;
  for (const ch of fieldManager) {
    if (!PRINTABLE.test(ch)) {
      const cp = ch.codePointAt(0)!;
      issues.push(fieldIssue.invalid(path, fieldManager, `invalid character U+${cp.toString(16).toUpperCase().padStart(4, '0')} (at position ${offset})`));
    }
    offset += Buffer.byteLength(ch);
  }
  return issues;
}

export interface WriteParams {
  dryRun: boolean;
  fieldManager: string | undefined;
  fieldValidation: 'Strict' | 'Warn' | 'Ignore';
  /**
   * What admission (a webhook's AdmissionReview, a policy's `request.options`) sees of them: the
   * {Create,Update}Options as given (a patch's as upstream's patchTo{Create,Update}Options carry
   * them: dryRun, fieldManager, fieldValidation), unset ones left out.
   */
  options: Readonly<Record<string, unknown>>;
}

const OPTIONS_KIND = { create: 'CreateOptions', update: 'UpdateOptions', patch: 'PatchOptions' } as const;

/** Validate{Create,Update,Patch}Options: all issues in one 422 on the verb's options kind. */
export function writeParams(q: URLSearchParams, op: 'create' | 'update' | 'patch', extra: readonly FieldIssue[] = []): WriteParams {
  const dryRun = q.getAll('dryRun');
  const fieldManager = q.get('fieldManager') ?? undefined;
  const given = q.get('fieldValidation');
  // An empty fieldValidation is the default, Warn (the handlers' fieldValidation()).
  const fv = given || 'Warn';
  const issues = [
    ...extra,
    ...fieldManagerIssues(fieldManager ?? ''),
    ...dryRunIssues(dryRun),
    ...(fv !== 'Strict' && fv !== 'Warn' && fv !== 'Ignore' ? [fieldIssue.notSupported('fieldValidation', fv, ['', 'Ignore', 'Strict', 'Warn'])] : []),
  ];
  if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: OPTIONS_KIND[op] }, '', issues);
  return {
    dryRun: dryRun.includes('All'),
    fieldManager,
    fieldValidation: fv as WriteParams['fieldValidation'],
    // A write without options (most) shares one empty object.
    options:
      dryRun.length || fieldManager || given
        ? { ...(dryRun.length ? { dryRun } : {}), ...(fieldManager ? { fieldManager } : {}), ...(given ? { fieldValidation: given } : {}) }
        : NO_OPTIONS,
  };
}

const NO_OPTIONS: Readonly<Record<string, unknown>> = Object.freeze({});

export function listOptionsFrom(q: URLSearchParams): ListOptions {
  const limit = q.get('limit');
  // An int64 as Go's parameter codec reads it; zero or less means no limit.
  const n = limit !== null && limit !== '' ? parseInt64Param(limit) : 0;
  const sendInitial = q.get('sendInitialEvents');
  return {
    ...(sendInitial !== null ? { sendInitialEvents: queryBool(sendInitial) } : {}),
    ...(q.get('labelSelector') ? { labelSelector: q.get('labelSelector')! } : {}),
    ...(q.get('fieldSelector') ? { fieldSelector: q.get('fieldSelector')! } : {}),
    ...(n > 0 ? { limit: n } : {}),
    ...(q.get('continue') ? { continue: q.get('continue')! } : {}),
    ...(q.has('resourceVersion') ? { resourceVersion: q.get('resourceVersion')! } : {}),
    ...(q.get('resourceVersionMatch') ? { resourceVersionMatch: q.get('resourceVersionMatch')! } : {}),
  };
}

/**
 * strconv.ParseInt(s, 10, 64) as the query parameter codec runs it, with its error as the 400's text.
 * Numbers past 2^53 are not exact here; no parameter needs them.
 */
export function parseInt64Param(s: string): number {
  const n = parseGoInt(s, 10, 64);
  if (n instanceof NumError) throw badRequest(n.message);
  return Number(n);
}

/** DeleteOptions of a delete or deletecollection, from the body when there is one, else from the query. */
export async function readDeleteOptions(
  s: RequestScope,
  maxBodyBytes: number,
  scheme: ProtobufKinds,
): Promise<{ readonly store: DeleteOptions & { readonly dryRun: boolean }; readonly options: Readonly<Record<string, unknown>> }> {
  const q = s.query;
  const body = await readBody(s.req, maxBodyBytes);
  // Upstream reads DeleteOptions from the body when there is one, and from the query only otherwise.
  let from: { dryRun: string[]; grace: unknown; propagation: string | undefined; orphan: unknown; pre: DeleteOptions['preconditions'] | undefined };
  if (body.length > 0) {
    const ct = header(s.req, 'content-type');
    const obj = ct?.startsWith('application/vnd.kubernetes.protobuf') ? decodeObject(body, scheme) : decodeBody(ct, body, { scheme }).object;
    if (!isJsonObject(obj)) throw badRequest('DeleteOptions must be an object');
    s.audit?.requestObject(obj);
    if (obj.kind !== undefined && obj.kind !== 'DeleteOptions') {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- TODO: an object kind prints as [object Object]; upstream fails earlier ("couldn't get version/kind")
      throw undecodable(String(obj.kind), String(obj.apiVersion ?? ''), 'DeleteOptions');
    }
    const o = obj as Record<string, unknown>;
    checkGracePeriodSeconds(o);
    from = {
      dryRun: Array.isArray(o.dryRun) ? o.dryRun.map(String) : [],
      grace: o.gracePeriodSeconds,
      propagation: typeof o.propagationPolicy === 'string' ? o.propagationPolicy : undefined,
      orphan: o.orphanDependents,
      pre: o.preconditions ?? undefined,
    };
  } else {
    from = {
      dryRun: q.getAll('dryRun'),
      grace: q.has('gracePeriodSeconds') ? parseInt64Param(q.get('gracePeriodSeconds')!) : undefined,
      propagation: q.get('propagationPolicy') ?? undefined,
      orphan: q.has('orphanDependents') ? queryBool(q.get('orphanDependents')) : undefined,
      pre: undefined,
    };
  }
  // ValidateDeleteOptions, in upstream's order.
  const issues: FieldIssue[] = [];
  const p = from.propagation;
  const orphanSet = from.orphan !== undefined && from.orphan !== null;
  if (orphanSet && p !== undefined) issues.push(fieldIssue.invalid('propagationPolicy', p, 'orphanDependents and deletionPropagation cannot be both set'));
  if (p !== undefined && p !== 'Orphan' && p !== 'Background' && p !== 'Foreground')
    issues.push(fieldIssue.notSupported('propagationPolicy', p, ['Foreground', 'Background', 'Orphan', 'nil']));
  issues.push(...dryRunIssues(from.dryRun));
  if (issues.length) throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', issues);
  // An int64 past 2^53 is a bigint; a grace period that long is forever either way.
  const grace = typeof from.grace === 'number' ? from.grace : typeof from.grace === 'bigint' ? Number(from.grace) : undefined;
  // rest.BeforeDelete: a negative grace period is treated as 1 second, not refused (before admission sees it).
  const gracePeriodSeconds = grace !== undefined ? (grace < 0 ? 1 : grace) : undefined;
  const store = {
    dryRun: from.dryRun.includes('All'),
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    ...(p ? { propagationPolicy: p } : {}),
    ...(orphanSet ? { orphanDependents: from.orphan === true } : {}),
    ...(from.pre ? { preconditions: from.pre } : {}),
  };
  // What admission sees: the DeleteOptions as Go decoded and printed them (its field order, unset ones left out).
  const pre = from.pre && typeof from.pre === 'object' ? (from.pre as Record<string, unknown>) : undefined;
  const preconditions = pre
    ? {
        ...(typeof pre.uid === 'string' ? { uid: pre.uid } : {}),
        ...(typeof pre.resourceVersion === 'string' ? { resourceVersion: pre.resourceVersion } : {}),
      }
    : undefined;
  const options = {
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    ...(preconditions ? { preconditions } : {}),
    ...(orphanSet ? { orphanDependents: from.orphan === true } : {}),
    ...(p !== undefined ? { propagationPolicy: p } : {}),
    ...(from.dryRun.length ? { dryRun: from.dryRun } : {}),
  };
  return { store, options };
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * DeleteOptions.gracePeriodSeconds is an *int64: Go's decoder refuses a number that ParseInt does
 * not read (a fraction, an exponent, beyond int64) and any other JSON kind but null. The delete
 * handler passes that error on as it is: ErrorToAPIStatus makes it a 500 with its text.
 */
function checkGracePeriodSeconds(o: Record<string, unknown>): void {
  const v = o['gracePeriodSeconds'];
  if (v === undefined || v === null || typeof v === 'bigint') return;
  const at = { struct: 'DeleteOptions', field: 'gracePeriodSeconds' };
  if (typeof v !== 'number') throw unknownError(unmarshalTypeError(jsonKind(v), 'int64', at));
  const literal = numberTextAt(o, 'gracePeriodSeconds', v)?.literal ?? String(v);
  if (/^-?[0-9]+$/.test(literal) && BigInt(literal) >= INT64_MIN && BigInt(literal) <= INT64_MAX) return;
  throw unknownError(unmarshalTypeError(numberValue(literal), 'int64', at));
}
