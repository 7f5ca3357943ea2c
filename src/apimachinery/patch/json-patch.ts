// RFC 6902 JSON patch (application/json-patch+json) with the results kube's patch handler gives:
// an undecodable patch is 400 with the decoder's message, more than 10000 operations is 413, and an
// operation that cannot apply (failed test, missing path, unknown op) is 422 Invalid with the
// generic "rejected our request" message (handlers/patch.go, jsonPatcher.applyJSPatch).
// Numbers keep the text the patch wrote them in (`1.0`, `1e3`), as json-patch v4 keeps each value's
// raw JSON through add, replace, copy and move, and compares raw scalars byte for byte in `test`:
// upstream decodes the patched text, so `1.0` in an integer field is the decoder's error.
import { randomUUID } from 'node:crypto';
import fastJsonPatch from 'fast-json-patch';
import type { Operation } from 'fast-json-patch';
import { StatusError, badRequest } from '../errors.js';
import { describeJsonSyntaxError, forEachNumberText, hasNumberTexts, numberTextAt, recordNumberTextsOf, setNumberText } from '../json.js';
import type { JsonValue } from '../types.js';
import { cannotUnmarshal } from '../../golang/json-errors.js';
import { jsonNumber } from '../../golang/json.js';
import { containsBigInt } from '../../golang/json-int64.js';
import { deepCopyJSON } from '../deepcopy.js';

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
    // A JSON null decodes to an empty patch in Go.
    if (ops === null) return [];
    throw badRequest(cannotUnmarshal(ops, 'jsonpatch.Patch'));
  }
  recordNumberTextsOf(text, ops);
  return ops as JsonValue[];
}

/**
 * Applies decoded operations to a copy of `original`. Operations from decodeJsonPatch whose values
 * hold numbers written otherwise than String(value) (`1.0`) carry that text into the result (see
 * markNumberTexts); the operations are as they were afterwards, so they may be applied again.
 */
