// fieldValidation's texts, worded and ordered as kube-apiserver gives them. Upstream collects them
// from different decoders depending on the body and the kind, and test/integration/apiserver/
// field_validation_test.go pins each order:
// - a typed kind's JSON body: sigs.k8s.io/json's strict decoder, one pass in document order, so
//   unknown and duplicate fields interleave; a field both unknown and duplicated (or a duplicate
//   inside an unknown field, which the decoder skips) is reported as unknown only;
// - a YAML body: sigs.k8s.io/yaml's strict YAMLToJSON first, one go-yaml error listing every key
//   set twice by line ("yaml: unmarshal errors:\n  line 5: key "name" already set in map"), then
//   the unknown fields of the converted JSON, whose keys Go's map marshalling sorted;
// - a merge or strategic merge patch: the patch's duplicate fields, then the unknown fields of the
//   patched object (marshalled from a map, so keys sorted again);
// - a custom resource: the duplicates first, then the unknown fields in the order its decoder
//   found them (root metadata, pruned fields sorted, embedded objects' metadata).
// Under Strict they are one error (`strict decoding error: a, b`); under Warn one warning each, the
// go-yaml error split back into its lines.
import { badRequest } from '../apimachinery/errors.js';
import { keyOccurrences } from '../golang/json-decode.js';

/** What a decoded body (or a patch) knows about its duplicate fields. */
export interface DuplicateFields {
  /** Dotted paths of keys set twice, in document order. */
  readonly duplicateFields: readonly string[];
  /** go-yaml's `line N: key "k" already set in map` texts, for a YAML body with duplicates. */
  readonly yamlDuplicates?: readonly string[];
  /** Problems of the patch itself, said first (a JSON patch's operations: `json patch unknown field "[0].foo"`). */
  readonly patchProblems?: readonly string[];
  /** A create/update JSON body (not a patch): a typed kind's problems go in document order. */
  readonly jsonBody?: boolean;
  /** That body's text when it has duplicate keys, read again to place them among unknown fields. */
  readonly jsonText?: string;
}

export interface StrictFieldsInput extends DuplicateFields {
  /** Paths of the fields the kind does not declare (already dropped from the object). */
  readonly unknown: readonly string[];
  /** A custom resource: its decoder's order (see above), not a typed decoder's. */
  readonly customResource: boolean;
}

const unknownText = (p: string): string => `unknown field "${p}"`;
const duplicateText = (p: string): string => `duplicate field "${p}"`;

/**
 * The fieldValidation verdict: nothing (Ignore, or no problem), the warnings (Warn, the default),
 * or a thrown 400 (Strict).
 */
export function strictFieldProblems(input: StrictFieldsInput, mode: string): string[] {
  if (mode === 'Ignore') return [];
  const { unknown, duplicateFields, yamlDuplicates } = input;
  const patchProblems = input.patchProblems ?? [];
  if (!unknown.length && !duplicateFields.length && !patchProblems.length) return [];
  // A YAML body's duplicates are one go-yaml error; anything else's one text per field.
  const yamlError = yamlDuplicates?.length ? `yaml: unmarshal errors:\n${yamlDuplicates.map((d) => `  ${d}`).join('\n')}` : undefined;
  let problems: string[];
  let unknownTexts: string[];
  if (input.customResource) {
    unknownTexts = unknown.map(unknownText);
    problems = yamlError ? [yamlError, ...unknownTexts] : [...duplicateFields.map(duplicateText), ...unknownTexts];
  } else if (yamlError) {
    unknownTexts = sortedByKeys(unknown).map(unknownText);
    problems = [yamlError, ...unknownTexts];
  } else if (input.jsonBody) {
    // Without duplicates the unknown fields are already in document order (the pruning walk's).
    problems = input.jsonText !== undefined ? inDocumentOrder(input.jsonText, unknown, duplicateFields) : unknown.map(unknownText);
    unknownTexts = [];
  } else {
    unknownTexts = sortedByKeys(unknown).map(unknownText);
    problems = [...duplicateFields.map(duplicateText), ...unknownTexts];
  }
  problems = [...patchProblems, ...problems];
  if (!problems.length) return [];
  if (mode === 'Strict') throw badRequest(`strict decoding error: ${problems.join(', ')}`);
  return yamlError ? [...patchProblems, ...yamlDuplicates!, ...unknownTexts] : problems;
}

/** A typed JSON body's problems as its one-pass decoder meets them (see the header). */
function inDocumentOrder(text: string, unknown: readonly string[], duplicates: readonly string[]): string[] {
  const isUnknown = new Set(unknown);
  const under = (p: string): boolean => {
    for (const u of unknown) if (p === u || p.startsWith(`${u}.`) || p.startsWith(`${u}[`)) return true;
    return false;
  };
  const out: string[] = [];
  const reported = new Set<string>();
  let dups = 0;
  for (const k of keyOccurrences(text)) {
    if (k.repeated) {
      dups++;
      if (!under(k.path)) out.push(duplicateText(k.path));
    } else if (isUnknown.has(k.path) && !reported.has(k.path)) {
      reported.add(k.path);
      out.push(unknownText(k.path));
    }
  }
  // Paths the text walk did not meet (it always should): said at the end rather than lost.
  for (const u of unknown) if (!reported.has(u)) out.push(unknownText(u));
  if (dups < duplicates.length) for (const d of duplicates.slice(dups)) out.push(duplicateText(d));
  return out;
}

/** One step of a dotted path: a key, or an array index. */
function segments(path: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return out;
}

/**
 * Paths in the order a walk of an object with sorted keys meets them (Go marshals maps with sorted
 * keys): key by key, byte-wise; array elements by index.
 */
export function sortedByKeys(paths: readonly string[]): string[] {
  if (paths.length < 2) return [...paths];
  const split = new Map(paths.map((p) => [p, segments(p)]));
  return [...paths].sort((a, b) => {
    const x = split.get(a)!;
    const y = split.get(b)!;
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const p = x[i]!;
      const q = y[i]!;
      if (p === q) continue;
      if (typeof p === 'number' && typeof q === 'number') return p - q;
      const s = String(p);
      const t = String(q);
      return s < t ? -1 : s > t ? 1 : 0;
    }
    return x.length - y.length;
  });
}
