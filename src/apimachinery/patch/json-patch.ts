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
    // creating them; mutateDocument=false leaves the caller's object alone.
    const result = fastJsonPatch.applyPatch(original, ops as unknown as Operation[], true, false);
    return result.newDocument;
  } catch (e) {
    if (e instanceof fastJsonPatch.JsonPatchError || e instanceof TypeError) throw jsonPatchNotApplied();
    throw e;
  }
}

export function applyJsonPatch(original: JsonValue, patch: string | Uint8Array): JsonValue {
  return applyJsonPatchOperations(original, decodeJsonPatch(patch));
}
