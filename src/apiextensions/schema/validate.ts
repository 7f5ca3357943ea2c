// Validation of custom resources against their schema, as kube-apiserver does on create/update:
// kube-openapi's SchemaValidator (pkg/validation/validate) with its error texts, converted to field
// errors by apiextensions' kubeOpenAPIResultToFieldErrors; then embedded ObjectMeta/TypeMeta
// (pkg/apiserver/schema/objectmeta) and list-type uniqueness (pkg/apiserver/schema/listtype).
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import type { JsonValue, ObjectMeta } from '../../apimachinery/types.js';
import { isDNS1035Label, nameIsPathSegment } from '../../apimachinery/validation/names.js';
import { validateObjectMetaCreate } from '../../apimachinery/validation/objectmeta.js';
import { cannotUnmarshal, jsonKind, numberValue, unmarshalTypeError } from '../../golang/json-errors.js';
import { compileRegexp, type CompiledRegexp } from '../../golang/regexp.js';
import { parseTimeError } from '../../golang/time.js';
import { effectiveFormat, formatChecker } from '../../apimachinery/openapi/formats.js';
import { canonicalJSON, validateListSetsAndMaps } from './listtype.js';
import { child, deepEqualJSON, depthAtMost, goFloat, index, isObject, printable, subtreeHas } from './path.js';
import type { NestedValueValidation, Structural, ValueValidation } from './types.js';
import { stringifyJSON } from '../../golang/json-int64.js';

// ---------------------------------------------------------------------------------------------
// Compiled validator nodes (spec.Schema as the validator sees it, after format post-processing)

interface VNode {
  types: string[];
  typeLabel: string;
  nullable: boolean;
  format: string;
  formatCheck?: (s: string) => boolean;
  numType: string;
  numFormat: string;
  multipleOf?: number;
  maximum?: number;
  exclusiveMaximum: boolean;
  minimum?: number;
  exclusiveMinimum: boolean;
  hasNumberChecks: boolean;
  maxLength?: number;
  minLength?: number;
  pattern?: string;
  compiled?: CompiledRegexp;
  items?: VNode;
  maxItems?: number;
  minItems?: number;
  uniqueItems: boolean;
  enum?: JsonValue[];
  maxProperties?: number;
  minProperties?: number;
  required?: string[];
  properties?: [string, VNode][];
  /** undefined: not specified; otherwise Allows and optional schema. */
  additional?: { allows: boolean; schema?: VNode };
  allOf?: VNode[];
  anyOf?: VNode[];
  oneOf?: VNode[];
  not?: VNode;
}

const compiledCache = new WeakMap<Structural, VNode>();

function fromValueValidation(n: VNode, v: ValueValidation | undefined): void {
  if (!v) return;
  // float64 in JSONSchemaProps: a bigint (an integer literal past 2^53) is read as Go reads it.
  n.multipleOf = asFloat64(v.multipleOf);
  n.maximum = asFloat64(v.maximum);
  n.exclusiveMaximum = v.exclusiveMaximum === true;
  n.minimum = asFloat64(v.minimum);
  n.exclusiveMinimum = v.exclusiveMinimum === true;
  n.maxLength = v.maxLength;
  n.minLength = v.minLength;
  if (v.pattern) {
    n.pattern = v.pattern;
    n.compiled = compileRegexp(v.pattern);
  }
  n.maxItems = v.maxItems;
  n.minItems = v.minItems;
  n.uniqueItems = v.uniqueItems === true;
  if (v.enum?.length) n.enum = v.enum;
  n.maxProperties = v.maxProperties;
  n.minProperties = v.minProperties;
  if (v.required?.length) n.required = v.required;
  if (v.allOf?.length) n.allOf = v.allOf.map(fromNested);
  if (v.anyOf?.length) n.anyOf = v.anyOf.map(fromNested);
  if (v.oneOf?.length) n.oneOf = v.oneOf.map(fromNested);
  if (v.not) n.not = fromNested(v.not);
}

function finish(n: VNode, type: string, intOrString: boolean, format: string | undefined): VNode {
  // ConvertJSONSchemaProps: int-or-string becomes the type list [integer, string].
  n.types = intOrString ? ['integer', 'string'] : type ? [type] : [];
  n.typeLabel = n.types.join(',');
  n.format = effectiveFormat(format, n.types);
  if (n.format) n.formatCheck = formatChecker(n.format);
  if (n.types.length === 1 && n.types[0] === 'integer') {
    n.numType = 'integer';
    n.numFormat = n.format === 'int32' || n.format === 'int64' ? n.format : '';
  } else if (n.types.length === 1 && n.types[0] === 'number') {
    n.numType = 'number';
    n.numFormat = n.format === 'float' || n.format === 'double' ? n.format : '';
  }
  n.hasNumberChecks = n.numFormat !== '' || n.multipleOf !== undefined || n.maximum !== undefined || n.minimum !== undefined || n.numType === 'integer';
  return n;
}

