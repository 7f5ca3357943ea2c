// PATCH bodies applied to the current object: JSON patch, JSON merge patch, strategic merge patch.
// Server-side apply (application/apply-patch+yaml) is the field manager's: see fieldmanager.ts.
import { StatusError, badRequest, unsupportedMediaType } from '../apimachinery/errors.js';
import { copyNumberTexts, parseJson } from '../apimachinery/json.js';
import { applyJsonPatch } from '../apimachinery/patch/json-patch.js';
import { mergePatch } from '../apimachinery/patch/merge-patch.js';
import { strategicMergePatch } from '../apimachinery/patch/strategic-merge.js';
import type { Definitions, OpenAPISchema } from '../apimachinery/schema.js';
import { isJsonObject, type JsonValue, type KubeObject } from '../apimachinery/types.js';
import { keyOccurrences } from '../golang/json-decode.js';
import { cannotUnmarshal } from '../golang/json-errors.js';
import { PATCH_MEDIA_TYPES, checkObjectMeta, type PatchType } from './negotiation.js';

export interface PatchContext {
  readonly schema: OpenAPISchema | undefined;
  readonly definitions: Definitions;
  readonly kind: string;
  readonly group: string;
  /**
   * The request's fieldValidation (Warn when absent): with Warn or Strict upstream first decodes a
   * merge patch strictly into a map, and that decode's error is the answer.
   */
  readonly fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
}

/** The fields of upstream's jsonPatchOp, which a JSON patch is strictly decoded into under Warn/Strict. */
const JSON_PATCH_OP_FIELDS = new Set(['op', 'path', 'from', 'value']);

/**
 * The JSON patch's own problems (patch.go decodes the operations strictly into []jsonPatchOp and
 * prefixes each error with "json patch "): keys an operation does not have, keys set twice (also
 * inside a `value`, an interface{}), in document order; an unknown key set twice is unknown only.
 */
function jsonPatchOpProblems(body: Uint8Array): string[] {
  const out: string[] = [];
  for (const k of keyOccurrences(new TextDecoder().decode(body))) {
    const m = /^\[\d+\]\.(.*)$/.exec(k.path);
    if (!m) continue;
    const field = m[1]!;
    const top = !/[.[]/.test(field);
    if (top && !JSON_PATCH_OP_FIELDS.has(field)) {
      if (!k.repeated) out.push(`json patch unknown field "${k.path}"`);
    } else if (k.repeated && (top || field.startsWith('value'))) {
      out.push(`json patch duplicate field "${k.path}"`);
    }
  }
  return out;
}

/** The Go type upstream decodes a merge or strategic merge patch into, as its errors name it. */
const PATCH_MAP = 'map[string]interface {}';

export function applyPatch(
  type: PatchType,
  current: KubeObject | undefined,
  body: Uint8Array,
  ctx: PatchContext,
): { object: KubeObject; duplicateFields: string[]; patchProblems?: string[] } {
  if (type === 'apply') {
    throw unsupportedMediaType(
      'application/apply-patch+yaml',
      PATCH_MEDIA_TYPES.filter((t) => t !== 'application/apply-patch+yaml'),
    );
  }
  const original = (current ?? {}) as JsonValue;
  if (type === 'json') {
    const result = applyJsonPatch(original, body);
    if (!isJsonObject(result)) throw badRequest('the patched object is not a JSON object');
    checkObjectMeta(result);
    const patchProblems = ctx.fieldValidation === 'Ignore' ? [] : jsonPatchOpProblems(body);
    return { object: result, duplicateFields: [], ...(patchProblems.length ? { patchProblems } : {}) };
  }
  // A merge patch is decoded by kjson.UnmarshalStrict first ("error decoding patch: %v"), unless
  // fieldValidation=Ignore, where only jsonpatch.MergePatch reads it and answers ErrBadJSONPatch; a
  // strategic merge patch's decode error is the answer as it is.
  const strictFirst = ctx.fieldValidation !== 'Ignore';
  let parsed: ReturnType<typeof parseJson>;
  try {
    parsed = parseJson(body, { messagePrefix: type === 'merge' && strictFirst ? 'error decoding patch: ' : '' });
  } catch (e) {
    if (type === 'merge' && !strictFirst && e instanceof StatusError && e.code === 400) throw badRequest('Invalid JSON Patch');
    throw e;
  }
  const patch = parsed.value;
  let result: JsonValue;
  switch (type) {
    case 'merge':
      if (!isJsonObject(patch)) {
        // null decodes into a map; MergePatch then refuses it (a nil patch), as it refuses any
        // other non-object but an array, which it returns as the patched document.
        if (strictFirst && patch !== null) throw badRequest(`error decoding patch: ${cannotUnmarshal(patch, PATCH_MAP)}`);
        if (!Array.isArray(patch)) throw badRequest('Invalid JSON Patch');
      }
      // The patch's numbers keep their text in the result (evanphx/json-patch keeps it, and the
      // patched text is decoded): `1.0` into an integer field is the decoder's error, as upstream.
      result = copyNumberTexts(patch, mergePatch(original, patch));
      break;
    case 'strategic':
      if (!ctx.schema) {
        throw new StatusError({
          reason: 'UnsupportedMediaType',
          code: 415,
          message: `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
        });
      }
      // null decodes to a nil map, which patches nothing.
      if (patch !== null && !isJsonObject(patch)) throw badRequest(cannotUnmarshal(patch, PATCH_MAP));
      result = strategicMergePatch(original, patch ?? {}, ctx.schema, ctx.definitions);
      break;
  }
  if (!isJsonObject(result)) throw badRequest('the patched object is not a JSON object');
  checkObjectMeta(result);
  return { object: result, duplicateFields: parsed.duplicateFields };
}
