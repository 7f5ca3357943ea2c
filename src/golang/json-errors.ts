// encoding/json's error texts (and sigs.k8s.io/json's, its fork that kube-apiserver decodes with),
// built in one place: callers say what went wrong (the JSON value, the Go type, where) and never
// spell Go's words themselves.
import { goQuote } from './strconv.js';

/** The `Value` of an UnmarshalTypeError: the JSON kind Go met (`"number 1.5"`: see numberValue). */
export type JSONKind = 'null' | 'string' | 'number' | 'bool' | 'array' | 'object';

/** A decoded JSON value's kind as the decoder names it (a bigint is a number). */
export function jsonKind(v: unknown): JSONKind {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'number' || typeof v === 'bigint') return 'number';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

/**
 * The `Value` Go reports for a number that does not fit the integer or float type it was decoded
 * into: the kind with the literal as written (strconv.ParseInt of it failed).
 */
export function numberValue(literal: string): string {
  return `number ${literal}`;
}

/**
 * Where the decoder was, as its addErrorContext fills in an UnmarshalTypeError: the innermost
 * struct holding the field (`LeaseSpec`, possibly '' for an unnamed struct) and the JSON names of
 * the struct fields from the root joined by "." (`spec.holderIdentity`). Absent at the root.
 */
export interface StructField {
  readonly struct: string;
  readonly field: string;
}

/**
 * json.UnmarshalTypeError.Error(): `value` (a JSONKind, or numberValue(...)) could not be stored in
 * Go type `goType` (reflect's String(): `string`, `v1.ObjectMeta`, `map[string]interface {}`).
 * With a struct or a field it names them (`Go struct field S.f`), else the value (`Go value`).
 */
export function unmarshalTypeError(value: string, goType: string, at?: StructField): string {
  if (at !== undefined && (at.struct !== '' || at.field !== '')) {
    return `json: cannot unmarshal ${value} into Go struct field ${at.struct}.${at.field} of type ${goType}`;
  }
  return `json: cannot unmarshal ${value} into Go value of type ${goType}`;
}

/** unmarshalTypeError for the decoded JSON value `v` (its kind). */
export function cannotUnmarshal(v: unknown, goType: string, at?: StructField): string {
  return unmarshalTypeError(jsonKind(v), goType, at);
}

/** encoding/json's Decoder.DisallowUnknownFields error for an object key no field matches. */
export function unknownFieldError(key: string): string {
  return `json: unknown field ${goQuote(key)}`;
}

/**
 * sigs.k8s.io/json's strict-mode errors (collected, then joined by runtime.NewStrictDecodingError):
 * a key no field matches, or a key given twice, each named by its dotted path (`spec.ports[0].name`).
 */
export function strictUnknownField(path: string): string {
  return `unknown field ${JSON.stringify(path)}`;
}
export function strictDuplicateField(path: string): string {
  return `duplicate field ${JSON.stringify(path)}`;
}

/** json.Unmarshal of input that stops inside a value (io.ErrUnexpectedEOF, as Unmarshal words it). */
export const UNEXPECTED_END_OF_JSON = 'unexpected end of JSON input';