// Every node starts with every field, in one order, so that all nodes share one hidden class and
// the validator's property reads stay monomorphic (conditionally added fields made them megamorphic).
function blank(): VNode {
  return {
    types: [],
    typeLabel: '',
    nullable: false,
    format: '',
    formatCheck: undefined,
    numType: '',
    numFormat: '',
    multipleOf: undefined,
    maximum: undefined,
    exclusiveMaximum: false,
    minimum: undefined,
    exclusiveMinimum: false,
    hasNumberChecks: false,
    maxLength: undefined,
    minLength: undefined,
    pattern: undefined,
    compiled: undefined,
    items: undefined,
    maxItems: undefined,
    minItems: undefined,
    uniqueItems: false,
    enum: undefined,
    maxProperties: undefined,
    minProperties: undefined,
    required: undefined,
    properties: undefined,
    additional: undefined,
    allOf: undefined,
    anyOf: undefined,
    oneOf: undefined,
    not: undefined,
  };
}

function fromNested(v: NestedValueValidation): VNode {
  const n = blank();
  n.nullable = v.forbiddenGenerics.nullable;
  fromValueValidation(n, v);
  if (v.items) n.items = fromNested(v.items);
  if (v.properties) n.properties = [...v.properties].map(([k, p]) => [k, fromNested(p)]);
  if (v.additionalProperties) n.additional = { allows: true, schema: fromNested(v.additionalProperties) };
  return finish(n, v.forbiddenGenerics.type, v.forbiddenExtensions.xIntOrString, v.format);
}

function compile(s: Structural): VNode {
  const hit = compiledCache.get(s);
  if (hit) return hit;
  const n = blank();
  n.nullable = s.nullable;
  fromValueValidation(n, s.valueValidation);
  if (s.items) n.items = compile(s.items);
  if (s.properties) n.properties = [...s.properties].map(([k, p]) => [k, compile(p)]);
  if (s.additionalProperties) {
    const ap = s.additionalProperties;
    n.additional = ap.structural ? { allows: true, schema: compile(ap.structural) } : { allows: ap.bool };
  }
  finish(n, s.type, s.xIntOrString, s.valueValidation?.format);
  compiledCache.set(s, n);
  return n;
}

// ---------------------------------------------------------------------------------------------
// kube-openapi Result and errors

type ErrCode =
  | 'invalidType'
  | 'required'
  | 'tooLong'
  | 'tooShort'
  | 'pattern'
  | 'enum'
  | 'multipleOf'
  | 'max'
  | 'min'
  | 'unique'
  | 'maxItems'
  | 'minItems'
  | 'tooFewProperties'
  | 'tooManyProperties'
  | 'unallowedProperty'
  | 'multipleOfMustBePositive'
  /** A plain error, not an errors.Validation: reported at the root field path. */
  | 'plain';

interface VErr {
  code: ErrCode;
  name: string;
  message: string;
  value?: unknown;
  valid?: number;
  values?: readonly JsonValue[];
}

class Result {
  errors: VErr[] | undefined;
  matchCount = 0;
  add(e: VErr): void {
    // kube-openapi drops an error whose message was already reported
    if (!this.errors) this.errors = [e];
    else if (!this.errors.some((x) => x.message === e.message)) this.errors.push(e);
  }
  merge(o: Result): void {
    if (o.errors) for (const e of o.errors) this.add(e);
    this.matchCount += o.matchCount;
  }
  get valid(): boolean {
    return !this.errors;
  }
}

const IN = 'body';

/** Marks an additionalProperties key: kube-openapi always joins those with '.', even at the root. */
const AP_KEY = '\u0000';

/**
 * The kube-openapi path of the value being validated, kept as a stack of segments so that the
 * success path allocates no strings; it is rendered only when an error needs it.
 */
class Ctx {
  readonly segs: (string | number)[] = [];
  path(): string {
    let s = '';
    for (const x of this.segs) {
      if (typeof x === 'number') s += `[${x}]`;
      else if (x.startsWith(AP_KEY)) s += `.${x.slice(1)}`;
      else s = s ? `${s}.${x}` : x;
    }
    return s;
  }
}
const at = (path: string, rest: string): string => `${path} in ${IN} ${rest}`;

