// encoding/json's json.Unmarshal into a Go struct, as the steps a hand-written or type-driven
// decoder takes: match an object's keys to fields (exactly, else case-insensitively), leave a field
// alone for null, and keep only the first type error, worded with the struct and field path the
// decoder was in (addErrorContext). Decoding goes on after an error, as Go's does.
import { compareGoStrings, foldName } from './json.js';
import { jsonKind, unknownFieldError, unmarshalTypeError } from './json-errors.js';

export interface StructDecoderOptions {
  /** Decoder.DisallowUnknownFields: a key no field matches is an error */
  readonly disallowUnknownFields?: boolean;
  /**
   * meet an object's keys sorted by their bytes, not in source order: the input went through a Go
   * map first (sigs.k8s.io/yaml converts YAML to JSON with json.Marshal)
   */
  readonly sortKeys?: boolean;
}

export class StructDecoder {
  /** the first error met, as Go reports it */
  firstError: string | undefined;
  private readonly stack: string[] = [];
  private struct = '';

  constructor(private readonly opts: StructDecoderOptions = {}) {}

  /** An error of the decode (kept only if it is the first). */
  save(message: string): void {
    this.firstError ??= message;
  }

  /** A value of JSON kind `kind` (or numberValue(...)) that does not fit Go type `goType`, here. */
  fail(kind: string, goType: string): void {
    if (this.firstError !== undefined) return;
    this.firstError = unmarshalTypeError(kind, goType, { struct: this.struct, field: this.stack.join('.') });
  }

  /**
   * Decodes an object into struct `structName` (Go type `goType`): each key matched to one of
   * `names` (the json names; exact first, else the first that folds the same) is visited with its
   * value, inside the field's context. False when there was no object (null, or a type error).
   */
  fields(value: unknown, structName: string, goType: string, names: readonly string[], visit: (field: string, v: unknown) => void): boolean {
    if (value === null || value === undefined) return false;
    if (typeof value !== 'object' || Array.isArray(value)) {
      this.fail(jsonKind(value), goType);
      return false;
    }
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (this.opts.sortKeys) keys.sort(compareGoStrings);
    const saved = this.struct;
    for (const k of keys) {
      let field = names.includes(k) ? k : undefined;
      if (field === undefined) {
        const fk = foldName(k);
        field = names.find((n) => foldName(n) === fk);
      }
      if (field === undefined) {
        if (this.opts.disallowUnknownFields) this.save(unknownFieldError(k));
        continue;
      }
      this.struct = structName;
      this.stack.push(field);
      visit(field, obj[k]);
      this.stack.pop();
      this.struct = saved;
    }
    return true;
  }

  /** A string (or a named string type `goType`); undefined for null or a type error. */
  string(v: unknown, goType = 'string'): string | undefined {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'string') {
      this.fail(jsonKind(v), goType);
      return undefined;
    }
    return v;
  }

  bool(v: unknown): boolean | undefined {
    if (v === null || v === undefined) return undefined;
    if (typeof v !== 'boolean') {
      this.fail(jsonKind(v), 'bool');
      return undefined;
    }
    return v;
  }

  /** A []string; an element that is null or of another type is "" (the error is kept). */
  strings(v: unknown): string[] | undefined {
    const items = this.slice(v, '[]string');
    if (items === undefined) return undefined;
    const out: string[] = [];
    for (const it of items) out.push(this.string(it) ?? '');
    return out;
  }

  /** An array bound for slice type `goType`; undefined for null or a type error. */
  slice(v: unknown, goType: string): unknown[] | undefined {
    if (v === null || v === undefined) return undefined;
    if (!Array.isArray(v)) {
      this.fail(jsonKind(v), goType);
      return undefined;
    }
    return v as unknown[];
  }
}
