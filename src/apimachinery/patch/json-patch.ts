// RFC 6902 JSON patch (application/json-patch+json) with the results kube's patch handler gives:
// an undecodable patch is 400 with the decoder's message, more than 10000 operations is 413, and an
// operation that cannot apply (failed test, missing path, unknown op) is 422 Invalid with the
// generic "rejected our request" message (handlers/patch.go, jsonPatcher.applyJSPatch).
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { StatusError, badRequest } from '../errors.js';
import { describeJsonSyntaxError } from '../json.js';
import type { JsonValue } from '../types.js';

export const MAX_JSON_PATCH_OPERATIONS = 10000;

export function jsonPatchNotApplied(): StatusError {
  // Upstream passes the jsonpatch error to NewGenericServerResponse, which drops it for 422.
  return new StatusError({ reason: 'Invalid', code: 422, message: 'the server rejected our request due to an error in our request', details: {} });
}

function tooManyOperations(count: number): StatusError {
  return new StatusError({
    reason: 'RequestEntityTooLarge',
    code: 413,
    message: `Request entity too large: The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${count}`,
  });
}

/** jsonpatch.DecodePatch: the body must be a JSON array. */
export function decodeJsonPatch(patch: string | Uint8Array): JsonValue[] {
  const text = typeof patch === 'string' ? patch : new TextDecoder().decode(patch);
  let ops: unknown;
  try {
    ops = JSON.parse(text);
  } catch {
    throw badRequest(describeJsonSyntaxError(text, undefined, false));
  }
  if (!Array.isArray(ops)) {
    const kind = ops === null ? null : typeof ops === 'object' ? 'object' : typeof ops;
    // A JSON null decodes to an empty patch in Go.
    if (kind === null) return [];
    throw badRequest(`json: cannot unmarshal ${kind} into Go value of type jsonpatch.Patch`);
  }
  return ops as JsonValue[];
}

/** Applies decoded operations to a copy of `original`. */
export function applyJsonPatchOperations(original: JsonValue, ops: readonly JsonValue[]): JsonValue {
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) throw tooManyOperations(ops.length);
  try {
    // validateOperation=true makes missing paths fail (as evanphx/json-patch does) instead of
    // creating them. One operation at a time, each first read the way json-patch v4 (the version
    // kube vendors) reads it against the document as it is then.
    let doc = fastJsonPatch.deepClone(original) as JsonValue;
    for (const raw of ops) {
      const op = asV4Operation(doc, raw);
      if (op === undefined) continue;
      doc = fastJsonPatch.applyOperation(doc, op, true, true).newDocument as JsonValue;
    }
    return doc;
  } catch (e) {
    if (e instanceof fastJsonPatch.JsonPatchError || e instanceof TypeError) throw jsonPatchNotApplied();
    throw e;
  }
}

/**
 * json-patch v4's readings where RFC 6902 (and fast-json-patch) differ: `replace` of a key an object
 * lacks sets it (its get of a missing key is not an error); `test` of a missing key against null
 * passes; a negative array index counts from the end (SupportNegativeIndices). Undefined: skip it.
 */
function asV4Operation(doc: JsonValue, raw: JsonValue): Operation | undefined {
  const op = raw as unknown as Operation & { value?: unknown };
  if (op === null || typeof op !== 'object' || typeof op.path !== 'string' || op.path === '') return op;
  const parts = op.path.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let parent: unknown = doc;
  for (const p of parts.slice(0, -1)) {
    if (parent === null || typeof parent !== 'object') return op;
    parent = (parent as Record<string, unknown>)[p];
  }
  const last = parts[parts.length - 1]!;
  if (Array.isArray(parent)) {
    if (/^-\d+$/.test(last) && (op.op === 'remove' || op.op === 'replace' || op.op === 'test' || op.op === 'add')) {
      const idx = Number(last) + parent.length;
      if (idx >= 0) return { ...op, path: [...op.path.split('/').slice(0, -1), String(idx)].join('/') } as Operation;
    }
    return op;
  }
  if (parent === null || typeof parent !== 'object') return op;
  const missing = !Object.prototype.hasOwnProperty.call(parent, last);
  if (missing && op.op === 'replace') return { ...op, op: 'add' } as Operation;
  if (missing && op.op === 'test' && (op.value === null || op.value === undefined)) return undefined;
  return op;
}

export function applyJsonPatch(original: JsonValue, patch: string | Uint8Array): JsonValue {
  return applyJsonPatchOperations(original, decodeJsonPatch(patch));
}