function invalidType(path: string, typeName: string, value: string): VErr {
  return { code: 'invalidType', name: path, value, message: at(path, `must be of type ${typeName}: ${stringifyJSON(value)}`) };
}

// ---------------------------------------------------------------------------------------------
// Numbers as Go holds them: the unstructured decoder makes integral JSON numbers int64.

// Integer literals past 2^53 are bigints (golang/json-int64.ts): a number is an int64 when it is a
// safe integer, else a float64 (written with a fraction or an exponent, or beyond int64).
const isInt64 = (x: number | bigint): boolean => typeof x === 'bigint' || Number.isSafeInteger(x);
/** swag.ConvertInt64(swag.FormatFloat64(x)) succeeds: integral and within int64 (-2^63 is, 2^63 is not). */
const parsesAsInt64 = (x: number | bigint): boolean => typeof x === 'bigint' || (Number.isInteger(x) && x >= -(2 ** 63) && x < 2 ** 63);
/** A float64 of the schema (Go's type for maximum, minimum and multipleOf). */
const asFloat64 = (x: number | bigint | undefined): number | undefined => (x === undefined ? undefined : Number(x));
/** Go's int64(f) of a bound, for comparing with an int64 value exactly (f is integral and in range: see rangeError). */
const int64Of = (f: number): bigint => BigInt(Math.trunc(f));
const MAX_JSON_INT = 2 ** 53 - 1;

/** swag.IsFloat64AJSONInteger */
function isFloat64AJSONInteger(f: number): boolean {
  if (!Number.isFinite(f) || f < -MAX_JSON_INT || f > MAX_JSON_INT) return false;
  const g = Math.trunc(f);
  if (f === g) return true;
  const diff = Math.abs(f - g);
  if (g === 0) return diff < 1e-9 * Number.MIN_VALUE;
  return diff / Math.min(Math.abs(f) + Math.abs(g), Number.MAX_VALUE) < 1e-9;
}

const MAX_FLOAT32 = 3.4028234663852886e38;

/** IsValueValidAgainstRange: the value must fit the declared type/format (int32 range, float32...). */
function rangeError(val: number | bigint, typeName: string, format: string, prefix: string, c: Ctx): VErr | undefined {
  let bad = false;
  const asInt = parsesAsInt64(val);
  if (typeName === 'integer') {
    if (!asInt)
      bad = true; // strconv.ParseInt of a decimal fraction fails
    else if (format === 'int32') bad = val < -(2 ** 31) || val > 2 ** 31 - 1;
  } else if (format === 'float') {
    bad = Math.abs(Number(val)) > MAX_FLOAT32;
  }
  if (!bad) return undefined;
  const path = c.path();
  const t = typeName || 'number';
  const message = format
    ? `${prefix} value must be of type ${t} with format ${format} in ${path}`
    : `${prefix} value must be of type ${t} (default format) in ${path}`;
  return { code: 'plain', name: '', message };
}

