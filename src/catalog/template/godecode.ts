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

import { compareGoStrings, findField } from '../../golang/json.js';
import { cannotUnmarshal, unknownFieldError } from '../../golang/json-errors.js';
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
  opts: { strictYAML: boolean; disallowUnknownFields: boolean; /** false: plain YAMLToJSON, not guided by the target */ guided?: boolean },
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

/** A decoded JSON value (an int beyond 2^53 as a bigint). */
type JValue = null | string | boolean | number | bigint | JValue[] | { [k: string]: JValue };

/** An int as Go's decoder reads it back into the template's fields: exact. */
function exactInt(v: bigint): number | bigint {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
}

// ---- step 3: encoding/json -------------------------------------------------------------------

class Decoder {
  firstError: string | undefined;
  private readonly stack: string[] = [];
  private struct: string | undefined;

  constructor(
    private readonly disallowUnknown: boolean,
    private readonly sortKeys: boolean,
  ) {}

  private save(msg: string): void {
    if (this.firstError === undefined) this.firstError = msg;
  }

  private typeError(v: JValue, t: GoType): void {
    const goName = t.kind === 'bool' ? 'bool' : t.goName;
    this.save(cannotUnmarshal(v, goName, { struct: this.struct ?? '', field: this.stack.join('.') }));
  }

  /** Decodes v into a value of type t that may already hold `existing` (Go decodes in place). */
  decode(v: unknown, t: GoType, existing: unknown): unknown {
    const jv = v as JValue;
    if (jv === null) return existing; // null leaves the target alone
    switch (t.kind) {
      case 'string':
        if (typeof jv === 'string') return jv;
        this.typeError(jv, t);
        return existing;
      case 'bool':
        if (typeof jv === 'boolean') return jv;
        this.typeError(jv, t);
        return existing;
      case 'slice': {
        if (!Array.isArray(jv)) {
          this.typeError(jv, t);
          return existing;
        }
        const prev = Array.isArray(existing) ? existing : [];
        return jv.map((e, i) => this.decode(e, t.elem, i < prev.length ? prev[i] : zero(t.elem)));
      }
      case 'struct': {
        if (typeof jv !== 'object' || Array.isArray(jv)) {
          this.typeError(jv, t);
          return existing;
        }
        const out: Record<string, unknown> = { ...((existing as Record<string, unknown> | undefined) ?? {}) };
        const keys = Object.keys(jv);
        if (this.sortKeys) keys.sort(compareGoStrings);
        for (const key of keys) {
          const f = findField(t.fields, key);
          if (f === undefined) {
            if (this.disallowUnknown) this.save(unknownFieldError(key));
            continue;
          }
          const depth = this.stack.length;
          const savedStruct = this.struct;
          this.stack.push(f.name);
          this.struct = t.short;
          const r = this.decode(jv[key]!, f.type, out[f.name]);
          if (r !== undefined) out[f.name] = r;
          this.stack.length = depth;
          this.struct = savedStruct;
        }
        return out;
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
