// Go decode errors for built-in kinds. kube-apiserver decodes a request body into the typed Go
// struct with sigs.k8s.io/json (a fork of encoding/json synced with Go 1.23, case-sensitive), so a
// field of the wrong JSON type fails the decode with a 400 such as
//   Lease in version "v1" cannot be handled as a Lease: json: cannot unmarshal number into Go
//   struct field LeaseSpec.spec.holderIdentity of type string
// goTypeError reproduces the message from kplane's OpenAPI v2 definitions of the kind, by walking
// the value along the schema (no allocation unless an error is reported).
//
// What encoding/json does, and this module mirrors:
// - Type mismatches are "soft": the decoder records the FIRST one (d.savedError) and carries on.
//   The message is `json: cannot unmarshal <kind> into Go struct field <Struct>.<path> of type
//   <Type>`, where Struct is the innermost struct holding the field, path the JSON names of the
//   struct fields from the root joined by "." (no array indices, no map keys) and Type the Go
//   type of the value decoded at that point (a slice or map element type inside them; pointers
//   are followed). At the root (nothing entered yet) it says `into Go value of type v1.Lease`.
// - <kind> is number, string, bool, array or object; `number <literal>` when a number does not fit
//   an integer type (strconv.ParseInt of the literal fails: a fraction, an exponent, overflow).
// - null decodes into anything (the zero value).
// - Types with their own UnmarshalJSON (metav1.Time and MicroTime, resource.Quantity,
//   intstr.IntOrString) return "hard" errors: they abort the decode at once and win over an
//   earlier soft error. Their messages come from time.Parse (Go 1.24), ParseQuantity, or the
//   standard library's json.Unmarshal into a string / int32; sigs.k8s.io/json aliases the
//   standard UnmarshalTypeError, so the last gets the field context too ("... into Go struct
//   field LeaseSpec.spec.renewTime of type string").
//   runtime.RawExtension, metav1.FieldsV1 and apiextensions JSON accept any value.
// - apiextensions' JSONSchemaPropsOrBool, JSONSchemaPropsOrArray and JSONSchemaPropsOrStringArray
//   (marshal.go) decode by the first byte: `{` with a nested json.Unmarshal into JSONSchemaProps,
//   `[` into []JSONSchemaProps / []string, `true`/`false` for OrBool; anything else is ignored by
//   the two Or*Array types and "boolean or JSON schema expected" for OrBool. The nested decode's
//   first error (soft or hard) becomes a hard error of the outer one, and when it is an
//   UnmarshalTypeError the outer decoder's addErrorContext overwrites its struct and field with its
//   own: every type error inside names the outermost such field (`JSONSchemaProps.spec.versions.
//   schema.openAPIV3Schema.properties.items`) and the innermost Go type.
// - Unknown fields are ignored (fieldValidation is handled elsewhere); matching is case-sensitive.
//
// Numbers: the value is the output of JSON.parse, so a number's literal is what parseJson recorded
// for it (json.ts, numberTextAt: `1.0`, `1e3`, long integers), or else String(n), which gives
// back every other literal. An integer field refuses a fraction or an exponent and an overflow by
// the literal, as strconv.ParseInt does. Values built in code or by a patch have no record: their
// numbers are taken as String(n) writes them. bigint values (from a lossless parser) are exact
// integer literals. Duplicate keys (JSON.parse keeps the last) and integer-like map keys (JS orders
// them first) can change which error is the first.

import { isStackOverflow } from './errors.js';
import { base64ErrorOffset, corruptInputError } from '../golang/base64.js';
import { goTrimSpace } from '../golang/strings.js';
import { parseTimeError } from '../golang/time.js';
import { jsonKind, numberValue, unmarshalTypeError, type StructField } from '../golang/json-errors.js';
import { hasNumberTexts, numberTextAt, type NumberText } from './json.js';
import { ERR_QUANTITY_FORMAT, parseQuantityError } from './quantity.js';
import type { Definitions, OpenAPISchema } from './schema.js';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const AX = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.';
const AX_BETA = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1beta1.';
const REF_PREFIX = '#/definitions/';