function numberChecks(n: VNode, val: number | bigint, c: Ctx, res: Result): void {
  const asInt = isInt64(val);
  // An int64 compares as Go's native int64 code does (exactly); a float64 as a float64.
  const exact = typeof val === 'bigint' ? val : asInt ? BigInt(val) : undefined;
  const num = Number(val);
  const checked = rangeError(val, n.numType, n.numFormat, 'Checked', c);
  if (checked) res.add(checked);
  const extra: VErr[] = [];
  if (n.multipleOf !== undefined) {
    const mo = n.multipleOf;
    const re = rangeError(mo, n.numType, n.numFormat, 'MultipleOf', c);
    if (re) extra.push(re);
    if (!re && asInt) {
      const f = int64Of(mo);
      if (f <= 0n)
        extra.push({
          code: 'multipleOfMustBePositive',
          name: c.path(),
          value: Number(f),
          message: `factor MultipleOf declared for ${c.path()} must be positive: ${f}`,
        });
      else if (exact! % f !== 0n) extra.push({ code: 'multipleOf', name: c.path(), value: val, message: at(c.path(), `should be a multiple of ${f}`) });
    } else if (mo <= 0) {
      extra.push({
        code: 'multipleOfMustBePositive',
        name: c.path(),
        value: mo,
        message: `factor MultipleOf declared for ${c.path()} must be positive: ${goFloat(mo)}`,
      });
    } else {
      const mult = mo < 1 ? (1 / mo) * num : num / mo;
      if (!isFloat64AJSONInteger(mult))
        extra.push({ code: 'multipleOf', name: c.path(), value: val, message: at(c.path(), `should be a multiple of ${goFloat(mo)}`) });
    }
  }
  // upstream merges multipleOf, minimum, then maximum
  if (n.minimum !== undefined) {
    const re = rangeError(n.minimum, n.numType, n.numFormat, 'Minimum boundary', c);
    if (re) extra.push(re);
    const excl = n.exclusiveMinimum;
    const native = !re && asInt;
    const bound = native ? int64Of(n.minimum) : n.minimum;
    const v = native ? exact! : num;
    if ((!excl && v < bound) || (excl && v <= bound)) {
      const shown = native ? String(bound) : goFloat(n.minimum);
      extra.push({ code: 'min', name: c.path(), value: val, message: at(c.path(), `should be greater than ${excl ? '' : 'or equal to '}${shown}`) });
    }
  }
  if (n.maximum !== undefined) {
    const re = rangeError(n.maximum, n.numType, n.numFormat, 'Maximum boundary', c);
    if (re) extra.push(re);
    const excl = n.exclusiveMaximum;
    const native = !re && asInt;
    const bound = native ? int64Of(n.maximum) : n.maximum;
    const v = native ? exact! : num;
    if ((!excl && v > bound) || (excl && v >= bound)) {
      const shown = native ? String(bound) : goFloat(n.maximum);
      extra.push({ code: 'max', name: c.path(), value: val, message: at(c.path(), `should be less than ${excl ? '' : 'or equal to '}${shown}`) });
    }
  }
  for (const e of extra) res.add(e);
}

// ---------------------------------------------------------------------------------------------
// SchemaValidator.Validate

function runeCount(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n--;
        i++;
      }
    }
  }
  return n;
}

function enumMatches(enumValues: readonly JsonValue[], data: unknown): boolean {
  for (const e of enumValues) {
    // reflect.TypeOf(nil) is nil, so a null enum entry never matches, not even null
    if (e === null) continue;
    if (data !== null && data !== undefined && deepEqualJSON(data, e)) return true;
  }
  return false;
}

function enumError(n: VNode, path: string, data: unknown): VErr {
  return { code: 'enum', name: path, value: data, values: n.enum, message: at(path, 'should be one of the enum values') };
}

function validateValue(n: VNode, data: unknown, c: Ctx, res: Result): void {
  if (data === null || data === undefined) {
    // Only the type and enum validators run on null, and neither counts a match on failure.
    if (n.types.length > 0 && !n.nullable) res.add(invalidType(c.path(), n.typeLabel, 'null'));
    else res.matchCount++;
    if (n.enum && !enumMatches(n.enum, data)) res.add(enumError(n, c.path(), data));
    return;
  }
  const isStr = typeof data === 'string';
  const isNum = typeof data === 'number' || typeof data === 'bigint';
  const isArr = Array.isArray(data);
  const isObj = !isArr && typeof data === 'object';

  if (n.types.length > 0 || n.format !== '') {
    typeCheck(n, data, isStr, isArr, c, res);
    res.matchCount++;
  }
  if (n.anyOf || n.oneOf || n.allOf || n.not) schemaProps(n, data, c, res);
  res.matchCount += 2;
  if (isStr) {
    stringChecks(n, data, c, res);
    res.matchCount++;
    if (n.formatCheck) {
      if (!n.formatCheck(data))
        res.add({ code: 'invalidType', name: c.path(), value: data, message: at(c.path(), `must be of type ${n.format}: ${stringifyJSON(data)}`) });
      res.matchCount++;
    }
  } else if (isNum) {
    if (n.hasNumberChecks) numberChecks(n, data, c, res);
    res.matchCount += 2;
  } else if (isArr) {
    sliceChecks(n, data, c, res);
    res.matchCount += 2;
  }
  if (n.enum && !enumMatches(n.enum, data)) res.add(enumError(n, c.path(), data));
  res.matchCount++;
  if (isObj) {
    objectChecks(n, data as Record<string, unknown>, c, res);
    res.matchCount++;
  }
  res.matchCount++;
}

