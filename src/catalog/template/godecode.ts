// Reading a template the way opm does: sigs.k8s.io/yaml's Unmarshal/UnmarshalStrict into a Go struct.
// That is three steps, each with behaviour users see:
//  1. go-yaml v2 parses the first YAML document (YAML 1.1 scalars: `yes`/`on`/`y` are booleans,
//     `0x10` and `010` are integers; strict mode rejects duplicate keys, listing each by line);
//  2. the value becomes JSON, guided by the target struct: a scalar bound for a string field is
//     turned into that string (`image: 1.0` is "1"), and map keys end up sorted by their bytes;
//  3. encoding/json decodes it: keys match fields exactly or case-insensitively (`Schema`,
//     `GENERATEMAJORCHANNELS`), null leaves a field alone, a type mismatch or (strict) an unknown
//     field is an error, and only the first error, in sorted-key order, is reported.
// Messages are Go's: "error converting YAML to JSON: ...", "error unmarshaling JSON: while decoding
// JSON: json: unknown field \"x\"", "json: cannot unmarshal string into Go struct field ...".

import { StructDecoder } from '../../golang/json-struct.js';
import { readGoYAML, toJSONValue } from '../../golang/yaml-read.js';

/** The Go type a template field decodes into (only the kinds templates use). */
export type GoType =
  | { readonly kind: 'string'; readonly goName: string }
  | { readonly kind: 'bool' }
  | { readonly kind: 'struct'; readonly goName: string; readonly short: string; readonly fields: readonly GoField[] }
  | { readonly kind: 'slice'; readonly goName: string; readonly elem: GoType };

export interface GoField {
  /** the json tag name */
  readonly name: string;
  readonly type: GoType;
}

export class GoDecodeError extends Error {
  override readonly name = 'GoDecodeError';
}

/**
 * sigs.k8s.io/yaml Unmarshal (strictYAML false, as opm v1.26 used with DisallowUnknownFields) or
 * UnmarshalStrict (strictYAML true, as opm ≥ v1.27 does). Returns the decoded object: fields by
 * their json names, present only when the input set them to something other than null.
 */
export function unmarshalYAMLInto(
  text: string,
  target: GoType,
  opts: { strictYAML: boolean; disallowUnknownFields: boolean /** false: plain YAMLToJSON, not guided by the target */; guided?: boolean },
): Record<string, unknown> | undefined {
  let json: unknown;
  try {
    const y = readGoYAML(text, { strict: opts.strictYAML });
    json = toJSONValue(y, { target: opts.guided === false ? undefined : target, int: exactInt });
  } catch (err) {
    throw new GoDecodeError(`error converting YAML to JSON: ${(err as Error).message}`);
  }
  // json.Marshal wrote the map keys sorted, so the decoder meets them in that order
  const d = new Decoder(opts.disallowUnknownFields, true);
  const out = d.decode(json, target, undefined);
  if (d.firstError !== undefined) throw new GoDecodeError(`error unmarshaling JSON: while decoding JSON: ${d.firstError}`);
  return out as Record<string, unknown> | undefined;
}

/** json.Unmarshal of an already parsed JSON value (keys met in their source order). */
export function decodeJSONInto(value: unknown, target: GoType, opts: { disallowUnknownFields?: boolean } = {}): Record<string, unknown> | undefined {
  const d = new Decoder(opts.disallowUnknownFields ?? false, false);
  const out = d.decode(value, target, undefined);
  if (d.firstError !== undefined) throw new GoDecodeError(d.firstError);
  return out as Record<string, unknown> | undefined;
}

/** An int as Go's decoder reads it back into the template's fields: exact. */
function exactInt(v: bigint): number | bigint {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}

// ---- step 3: encoding/json -------------------------------------------------------------------

/** json.Unmarshal into a template struct, by its GoType. */
class Decoder {
  private readonly d: StructDecoder;

  constructor(disallowUnknownFields: boolean, sortKeys: boolean) {
    this.d = new StructDecoder({ disallowUnknownFields, sortKeys });
  }

  get firstError(): string | undefined {
    return this.d.firstError;
  }

  /** Decodes v into a value of type t that may already hold `existing` (Go decodes in place). */
  decode(v: unknown, t: GoType, existing: unknown): unknown {
    if (v === null) return existing; // null leaves the target alone
    switch (t.kind) {
      case 'string':
        return this.d.string(v, t.goName) ?? existing;
      case 'bool':
        return this.d.bool(v) ?? existing;
      case 'slice': {
        const items = this.d.slice(v, t.goName);
        if (items === undefined) return existing;
        const prev = Array.isArray(existing) ? existing : [];
        return items.map((e, i) => this.decode(e, t.elem, i < prev.length ? prev[i] : zero(t.elem)));
      }
      case 'struct': {
        const out: Record<string, unknown> = { ...((existing as Record<string, unknown> | undefined) ?? {}) };
        const decoded = this.d.fields(
          v,
          t.short,
          t.goName,
          t.fields.map((f) => f.name),
          (name, fv) => {
            const f = t.fields.find((x) => x.name === name)!;
            const r = this.decode(fv, f.type, out[f.name]);
            if (r !== undefined) out[f.name] = r;
          },
        );
        return decoded ? out : existing;
      }
    }
  }
}

function zero(t: GoType): unknown {
  switch (t.kind) {
    case 'string':
      return '';
    case 'bool':
      return false;
    case 'slice':
      return undefined;
    case 'struct':
      return {};
  }
}