// ---------------------------------------------------------------------------------------------
// Go types the OpenAPI schema does not spell out: named string types (v1.NamespacePhase,
// types.UID, ...) and named maps. Keyed by definition, then JSON field name; the value is the
// reflect type string of the field (pointers dropped, as encoding/json reports the element). A
// slice or map type string also names its element (`[]v1.FinalizerName`). Each kind declares its
// own (next to its OpenAPI definitions); a control plane's Scheme holds those of what it serves.

export type GoFieldTypes = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** Looked up by definition name on the walk (a control plane's Scheme.goFieldTypes). */
export type GoFieldTypeTable = ReadonlyMap<string, Readonly<Record<string, string>>>;

/** The meta/v1 types every kind embeds. */
export const META_GO_FIELD_TYPES: GoFieldTypes = {
  [META + 'ObjectMeta']: { uid: 'types.UID' },
  [META + 'OwnerReference']: { uid: 'types.UID' },
  [META + 'ManagedFieldsEntry']: { operation: 'v1.ManagedFieldsOperationType' },
  [META + 'StatusDetails']: { uid: 'types.UID' },
  [META + 'StatusCause']: { reason: 'v1.CauseType' },
  [META + 'Status']: { reason: 'v1.StatusReason' },
  [META + 'LabelSelectorRequirement']: { operator: 'v1.LabelSelectorOperator' },
  [META + 'DeleteOptions']: { propagationPolicy: 'v1.DeletionPropagation' },
  [META + 'Preconditions']: { uid: 'types.UID' },
};

/** A table of `parts` merged in order, for callers that check a kind outside a control plane. */
export function goFieldTypeTable(...parts: GoFieldTypes[]): GoFieldTypeTable {
  const out = new Map<string, Readonly<Record<string, string>>>();
  for (const p of parts) for (const [name, fields] of Object.entries(p)) out.set(name, { ...out.get(name), ...fields });
  return out;
}

// ---------------------------------------------------------------------------------------------
// Schema classification

const enum K {
  Any, // interface{}, RawExtension, FieldsV1, apiextensions JSON: anything decodes
  Struct,
  Map,
  Slice,
  String,
  Bytes,
  Bool,
  Int,
  Float,
  Time,
  MicroTime,
  IntOrString,
  Quantity,
  /** apiextensions JSON: raw bytes, anything decodes (kplane checks its integers, see the module comment) */
  RawJSON,
  /** apiextensions JSONSchemaPropsOrBool, JSONSchemaPropsOrArray, JSONSchemaPropsOrStringArray */
  PropsOrBool,
  PropsOrArray,
  PropsOrStringArray,
}

const SPECIAL: Record<string, K> = {
  [META + 'Time']: K.Time,
  [META + 'MicroTime']: K.MicroTime,
  [META + 'FieldsV1']: K.Any,
  'io.k8s.apimachinery.pkg.runtime.RawExtension': K.Any,
  'io.k8s.apimachinery.pkg.api.resource.Quantity': K.Quantity,
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': K.IntOrString,
  [AX + 'JSON']: K.RawJSON,
  [AX_BETA + 'JSON']: K.RawJSON,
  [AX + 'JSONSchemaPropsOrBool']: K.PropsOrBool,
  [AX_BETA + 'JSONSchemaPropsOrBool']: K.PropsOrBool,
  [AX + 'JSONSchemaPropsOrArray']: K.PropsOrArray,
  [AX_BETA + 'JSONSchemaPropsOrArray']: K.PropsOrArray,
  [AX + 'JSONSchemaPropsOrStringArray']: K.PropsOrStringArray,
  [AX_BETA + 'JSONSchemaPropsOrStringArray']: K.PropsOrStringArray,
};

/** Go reflect names of the special kinds, for slice/map type strings. */
const SPECIAL_GO_TYPE: Record<string, string> = {
  [META + 'Time']: 'v1.Time',
  [META + 'MicroTime']: 'v1.MicroTime',
  [META + 'FieldsV1']: 'v1.FieldsV1',
  'io.k8s.apimachinery.pkg.runtime.RawExtension': 'runtime.RawExtension',
  'io.k8s.apimachinery.pkg.api.resource.Quantity': 'resource.Quantity',
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': 'intstr.IntOrString',
  [AX + 'JSON']: 'v1.JSON',
  [AX_BETA + 'JSON']: 'v1beta1.JSON',
  [AX + 'JSONSchemaPropsOrBool']: 'v1.JSONSchemaPropsOrBool',
  [AX_BETA + 'JSONSchemaPropsOrBool']: 'v1beta1.JSONSchemaPropsOrBool',
  [AX + 'JSONSchemaPropsOrArray']: 'v1.JSONSchemaPropsOrArray',
  [AX_BETA + 'JSONSchemaPropsOrArray']: 'v1beta1.JSONSchemaPropsOrArray',
  [AX + 'JSONSchemaPropsOrStringArray']: 'v1.JSONSchemaPropsOrStringArray',
  [AX_BETA + 'JSONSchemaPropsOrStringArray']: 'v1beta1.JSONSchemaPropsOrStringArray',
};

interface Target {
  readonly kind: K;
  readonly schema: OpenAPISchema | undefined;
  /** definition name when reached through a $ref (named Go type) */
  readonly name: string | undefined;
  /** a struct's Go name, which the errors of its fields name ('' when unnamed) */
  readonly struct: string;
  /** typeof of the values that decode into this kind with nothing to check (strings, bools) */
  readonly plain: 'string' | 'boolean' | undefined;
  /** the one $ref followed, and what it named then: a remembered Target holds while both agree */
  readonly via: string | undefined;
  readonly resolved: OpenAPISchema | undefined;
}

const ANY: Target = { kind: K.Any, schema: undefined, name: undefined, struct: '', plain: undefined, via: undefined, resolved: undefined };

function refName(ref: string): string {
  return ref.startsWith(REF_PREFIX) ? ref.slice(REF_PREFIX.length) : ref.replace(/^#\/components\/schemas\//, '');
}

/**
 * How Go decodes into `schema`, remembered per schema node (the walk is on every write of the
 * typed kinds; the definitions change in place, so an entry that followed a $ref is checked against
 * what the name resolves to now, and chains of $refs are not remembered).
 */
const CLASSIFIED = new WeakMap<OpenAPISchema, Target>();

function classified(schema: OpenAPISchema | undefined, defs: Definitions): Target {
  if (schema === undefined) return ANY;
  const hit = CLASSIFIED.get(schema);
  if (hit !== undefined && (hit.via === undefined || defs[hit.via] === hit.resolved)) return hit;
  const t = classify(schema, defs);
  if (t.via === undefined || schema.$ref === REF_PREFIX + t.via) CLASSIFIED.set(schema, t);
  return t;
}

/** Resolves `schema` and says how Go decodes into it. */
function classify(schema: OpenAPISchema, defs: Definitions): Target {
  let s: OpenAPISchema | undefined = schema;
  let name: string | undefined;
  for (let hops = 0; s?.$ref !== undefined && hops < 32; hops++) {
    name = refName(s.$ref);
    const special = SPECIAL[name];
    s = defs[name];
    if (special !== undefined) return target(special, s, name);
  }
  if (s === undefined) return target(K.Any, s, name);
  if (s['x-kubernetes-int-or-string'] === true || s.format === 'int-or-string') return target(K.IntOrString, s, name);
  switch (s.type) {
    case 'object':
      if (s.properties !== undefined) return target(K.Struct, s, name);
      if (typeof s.additionalProperties === 'object') return target(K.Map, s, name);
      if (name !== undefined && s['x-kubernetes-preserve-unknown-fields'] !== true) return target(K.Struct, s, name);
      return target(K.Map, s, name); // map[string]interface {}
    case 'array':
      return target(K.Slice, s, name);
    case 'string':
      return target(s.format === 'byte' ? K.Bytes : s.format === 'date-time' && name !== undefined ? K.Time : K.String, s, name);
    case 'integer':
      return target(K.Int, s, name);
    case 'number':
      return target(K.Float, s, name);
    case 'boolean':
      return target(K.Bool, s, name);
    default:
      return target(K.Any, s, name);
  }
}

function target(kind: K, schema: OpenAPISchema | undefined, name: string | undefined): Target {
  return {
    kind,
    schema,
    name,
    struct: kind === K.Struct && name !== undefined ? name.slice(name.lastIndexOf('.') + 1) : '',
    plain: kind === K.String ? 'string' : kind === K.Bool ? 'boolean' : undefined,
    via: name,
    resolved: schema,
  };
}

/** Go's package name for a definition: the segment before the type name (`v1`, `resource`). */
function goNamed(name: string): string {
  const special = SPECIAL_GO_TYPE[name];
  if (special !== undefined) return special;
  const parts = name.split('.');
  const type = parts[parts.length - 1]!;
  return parts.length > 1 ? `${parts[parts.length - 2]}.${type}` : type;
}

/** The reflect type string of `schema` as Go would print it in an UnmarshalTypeError. */
function goTypeString(schema: OpenAPISchema | undefined, defs: Definitions): string {
  const t = classified(schema, defs);
  if (t.name !== undefined && (t.kind === K.Struct || SPECIAL_GO_TYPE[t.name] !== undefined)) return goNamed(t.name);
  const s = t.schema;
  switch (t.kind) {
    case K.Struct:
      return t.name !== undefined ? goNamed(t.name) : 'struct {}';
    case K.Map:
      return `map[string]${typeof s?.additionalProperties === 'object' ? goTypeString(s.additionalProperties, defs) : 'interface {}'}`;
    case K.Slice:
      return `[]${goTypeString(s?.items, defs)}`;
    case K.Bytes:
      return '[]uint8';
    case K.Bool:
      return 'bool';
    case K.Int:
      return s?.format === 'int32' ? 'int32' : 'int64';
    case K.Float:
      return s?.format === 'float' ? 'float32' : 'float64';
    case K.String:
      return 'string';
    case K.Time:
      return 'v1.Time';
    case K.MicroTime:
      return 'v1.MicroTime';
    case K.IntOrString:
      return 'intstr.IntOrString';
    case K.Quantity:
      return 'resource.Quantity';
    default:
      return 'interface {}';
  }
}

/** The element type named by a slice or map type string (`[]v1.X` → `v1.X`). */
function elemOf(goType: string | undefined): string | undefined {
  if (goType === undefined) return undefined;
  if (goType.startsWith('[]')) return goType.slice(2);
  if (goType.startsWith('map[')) {
    let depth = 0;
    for (let i = 3; i < goType.length; i++) {
      if (goType[i] === '[') depth++;
      else if (goType[i] === ']' && --depth === 0) return goType.slice(i + 1);
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// The walk

/** The number's literal as a client would have written it (see the module comment). */
function numberLiteral(v: number | bigint): string {
  if (typeof v === 'bigint') return v.toString();
  return Object.is(v, -0) ? '-0' : String(v);
}

class HardError {
  constructor(readonly message: string) {}
}

interface State {
  readonly defs: Definitions;
  readonly fieldTypes: GoFieldTypeTable;
  /** JSON names of the struct fields entered, from the root */
  readonly path: string[];
  first: string | undefined;
  /** parseJson recorded number texts in this body (json.ts numberTextAt) */
  readonly texts: boolean;
  /**
   * Inside a value decoded by a nested json.Unmarshal (JSONSchemaPropsOr*): the outermost decoder's
   * context, which type errors end up with (both names '' at the root).
   */
  frozen: StructField | undefined;
}

/** UnmarshalTypeError.Error() with the decoder's context (addErrorContext) at this point. */
function typeError(st: State, struct: string | undefined, what: string, goType: string): string {
  return unmarshalTypeError(what, goType, st.frozen ?? fieldAt(st, struct));
}

/** Where the decoder is: undefined at the root (no struct entered yet). */
function fieldAt(st: State, struct: string | undefined): StructField | undefined {
  return struct === undefined ? undefined : { struct, field: st.path.join('.') };
}

function soft(st: State, struct: string | undefined, value: unknown, goType: string, valueText?: string): void {
  if (st.first === undefined) st.first = typeError(st, struct, valueText ?? jsonKind(value), goType);
}

/**
 * The message of the first error Go's decoder (sigs.k8s.io/json, as kube-apiserver uses it) reports
 * decoding `value` into the Go type of definition `definitionName`, or undefined when it decodes;
 * `fieldTypes` holds the Go types the definitions lose (a Scheme's goFieldTypes).
 */
export function goTypeError(value: unknown, definitionName: string, definitions: Definitions, fieldTypes: GoFieldTypeTable): string | undefined {
  const st: State = { defs: definitions, fieldTypes, path: [], first: undefined, texts: hasNumberTexts(value), frozen: undefined };
  try {
    const root = refNode(definitionName);
    if (value !== null && value !== undefined) decode(st, value, root, classified(root, definitions), undefined, undefined, undefined);
  } catch (e) {
    if (e instanceof HardError) return e.message;
    // The walk recurses along the value (a CRD schema nests JSONSchemaProps in JSONSchemaProps, each
    // level a few frames): a body nested past V8's stack gets no verdict here rather than a 500.
    if (isStackOverflow(e)) return st.first;
    throw e;
  }
  return st.first;
}

/** One `$ref` node per definition (so that its Target is remembered): roots and nested decodes. */
const REF_NODES = new Map<string, OpenAPISchema>();

function refNode(definitionName: string): OpenAPISchema {
  let node = REF_NODES.get(definitionName);
  if (node === undefined) REF_NODES.set(definitionName, (node = { $ref: REF_PREFIX + definitionName }));
  return node;
}

/** `[]<definition>` and `[]string` schema nodes for the nested decodes of JSONSchemaPropsOr*Array. */
const SLICE_NODES = new Map<string, OpenAPISchema>();

function sliceNode(items: OpenAPISchema, key: string): OpenAPISchema {
  let node = SLICE_NODES.get(key);
  if (node === undefined) SLICE_NODES.set(key, (node = { type: 'array', items }));
  return node;
}

const STRING_NODE: OpenAPISchema = { type: 'string' };

/**
 * Decodes `v` (not null) into the type of `schema`, classified as `t`. `struct` is the innermost
 * struct whose field is being decoded (undefined at the root), `goType` the field's Go type when
 * the schema cannot tell it, `text` how a number `v` was written when parseJson recorded it. A
 * string or bool that needs no check is not passed down.
 */
function decode(
  st: State,
  v: unknown,
  schema: OpenAPISchema | undefined,
  t: Target,
  struct: string | undefined,
  goType: string | undefined,
  text: NumberText | undefined,
): void {
  const s = t.schema;
  switch (t.kind) {
    case K.Any:
      return;
    case K.Struct: {
      if (typeof v !== 'object' || Array.isArray(v)) {
        soft(st, struct, v, goType ?? goTypeString(schema, st.defs));
        return;
      }
      const props = s?.properties;
      if (props === undefined) return;
      const overrides = t.name !== undefined ? st.fieldTypes.get(t.name) : undefined;
      const obj = v as Record<string, unknown>;
      for (const key in obj) {
        if (!Object.prototype.hasOwnProperty.call(props, key)) continue;
        const fv = obj[key];
        if (fv === null || fv === undefined) continue;
        const fs = props[key];
        const ft = classified(fs, st.defs);
        if (typeof fv === ft.plain) continue;
        st.path.push(key);
        decode(st, fv, fs, ft, t.struct, overrides?.[key], st.texts && typeof fv === 'number' ? numberTextAt(obj, key, fv) : undefined);
        st.path.pop();
      }
      return;
    }
    case K.Map: {
      if (typeof v !== 'object' || Array.isArray(v)) {
        soft(st, struct, v, goType ?? goTypeString(schema, st.defs));
        return;
      }
      const ap = s?.additionalProperties;
      if (typeof ap !== 'object') return; // map[string]interface {}
      const et = classified(ap, st.defs);
      const obj = v as Record<string, unknown>;
      for (const key in obj) {
        const ev = obj[key];
        if (ev !== null && ev !== undefined && typeof ev !== et.plain)
          decode(st, ev, ap, et, struct, elemOf(goType), st.texts && typeof ev === 'number' ? numberTextAt(obj, key, ev) : undefined);
      }
      return;
    }
    case K.Slice: {
      if (!Array.isArray(v)) {
        soft(st, struct, v, goType ?? goTypeString(schema, st.defs));
        return;
      }
      const items = s?.items;
      const et = classified(items, st.defs);
      for (let i = 0; i < v.length; i++) {
        const ev: unknown = v[i];
        if (ev !== null && ev !== undefined && typeof ev !== et.plain)
          decode(st, ev, items, et, struct, elemOf(goType), st.texts && typeof ev === 'number' ? numberTextAt(v, i, ev) : undefined);
      }
      return;
    }
    case K.String:
    case K.Bool:
      if (typeof v !== (t.kind === K.String ? 'string' : 'boolean')) soft(st, struct, v, goType ?? goTypeString(schema, st.defs));
      return;
    case K.Bytes:
      decodeBytes(st, v, struct, goType ?? '[]uint8');
      return;
    case K.Int:
      if (typeof v === 'number' || typeof v === 'bigint') {
        const type = goType ?? (s?.format === 'int32' ? 'int32' : 'int64');
        if (!(text !== undefined ? literalFitsInt(text.literal, type) : fitsInt(v, type)))
          soft(st, struct, v, type, numberValue(text?.literal ?? numberLiteral(v)));
      } else {
        soft(st, struct, v, goType ?? (s?.format === 'int32' ? 'int32' : 'int64'));
      }
      return;
    case K.Float:
      if (typeof v === 'number' || typeof v === 'bigint') {
        // strconv.ParseFloat fails only on overflow here (the syntax is valid); a double rounds the
        // literal to infinity exactly when Go's does (float32: rounded twice, which can differ in
        // the last place only).
        const n = Number(v);
        const f32 = s?.format === 'float';
        if (!Number.isFinite(n) || (f32 && !Number.isFinite(Math.fround(n))))
          soft(st, struct, v, goType ?? (f32 ? 'float32' : 'float64'), numberValue(text?.literal ?? numberLiteral(v)));
      } else {
        soft(st, struct, v, goType ?? (s?.format === 'float' ? 'float32' : 'float64'));
      }
      return;
    case K.Time:
    case K.MicroTime:
      // json.Unmarshal(b, &str) inside UnmarshalJSON: the standard library's UnmarshalTypeError,
      // which sigs.k8s.io/json aliases, so the outer decoder adds its field context to it.
      if (typeof v !== 'string') throw new HardError(typeError(st, struct, jsonKind(v), 'string'));
      {
        const err = parseTimeError(v, t.kind === K.MicroTime);
        if (err !== undefined) throw new HardError(err);
      }
      return;
    case K.IntOrString:
      if (typeof v === 'string') return;
      if (typeof v === 'number' || typeof v === 'bigint') {
        if (!(text !== undefined ? literalFitsInt(text.literal, 'int32') : fitsInt(v, 'int32')))
          throw new HardError(typeError(st, struct, numberValue(text?.literal ?? numberLiteral(v)), 'int32'));
        return;
      }
      throw new HardError(typeError(st, struct, jsonKind(v), 'int32'));
    case K.Quantity: {
      const err = quantityError(v, text);
      if (err !== undefined) throw new HardError(err);
      return;
    }
    case K.RawJSON:
      // JSON.UnmarshalJSON keeps the bytes, whatever they hold (integers past 2^53 are bigints: exact).
      return;
    case K.PropsOrBool:
      // `{`: a nested decode into JSONSchemaProps; exactly `true` or `false`; anything else fails.
      if (typeof v === 'boolean') return;
      if (typeof v !== 'object' || Array.isArray(v)) throw new HardError('boolean or JSON schema expected');
      nested(st, v, refNode(propsOf(t.name)), struct);
      return;
    case K.PropsOrArray:
    case K.PropsOrStringArray: {
      // `{`: JSONSchemaProps; `[`: []JSONSchemaProps or []string; anything else is ignored (the
      // first byte decides; a one-byte value such as `5` has none).
      if (typeof v !== 'object') return;
      const props = propsOf(t.name);
      if (!Array.isArray(v)) nested(st, v, refNode(props), struct);
      else if (t.kind === K.PropsOrArray) nested(st, v, sliceNode(refNode(props), props), struct);
      else nested(st, v, sliceNode(STRING_NODE, ''), struct);
      return;
    }
  }
}

/** The JSONSchemaProps definition of the package of a JSONSchemaPropsOr* definition. */
function propsOf(name: string | undefined): string {
  return name === undefined ? AX + 'JSONSchemaProps' : name.slice(0, name.lastIndexOf('.') + 1) + 'JSONSchemaProps';
}

/**
 * A custom UnmarshalJSON's nested json.Unmarshal of `v` into `schema`: its first error, soft or
 * hard, aborts the outer decode (hard), with the outer context (see the module comment).
 */
function nested(st: State, v: unknown, schema: OpenAPISchema, struct: string | undefined): void {
  const outermost = st.frozen === undefined;
  if (outermost) st.frozen = fieldAt(st, struct) ?? { struct: '', field: '' };
  const outerFirst = st.first;
  st.first = undefined;
  decode(st, v, schema, classified(schema, st.defs), undefined, undefined, undefined);
  if (st.first !== undefined) throw new HardError(st.first);
  st.first = outerFirst;
  if (outermost) st.frozen = undefined;
}

const INT_RANGES: Record<string, readonly [bigint, bigint]> = {
  int8: [-(2n ** 7n), 2n ** 7n - 1n],
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  int: [-(2n ** 63n), 2n ** 63n - 1n],
  uint8: [0n, 2n ** 8n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
  uint: [0n, 2n ** 64n - 1n],
};

/**
 * Whether strconv.ParseInt/ParseUint(literal, 10, 64) succeeds and the result fits `goType` (a
 * named integer type not in the table is taken as int64): digits only, ParseUint refusing a sign.
 */
function literalFitsInt(literal: string, goType: string): boolean {
  const range = INT_RANGES[goType] ?? INT_RANGES.int64!;
  if (!/^-?[0-9]+$/.test(literal) || (range[0] === 0n && literal.startsWith('-'))) return false;
  const b = BigInt(literal);
  return b >= range[0] && b <= range[1];
}

/**
 * Whether strconv.ParseInt/ParseUint of the number's literal succeeds and fits `goType` (a named
 * integer type not in the table is taken as int64), the literal being the one String(v) writes.
 */
function fitsInt(v: number | bigint, goType: string): boolean {
  const range = INT_RANGES[goType] ?? INT_RANGES.int64!;
  if (typeof v === 'bigint') return v >= range[0] && v <= range[1];
  if (!Number.isInteger(v)) return false;
  if (Object.is(v, -0)) return range[0] < 0n; // ParseUint("-0") fails
  if (Math.abs(v) >= 1e21) return false; // written with an exponent
  if (Number.isSafeInteger(v)) return v >= Number(range[0]) && v <= Number(range[1]);
  // Beyond 2^53 the double stands for several literals; 2^63 (the double of int64's max) and
  // 2^64 (uint64's max) are taken to have been written as the maximum.
  const b = BigInt(v);
  return b >= range[0] && (b <= range[1] || b === range[1] + 1n);
}

// ---------------------------------------------------------------------------------------------
// []byte: a base64 string (base64.StdEncoding), or a JSON array of uint8 numbers.

function decodeBytes(st: State, v: unknown, struct: string | undefined, goType: string): void {
  if (typeof v === 'string') {
    const at = base64ErrorOffset(v);
    if (at >= 0 && st.first === undefined) st.first = corruptInputError(at);
    return;
  }
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const e: unknown = v[i];
      if (e === null) continue;
      if (typeof e === 'number' || typeof e === 'bigint') {
        const text = st.texts && typeof e === 'number' ? numberTextAt(v, i, e) : undefined;
        if (!(text !== undefined ? literalFitsInt(text.literal, 'uint8') : fitsInt(e, 'uint8')))
          soft(st, struct, e, 'uint8', numberValue(text?.literal ?? numberLiteral(e)));
      } else {
        soft(st, struct, e, 'uint8');
      }
    }
    return;
  }
  soft(st, struct, v, goType);
}

// ---------------------------------------------------------------------------------------------
// resource.Quantity: UnmarshalJSON strips the quotes of a string (without unescaping), trims
// spaces and calls ParseQuantity.

// characters a JSON encoder escapes inside a string (so the raw text Go sees differs)
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/;

function quantityError(v: unknown, text: NumberText | undefined): string | undefined {
  let raw: string;
  if (typeof v === 'string') raw = NEEDS_ESCAPE.test(v) ? JSON.stringify(v).slice(1, -1) : v;
  else if (typeof v === 'number' || typeof v === 'bigint') raw = text?.literal ?? numberLiteral(v);
  else return ERR_QUANTITY_FORMAT; // true, false, {...}, [...]
  return parseQuantityError(goTrimSpace(raw));
}