function typeCheck(n: VNode, data: unknown, isStr: boolean, isArr: boolean, c: Ctx, res: Result): void {
  let schType: string;
  let format = '';
  if (typeof data === 'boolean') schType = 'boolean';
  else if (isStr) schType = 'string';
  else if (typeof data === 'number' || typeof data === 'bigint') {
    if (isInt64(data)) {
      schType = 'integer';
      format = 'int64';
    } else {
      schType = 'number';
      format = 'float64';
    }
  } else if (isArr) schType = 'array';
  else schType = 'object';
  const types = n.types;
  const isFloatInt = schType === 'number' && isFloat64AJSONInteger(data as number) && types.includes('integer');
  const isIntFloat = schType === 'integer' && types.includes('number');
  const has = types.includes(schType);
  if (!isStr && !isArr && n.format && !(has || format === n.format || isFloatInt || isIntFloat)) {
    res.add(invalidType(c.path(), n.format, format));
    return;
  }
  if (!(types.includes('number') || types.includes('integer')) && n.format && (isStr || isArr)) {
    res.matchCount++;
    return;
  }
  if (!(has || isFloatInt || isIntFloat)) {
    res.add(invalidType(c.path(), n.typeLabel, schType));
    return;
  }
  res.matchCount++;
}

function stringChecks(n: VNode, s: string, c: Ctx, res: Result): void {
  // upstream stops at the first failing string check
  if (n.maxLength !== undefined && runeCount(s) > n.maxLength) {
    res.add({ code: 'tooLong', name: c.path(), value: s, valid: n.maxLength, message: at(c.path(), `should be at most ${n.maxLength} chars long`) });
    return;
  }
  if (n.minLength !== undefined && runeCount(s) < n.minLength) {
    res.add({ code: 'tooShort', name: c.path(), value: s, valid: n.minLength, message: at(c.path(), `should be at least ${n.minLength} chars long`) });
    return;
  }
  if (n.compiled) {
    if (n.compiled.error !== undefined) {
      res.add({ code: 'pattern', name: c.path(), value: s, message: at(c.path(), `should match '${n.pattern}, but pattern is invalid: ${n.compiled.error}'`) });
    } else if (!n.compiled.re.test(s)) {
      res.add({ code: 'pattern', name: c.path(), value: s, message: at(c.path(), `should match '${n.pattern}'`) });
    }
  }
}

const UNIQUE_DEPTH = 64;

function sliceChecks(n: VNode, arr: unknown[], c: Ctx, res: Result): void {
  if (n.items) {
    for (let i = 0; i < arr.length; i++) {
      c.segs.push(i);
      validateValue(n.items, arr[i], c, res);
      c.segs.pop();
    }
  }
  const size = arr.length;
  if (n.minItems !== undefined && size < n.minItems) {
    res.add({ code: 'minItems', name: c.path(), value: size, valid: n.minItems, message: at(c.path(), `should have at least ${n.minItems} items`) });
  }
  if (n.maxItems !== undefined && size > n.maxItems) {
    res.add({ code: 'maxItems', name: c.path(), value: size, valid: n.maxItems, message: at(c.path(), `should have at most ${n.maxItems} items`) });
  }
  if (n.uniqueItems && size > 1) {
    const seen = new Set<string>();
    for (const v of arr) {
      const k = boundedKey(v, UNIQUE_DEPTH);
      if (k !== undefined && seen.has(k)) {
        res.add({ code: 'unique', name: c.path(), message: at(c.path(), "shouldn't contain duplicates") });
        break;
      }
      if (k !== undefined) seen.add(k);
    }
  }
}

/** canonical JSON unless nested deeper than `depth` (then the value is treated as unique). */
function boundedKey(v: unknown, depth: number): string | undefined {
  return depthAtMost(v, depth) ? canonicalJSON(v) : undefined;
}

function objectChecks(n: VNode, obj: Record<string, unknown>, c: Ctx, res: Result): void {
  if (n.minProperties !== undefined || n.maxProperties !== undefined) {
    const numKeys = Object.keys(obj).length;
    if (n.minProperties !== undefined && numKeys < n.minProperties) {
      res.add({
        code: 'tooFewProperties',
        name: c.path(),
        value: numKeys,
        valid: n.minProperties,
        message: at(c.path(), `should have at least ${n.minProperties} properties`),
      });
    }
    if (n.maxProperties !== undefined && numKeys > n.maxProperties) {
      res.add({
        code: 'tooManyProperties',
        name: c.path(),
        value: numKeys,
        valid: n.maxProperties,
        message: at(c.path(), `should have at most ${n.maxProperties} properties`),
      });
    }
  }
  const props = n.properties;
  const ap = n.additional;
  if (ap && !ap.allows) {
    for (const k in obj) {
      if (!props?.some(([p]) => p === k))
        res.add({ code: 'unallowedProperty', name: c.path(), value: k, message: `${c.path()}.${k} in ${IN} is a forbidden property` });
    }
  } else if (ap?.schema) {
    for (const k in obj) {
      if (!props?.some(([p]) => p === k)) {
        c.segs.push(AP_KEY + k);
        validateValue(ap.schema, obj[k], c, res);
        c.segs.pop();
      }
    }
  }
  if (props) {
    for (let i = 0; i < props.length; i++) {
      const [name, sub] = props[i]!;
      if (Object.prototype.hasOwnProperty.call(obj, name)) {
        c.segs.push(name);
        validateValue(sub, obj[name], c, res);
        c.segs.pop();
      }
    }
  }
  if (n.required) {
    for (const k of n.required) {
      if (!Object.prototype.hasOwnProperty.call(obj, k)) {
        const name = `${c.path()}.${k}`;
        res.add({ code: 'required', name, message: at(name, 'is required') });
      }
    }
  }
}