export function applyJsonPatchOperations(original: JsonValue, ops: readonly JsonValue[]): JsonValue {
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) throw tooManyOperations(ops.length);
  // int64s past 2^53 (bigints) take the path of numbers with a text of their own: fast-json-patch
  // copies values through JSON.stringify, which refuses a bigint, and `test` compares them by text.
  const bigOriginal = containsBigInt(original);
  const marked = bigOriginal || hasNumberTexts(ops) || containsBigInt(ops) ? markNumberTexts(ops) : undefined;
  const marker = marked?.marker;
  try {
    // validateOperation=true makes missing paths fail (as evanphx/json-patch does) instead of
    // creating them. One operation at a time, each first read the way json-patch v4 (the version
    // kube vendors) reads it against the document as it is then.
    let doc = bigOriginal ? markedCopy(original, marker!) : (fastJsonPatch.deepClone(original) as JsonValue);
    for (const raw of ops) {
      const op = asV4Operation(doc, raw);
      if (op === undefined) continue;
      doc = fastJsonPatch.applyOperation(doc, op, true, true).newDocument;
    }
    return marker === undefined ? doc : restoreNumberTexts(doc, marker);
  } catch (e) {
    if (e instanceof fastJsonPatch.JsonPatchError || e instanceof TypeError) throw jsonPatchNotApplied();
    throw e;
  } finally {
    // The markers go out of the operations again (values add placed by reference were restored
    // with the result already).
    if (marked) for (const [c, key, v] of marked.undo) c[key] = v;
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
  const parts = op.path
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
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

/**
 * The path of json-patch v4's raw values, for the rare patch whose values hold numbers with a text
 * of their own: each such number in an operation's `value` becomes a string `<marker><literal>`
 * (the marker holds a random UUID: no client can write one), which every operation then treats as
 * json-patch v4 treats the raw number: add, replace and move place it, copy duplicates it, and
 * test compares it by its text (`1.0` is not `1` there, upstream's bytes.Equal of raw scalars).
 * restoreNumberTexts turns the markers of the result back into numbers and records their texts.
 */
function markNumberTexts(ops: readonly JsonValue[]): { marker: string; undo: [Record<string | number, JsonValue>, string | number, number | bigint][] } {
  const marker = `\u0000kplane-number-${randomUUID()}:`;
  const undo: [Record<string | number, JsonValue>, string | number, number | bigint][] = [];
  for (const op of ops) {
    if (op === null || typeof op !== 'object' || Array.isArray(op) || !Object.prototype.hasOwnProperty.call(op, 'value')) continue;
    const top = op['value'] as JsonValue | bigint;
    if (typeof top === 'bigint') {
      undo.push([op as Record<string | number, JsonValue>, 'value', top]);
      op['value'] = marker + top.toString();
      continue;
    }
    if (typeof top === 'number') {
      const t = numberTextAt(op, 'value', top);
      if (t !== undefined) {
        undo.push([op as Record<string | number, JsonValue>, 'value', top]);
        op['value'] = marker + t.literal;
      }
      continue;
    }
    if (top === null || typeof top !== 'object') continue;
    forEachNumberText(top, (c, key, t, v) => {
      undo.push([c as Record<string | number, JsonValue>, key, v]);
      c[key] = marker + t.literal;
    });
    forEachBigInt(top, (c, key, v) => {
      undo.push([c, key, v]);
      c[key] = marker + v.toString();
    });
  }
  return { marker, undo };
}

/** Calls `fn` for every bigint inside `root` (iteratively: values may nest deeply). */
function forEachBigInt(root: object, fn: (container: Record<string | number, JsonValue>, key: string | number, v: bigint) => void): void {
  const stack: object[] = [root];
  while (stack.length > 0) {
    const c = stack.pop() as Record<string | number, JsonValue>;
    for (const key in c) {
      const v = c[key] as JsonValue | bigint;
      if (typeof v === 'bigint') fn(c, Array.isArray(c) ? Number(key) : key, v);
      else if (v !== null && typeof v === 'object') stack.push(v);
    }
  }
}

/** A copy of `v` with its bigints as marked strings (see markNumberTexts). */
function markedCopy(v: JsonValue, marker: string): JsonValue {
  if (typeof v === 'bigint') return marker + v.toString();
  const copy = deepCopyJSON(v);
  if (copy !== null && typeof copy === 'object') forEachBigInt(copy, (c, key, b) => (c[key] = marker + b.toString()));
  return copy;
}

interface Place {
  readonly container: Record<string | number, JsonValue>;
  readonly parent: Place | undefined;
  /** This container's key in its parent's container. */
  readonly key: string | number;
}

/** The markers of markNumberTexts in `doc` become numbers again, with their texts recorded. */
function restoreNumberTexts(doc: JsonValue, marker: string): JsonValue {
  const number = (v: JsonValue): string | undefined => (typeof v === 'string' && v.startsWith(marker) ? v.slice(marker.length) : undefined);
  const rootLiteral = number(doc);
  if (rootLiteral !== undefined) return jsonNumber(rootLiteral);
  if (doc === null || typeof doc !== 'object') return doc;
  const root = doc;
  const stack: Place[] = [{ container: doc as Record<string | number, JsonValue>, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const at = stack.pop()!;
    const c = at.container;
    const visit = (key: string | number): void => {
      const v = c[key]!;
      const literal = number(v);
      if (literal !== undefined) {
        const n = jsonNumber(literal);
        c[key] = n;
        if (typeof n === 'number') setNumberText(root, c, key, literal);
      } else if (v !== null && typeof v === 'object') {
        stack.push({ container: v as Record<string | number, JsonValue>, parent: at, key });
      }
    };
    if (Array.isArray(c)) for (let i = 0; i < c.length; i++) visit(i);
    else for (const key in c) visit(key);
  }
  return doc;
}

export function applyJsonPatch(original: JsonValue, patch: string | Uint8Array): JsonValue {
  return applyJsonPatchOperations(original, decodeJsonPatch(patch));
}
