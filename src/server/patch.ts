// PATCH bodies applied to the current object: JSON patch, JSON merge patch, strategic merge patch.
// Server-side apply (application/apply-patch+yaml) is the field manager's: see fieldmanager.ts.
import { StatusError, badRequest, unsupportedMediaType } from '../apimachinery/errors.js';
import { copyNumberTexts, parseJson } from '../apimachinery/json.js';
import { applyJsonPatch } from '../apimachinery/patch/json-patch.js';
import { mergePatch } from '../apimachinery/patch/merge-patch.js';
import { strategicMergePatch } from '../apimachinery/patch/strategic-merge.js';
import type { Definitions, OpenAPISchema } from '../apimachinery/schema.js';
import { isJsonObject, type JsonValue, type KubeObject } from '../apimachinery/types.js';
import { PATCH_MEDIA_TYPES, checkObjectMeta, type PatchType } from './negotiation.js';

export interface PatchContext {
  readonly schema: OpenAPISchema | undefined;
  readonly definitions: Definitions;
  readonly kind: string;
  readonly group: string;
}

export function applyPatch(type: PatchType, current: KubeObject | undefined, body: Uint8Array, ctx: PatchContext): { object: KubeObject; duplicateFields: string[] } {
  if (type === 'apply') {
    throw unsupportedMediaType('application/apply-patch+yaml', PATCH_MEDIA_TYPES.filter((t) => t !== 'application/apply-patch+yaml'));
  }
  const original = (current ?? {}) as JsonValue;
  if (type === 'json') {
    const result = applyJsonPatch(original, body);
    if (!isJsonObject(result)) throw badRequest('the patched object is not a JSON object');
    checkObjectMeta(result);
    return { object: result, duplicateFields: [] };
  }
  const parsed = parseJson(body, { messagePrefix: '' });
  const patch = parsed.value;
  let result: JsonValue;
  switch (type) {
    case 'merge':
      if (!isJsonObject(patch)) throw badRequest('json: cannot unmarshal into Go value of type map[string]interface {}');
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
      if (!isJsonObject(patch)) throw badRequest('json: cannot unmarshal into Go value of type map[string]interface {}');
      result = strategicMergePatch(original, patch, ctx.schema, ctx.definitions);
      break;
  }
  if (!isJsonObject(result)) throw badRequest('the patched object is not a JSON object');
  checkObjectMeta(result);
  return { object: result, duplicateFields: parsed.duplicateFields };
}