function schemaProps(n: VNode, data: unknown, c: Ctx, res: Result): void {
  if (n.anyOf) {
    let best: Result | undefined;
    let firstSuccess: Result | undefined;
    let succeeded = false;
    for (const alt of n.anyOf) {
      const r = new Result();
      validateValue(alt, data, c, r);
      if (r.valid) {
        best = undefined;
        succeeded = true;
        firstSuccess ??= r;
        break;
      }
      if (!best || r.matchCount > best.matchCount) best = r;
    }
    if (!succeeded) res.add({ code: 'plain', name: '', message: `${JSON.stringify(c.path())} must validate at least one schema (anyOf)` });
    if (best) res.merge(best);
    else if (firstSuccess) res.merge(firstSuccess);
  }
  if (n.oneOf) {
    let best: Result | undefined;
    let firstSuccess: Result | undefined;
    let validated = 0;
    for (const alt of n.oneOf) {
      const r = new Result();
      validateValue(alt, data, c, r);
      if (r.valid) {
        validated++;
        best = undefined;
        firstSuccess ??= r;
        continue;
      }
      if (validated === 0 && (!best || r.matchCount > best.matchCount)) best = r;
    }
    if (validated !== 1) {
      const more = validated === 0 ? 'Found none valid' : `Found ${validated} valid alternatives`;
      res.add({ code: 'plain', name: '', message: `${JSON.stringify(c.path())} must validate one and only one schema (oneOf). ${more}` });
      if (best) res.merge(best);
    } else if (firstSuccess) res.merge(firstSuccess);
  }
  if (n.allOf) {
    let validated = 0;
    for (const alt of n.allOf) {
      const r = new Result();
      validateValue(alt, data, c, r);
      if (r.valid) validated++;
      res.merge(r);
    }
    if (validated !== n.allOf.length) {
      res.add({
        code: 'plain',
        name: '',
        message: `${JSON.stringify(c.path())} must validate all the schemas (allOf)${validated === 0 ? '. None validated' : ''}`,
      });
    }
  }
  if (n.not) {
    const r = new Result();
    validateValue(n.not, data, c, r);
    if (r.valid) res.add({ code: 'plain', name: '', message: `${JSON.stringify(c.path())} must not validate the schema (not)` });
  }
}

// ---------------------------------------------------------------------------------------------
// kubeOpenAPIResultToFieldErrors

/**
 * field.TooLong as current upstream words it ("may not be more than N bytes", asserted by
 * apiextensions' validation_test.go); errors.ts's builder has other wording.
 */
function tooLong(field: string, max: number): FieldIssue {
  const detail = max >= 0 ? `may not be more than ${max} ${max === 1 ? 'byte' : 'bytes'}` : 'value is too long';
  return { ...fieldIssue.tooLong(field, '', max), detail };
}

/** Where field.Path(nil).String() would print: upstream reports plain errors at `<nil>`. */
const NIL_PATH = '<nil>';

