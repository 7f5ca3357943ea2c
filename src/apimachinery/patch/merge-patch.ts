// RFC 7386 JSON merge patch (application/merge-patch+json), as evanphx/json-patch applies it.
import { badRequest } from '../errors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../types.js';
import { parseJSONExact } from '../../golang/json-int64.js';
import { deepCopyJSON } from '../deepcopy.js';

/** Returns a new value; neither argument is modified. */
export function mergePatch(original: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return deepCopyJSON(patch);
  const target: JsonObject = isJsonObject(original) ? { ...original } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) delete target[key];
    else target[key] = mergePatch(target[key], value);
  }
  return target;
}

/** Upstream answers an unparseable merge patch with jsonpatch.ErrBadJSONPatch as a 400. */
export function applyMergePatch(original: JsonValue, patch: string | Uint8Array): JsonValue {
  const text = typeof patch === 'string' ? patch : new TextDecoder().decode(patch);
  let parsed: JsonValue;
  try {
    parsed = parseJSONExact(text) as JsonValue;
  } catch {
    throw badRequest('Invalid JSON Patch');
  }
  return mergePatch(original, parsed);
}