function toFieldIssues(errs: readonly VErr[], base: string, out: FieldIssue[]): void {
  const root = base || NIL_PATH;
  for (const e of errs) {
    if (e.code === 'plain') {
      out.push(fieldIssue.invalid(root, '', e.message));
      continue;
    }
    const name = e.name.startsWith('.') ? e.name.slice(1) : e.name;
    const p = name && name !== '.' ? child(base, name) : root;
    const value = e.value ?? '';
    switch (e.code) {
      case 'required':
        out.push(fieldIssue.required(p));
        break;
      case 'enum':
        out.push(
          fieldIssue.notSupported(
            p,
            printable(e.value ?? null),
            (e.values ?? []).map((v) => (typeof v === 'string' ? v : canonicalJSON(v))),
          ),
        );
        break;
      case 'tooLong':
        out.push(tooLong(p, e.valid ?? -1));
        break;
      case 'maxItems':
      case 'tooManyProperties':
        out.push(fieldIssue.tooMany(p, (e.value as number | undefined) ?? -1, e.valid ?? -1));
        break;
      case 'invalidType':
        out.push(fieldIssue.typeInvalid(p, value, e.message));
        break;
      default:
        out.push(fieldIssue.invalid(p, value, e.message));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Public API

export interface ValidateObjectOptions {
  /**
   * Path of `obj` inside the resource: '' for the whole object (the default), `status` when
   * validating a status update against the status schema, as upstream's fldPath.
   */
  fieldPath?: string;
}

/**
 * ValidateCustomResource: checks `obj` against the OpenAPI value validations of `schema` and
 * returns kube's field errors (`spec.replicas: Invalid value: "string": spec.replicas in body must
 * be of type integer: "string"`). Never throws; recursion follows the (finite) schema.
 */
export function validateOpenAPI(obj: unknown, schema: Structural, opts: ValidateObjectOptions = {}): FieldIssue[] {
  const res = new Result();
  validateValue(compile(schema), obj, new Ctx(), res);
  if (!res.errors) return [];
  const out: FieldIssue[] = [];
  toFieldIssues(res.errors, opts.fieldPath ?? '', out);
  return out;
}

/**
 * What kube-apiserver's custom resource strategy validates with the schema on create/update:
 * OpenAPI value validation, then embedded resources' TypeMeta/ObjectMeta, then list-type
 * uniqueness. The resource's own metadata/apiVersion/kind are the registry's job, not done here.
 */
export function validateObject(obj: unknown, schema: Structural, opts: ValidateObjectOptions = {}): FieldIssue[] {
  const errs = validateOpenAPI(obj, schema, opts);
  const base = opts.fieldPath ?? '';
  const meta = validateEmbeddedResources(obj, schema, base);
  const lists = validateListSetsAndMaps(obj, schema, base);
  if (meta.length === 0 && lists.length === 0) return errs;
  return errs.concat(meta, lists);
}

// ---------------------------------------------------------------------------------------------
// Embedded resources (objectmeta.Validate with isResourceRoot=false)

/**
 * objectmeta.Validate: for every `x-kubernetes-embedded-resource` object, apiVersion and kind are
 * required and well-formed and metadata passes the standard ObjectMeta rules (as on create, with a
 * placeholder name when none is set). Set `isResourceRoot` to apply it to `obj` itself too.
 */
export function validateEmbeddedResources(obj: unknown, schema: Structural | undefined, fieldPath = '', isResourceRoot = false): FieldIssue[] {
  const errs: FieldIssue[] = [];
  let s = schema;
  if (isResourceRoot) s = { ...(s ?? emptyStructural()), xEmbeddedResource: true };
  walkEmbedded(fieldPath, obj, s, errs);
  return errs;
}

function emptyStructural(): Structural {
  return { type: '', description: '', title: '', nullable: false, xPreserveUnknownFields: false, xEmbeddedResource: false, xIntOrString: false };
}

const isEmbedded = (s: Structural): boolean => s.xEmbeddedResource;
const embeddedMemo = new WeakMap<Structural, boolean>();

function walkEmbedded(p: string, x: unknown, s: Structural | undefined, errs: FieldIssue[]): void {
  if (!s || !subtreeHas(s, isEmbedded, embeddedMemo)) return;
  if (Array.isArray(x)) {
    if (s.items) for (let i = 0; i < x.length; i++) walkEmbedded(index(p, i), x[i], s.items, errs);
    return;
  }
  if (!isObject(x)) return;
  if (s.xEmbeddedResource) validateEmbeddedResource(p, x, errs);
  if (!s.properties && !s.additionalProperties?.structural) return;
  for (const k in x) {
    const prop = s.properties?.get(k);
    if (prop) walkEmbedded(child(p, k), x[k], prop, errs);
    else if (s.additionalProperties) walkEmbedded(`${p}[${k}]`, x[k], s.additionalProperties.structural, errs);
  }
}

function validateEmbeddedResource(p: string, x: Record<string, unknown>, errs: FieldIssue[]): void {
  if (!Object.prototype.hasOwnProperty.call(x, 'apiVersion')) errs.push(fieldIssue.required(child(p, 'apiVersion')));
  if (!Object.prototype.hasOwnProperty.call(x, 'kind')) errs.push(fieldIssue.required(child(p, 'kind')));
  for (const k in x) {
    const v = x[k];
    if (k === 'apiVersion') {
      if (typeof v !== 'string') errs.push(fieldIssue.invalid(child(p, 'apiVersion'), printable(v), 'must be a string'));
      else if (!v) errs.push(fieldIssue.invalid(child(p, 'apiVersion'), v, 'must not be empty'));
      else if (v.split('/').length > 2) errs.push(fieldIssue.invalid(child(p, 'apiVersion'), v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind') {
      if (typeof v !== 'string') errs.push(fieldIssue.invalid(child(p, 'kind'), printable(v), 'must be a string'));
      else if (!v) errs.push(fieldIssue.invalid(child(p, 'kind'), v, 'must not be empty'));
      else {
        const msgs = isDNS1035Label(v.toLowerCase());
        if (msgs.length) errs.push(fieldIssue.invalid(child(p, 'kind'), v, `may have mixed case, but should otherwise match: ${msgs.join(',')}`));
      }
    } else if (k === 'metadata') {
      const decoded = decodeObjectMeta(v);
      if (decoded.error !== undefined) {
        errs.push(fieldIssue.invalid(child(p, 'metadata'), printable(v), decoded.error));
      } else {
        const meta = decoded.meta!;
        if (!meta.name) meta.name = 'fakename'; // upstream sets something to avoid a name error
        errs.push(...validateObjectMetaCreate(meta, { namespaced: !!meta.namespace, nameValidator: nameIsPathSegment, path: child(p, 'metadata') }));
      }
    }
  }
}

type GoKind = 'string' | 'int64' | 'map[string]string' | '[]string' | 'Time' | 'list';

const META_FIELD_TYPES: Record<string, GoKind> = {
  name: 'string',
  generateName: 'string',
  namespace: 'string',
  selfLink: 'string',
  uid: 'string',
  resourceVersion: 'string',
  generation: 'int64',
  creationTimestamp: 'Time',
  deletionTimestamp: 'Time',
  deletionGracePeriodSeconds: 'int64',
  labels: 'map[string]string',
  annotations: 'map[string]string',
  finalizers: '[]string',
  ownerReferences: 'list',
  managedFields: 'list',
};

/**
 * GetObjectMeta without dropping malformed fields: json.Unmarshal into metav1.ObjectMeta, with
 * encoding/json's wording for type mismatches. Unknown fields are ignored, as non-strict decoding does.
 */
function badMetaField(k: string, t: string, what: string): { error: string } {
  return { error: unmarshalTypeError(what, t === 'Time' ? 'string' : t === 'list' ? 'array' : t, { struct: 'ObjectMeta', field: k }) };
}

export function decodeObjectMeta(v: unknown): { meta?: ObjectMeta; error?: string } {
  if (v === null || v === undefined) return { meta: {} };
  if (!isObject(v)) return { error: cannotUnmarshal(v, 'v1.ObjectMeta') };
  const meta: Record<string, unknown> = {};
  for (const k in v) {
    const t = META_FIELD_TYPES[k];
    const val = v[k];
    if (!t || val === null) continue;
    switch (t) {
      case 'string':
        if (typeof val !== 'string') return badMetaField(k, t, jsonKind(val));
        break;
      case 'int64':
        if (typeof val !== 'number' && typeof val !== 'bigint') return badMetaField(k, t, jsonKind(val));
        if (typeof val === 'number' && !isInt64(val)) return badMetaField(k, t, numberValue(goFloat(val)));
        break;
      case 'Time':
        if (typeof val !== 'string') return badMetaField(k, t, jsonKind(val));
        if (val !== '') {
          const err = parseTimeError(val, false);
          if (err !== undefined) return { error: err };
        }
        break;
      case 'map[string]string':
        if (!isObject(val)) return badMetaField(k, t, jsonKind(val));
        for (const mk in val) {
          const mv = val[mk];
          if (mv !== null && typeof mv !== 'string') return { error: cannotUnmarshal(mv, 'string', { struct: 'ObjectMeta', field: k }) };
        }
        break;
      case '[]string':
        if (!Array.isArray(val)) return badMetaField(k, t, jsonKind(val));
        for (const e of val) if (e !== null && typeof e !== 'string') return { error: cannotUnmarshal(e, 'string', { struct: 'ObjectMeta', field: k }) };
        break;
      case 'list':
        if (!Array.isArray(val)) return badMetaField(k, t, jsonKind(val));
        break;
    }
    meta[k] = val;
  }
  return { meta };
}
