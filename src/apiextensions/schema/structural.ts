// Structural schemas (k8s.io/apiextensions-apiserver/pkg/apiserver/schema: convert.go,
// validation.go, complete.go) and the CRD-level rules on openAPIV3Schema
// (pkg/apis/apiextensions/validation: ValidateCustomResourceDefinitionOpenAPISchema and the
// validation part of validateCustomResourceDefinitionValidation). Messages and paths are upstream's.
import { fieldIssue, issueString, type FieldIssue } from '../../apimachinery/errors.js';
import { compileRegexp } from '../../golang/regexp.js';
import { validateDefaults } from './defaults.js';
import { validateListTypeExtensions, validateMapListKeysMapSet } from './listtype.js';
import { child, index, key } from './path.js';
import type { Extensions, Generic, JSONSchemaProps, NestedValueValidation, Structural, ValueValidation } from './types.js';

/** Thrown by {@link newStructural} for schemas that cannot be structural at all (upstream returns an error). */
export class StructuralConversionError extends Error {
  override readonly name = 'StructuralConversionError';
}

/** Schema nesting beyond this is refused, so that hostile CRDs cannot exhaust the stack. */
export const MAX_SCHEMA_DEPTH = 128;

function checkUnsupported(s: JSONSchemaProps): void {
  if (s.id) throw new StructuralConversionError("OpenAPIV3Schema 'id' is not supported");
  if (s.$schema) throw new StructuralConversionError("OpenAPIV3Schema 'schema' is not supported");
  if (s.$ref) throw new StructuralConversionError("OpenAPIV3Schema '$ref' is not supported");
  if (s.patternProperties && Object.keys(s.patternProperties).length > 0)
    throw new StructuralConversionError("OpenAPIV3Schema 'patternProperties' is not supported");
  if (s.dependencies && Object.keys(s.dependencies).length > 0) throw new StructuralConversionError("OpenAPIV3Schema 'dependencies' is not supported");
  if (s.additionalItems !== undefined) throw new StructuralConversionError("OpenAPIV3Schema 'additionalItems' is not supported");
  if (s.definitions && Object.keys(s.definitions).length > 0) throw new StructuralConversionError("OpenAPIV3Schema 'definitions' is not supported");
}

function newGenerics(s: JSONSchemaProps): Generic {
  const g: Generic = { type: s.type ?? '', description: s.description ?? '', title: s.title ?? '', nullable: s.nullable === true };
  // A JSON null default decodes to a nil interface upstream, i.e. no default.
  if (s.default !== undefined && s.default !== null) g.default = s.default;
  if (s.externalDocs) g.externalDocs = s.externalDocs;
  if (s.example !== undefined && s.example !== null) g.example = s.example;
  return g;
}

function newExtensions(s: JSONSchemaProps): Extensions {
  const pu = s['x-kubernetes-preserve-unknown-fields'];
  if (pu === false) throw new StructuralConversionError("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined");
  const x: Extensions = {
    xPreserveUnknownFields: pu === true,
    xEmbeddedResource: s['x-kubernetes-embedded-resource'] === true,
    xIntOrString: s['x-kubernetes-int-or-string'] === true,
  };
  if (s['x-kubernetes-list-map-keys'] !== undefined) x.xListMapKeys = s['x-kubernetes-list-map-keys'];
  if (s['x-kubernetes-list-type'] !== undefined) x.xListType = s['x-kubernetes-list-type'];
  if (s['x-kubernetes-map-type'] !== undefined) x.xMapType = s['x-kubernetes-map-type'];
  return x;
}

function newValueValidation(s: JSONSchemaProps, depth: number): ValueValidation {
  const v: ValueValidation = {};
  if (s.format !== undefined && s.format !== '') v.format = s.format;
  if (s.maximum !== undefined) v.maximum = s.maximum;
  if (s.exclusiveMaximum) v.exclusiveMaximum = true;
  if (s.minimum !== undefined) v.minimum = s.minimum;
  if (s.exclusiveMinimum) v.exclusiveMinimum = true;
  if (s.maxLength !== undefined) v.maxLength = s.maxLength;
  if (s.minLength !== undefined) v.minLength = s.minLength;
  if (s.pattern !== undefined && s.pattern !== '') v.pattern = s.pattern;
  if (s.maxItems !== undefined) v.maxItems = s.maxItems;
  if (s.minItems !== undefined) v.minItems = s.minItems;
  if (s.uniqueItems) v.uniqueItems = true;
  if (s.multipleOf !== undefined) v.multipleOf = s.multipleOf;
  if (s.enum !== undefined && s.enum.length > 0) v.enum = s.enum;
  if (s.maxProperties !== undefined) v.maxProperties = s.maxProperties;
  if (s.minProperties !== undefined) v.minProperties = s.minProperties;
  if (s.required !== undefined && s.required.length > 0) v.required = s.required;
  if (s.allOf?.length) v.allOf = s.allOf.map((x) => newNested(x, depth + 1));
  if (s.anyOf?.length) v.anyOf = s.anyOf.map((x) => newNested(x, depth + 1));
  if (s.oneOf?.length) v.oneOf = s.oneOf.map((x) => newNested(x, depth + 1));
  if (s.not) v.not = newNested(s.not, depth + 1);
  return v;
}

function itemsSchema(s: JSONSchemaProps): JSONSchemaProps | undefined {
  if (s.items === undefined) return undefined;
  if (Array.isArray(s.items)) throw new StructuralConversionError("OpenAPIV3Schema 'items' must be a schema, but is an array");
  return s.items;
}

function newNested(s: JSONSchemaProps, depth: number): NestedValueValidation {
  if (depth > MAX_SCHEMA_DEPTH) throw new StructuralConversionError(`OpenAPIV3Schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  checkUnsupported(s);
  const v: NestedValueValidation = {
    ...newValueValidation(s, depth),
    forbiddenGenerics: newGenerics(s),
    forbiddenExtensions: newExtensions(s),
  };
  if (s['x-kubernetes-validations']?.length) v.xValidations = s['x-kubernetes-validations'];
  const items = itemsSchema(s);
  if (items) v.items = newNested(items, depth + 1);
  if (s.properties) {
    v.properties = new Map();
    for (const [k, p] of Object.entries(s.properties)) v.properties.set(k, newNested(p, depth + 1));
  }
  const ap = s.additionalProperties;
  if (typeof ap === 'object' && ap !== null) v.additionalProperties = newNested(ap, depth + 1);
  else if (ap === true) v.additionalProperties = emptyNested();
  return v;
}

function emptyNested(): NestedValueValidation {
  return {
    forbiddenGenerics: { type: '', description: '', title: '', nullable: false },
    forbiddenExtensions: { xPreserveUnknownFields: false, xEmbeddedResource: false, xIntOrString: false },
  };
}

/**
 * NewStructural: converts an openAPIV3Schema into a structural schema. Throws
 * {@link StructuralConversionError} with upstream's message for the constructs a structural schema
 * cannot hold (id, $schema, $ref, patternProperties, dependencies, additionalItems, definitions,
 * items arrays, `x-kubernetes-preserve-unknown-fields: false`). Run {@link validateStructural} on
 * the result to learn whether it is actually structural.
 */
export function newStructural(s: JSONSchemaProps): Structural {
  return convert(s, 0);
}

function convert(s: JSONSchemaProps, depth: number): Structural {
  if (depth > MAX_SCHEMA_DEPTH) throw new StructuralConversionError(`OpenAPIV3Schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
  checkUnsupported(s);
  const vv = newValueValidation(s, depth);
  const out: Structural = { ...newGenerics(s), ...newExtensions(s), valueValidation: vv };
  if (s['x-kubernetes-validations']?.length) out.xValidations = s['x-kubernetes-validations'];
  const items = itemsSchema(s);
  if (items) out.items = convert(items, depth + 1);
  if (s.properties && Object.keys(s.properties).length > 0) {
    out.properties = new Map();
    for (const [k, p] of Object.entries(s.properties)) out.properties.set(k, convert(p, depth + 1));
  }
  const ap = s.additionalProperties;
  if (typeof ap === 'object' && ap !== null) out.additionalProperties = { structural: convert(ap, depth + 1), bool: true };
  else if (typeof ap === 'boolean') out.additionalProperties = { bool: ap };
  return out;
}

// ---------------------------------------------------------------------------------------------
// ValidateStructural

/** Upstream's ValidationOptions; CRDs use all-false (the default here). */
export interface StructuralValidationOptions {
  allowNestedAdditionalProperties?: boolean;
  allowNestedXValidations?: boolean;
  allowValidationPropertiesWithAdditionalProperties?: boolean;
}

type Level = 'root' | 'item' | 'field';

/**
 * ValidateStructural: checks that `s` is a structural schema. `fieldPath` is where the schema sits
 * (e.g. `spec.versions[0].schema.openAPIV3Schema`). Issues are sorted by their message, as upstream.
 */
export function validateStructural(s: Structural, fieldPath: string, opts: StructuralValidationOptions = {}): FieldIssue[] {
  const errs: FieldIssue[] = [];
  invariants(s, 'root', fieldPath, opts, errs);
  completeness(s.valueValidation, s, fieldPath, fieldPath, opts, errs);
  return sortIssues(errs);
}

function sortIssues(errs: FieldIssue[]): FieldIssue[] {
  const keyed = errs.map((e) => [issueString(e), e] as const);
  keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return keyed.map((k) => k[1]);
}

function isOnlyType(n: NestedValueValidation, t: string): boolean {
  const g = n.forbiddenGenerics;
  const x = n.forbiddenExtensions;
  return (
    g.type === t &&
    !g.description &&
    !g.title &&
    g.default === undefined &&
    !g.nullable &&
    !g.externalDocs &&
    g.example === undefined &&
    isEmptyExtensions(x) &&
    !n.items &&
    !n.properties &&
    !n.additionalProperties &&
    !n.xValidations?.length &&
    isEmptyValueValidation(n)
  );
}

function isEmptyExtensions(x: Extensions): boolean {
  return (
    !x.xPreserveUnknownFields && !x.xEmbeddedResource && !x.xIntOrString && !x.xListMapKeys?.length && x.xListType === undefined && x.xMapType === undefined
  );
}

function isEmptyValueValidation(v: ValueValidation | undefined): boolean {
  if (!v) return true;
  return (
    v.format === undefined &&
    v.maximum === undefined &&
    !v.exclusiveMaximum &&
    v.minimum === undefined &&
    !v.exclusiveMinimum &&
    v.maxLength === undefined &&
    v.minLength === undefined &&
    v.pattern === undefined &&
    v.maxItems === undefined &&
    v.minItems === undefined &&
    !v.uniqueItems &&
    v.multipleOf === undefined &&
    !v.enum?.length &&
    v.maxProperties === undefined &&
    v.minProperties === undefined &&
    !v.required?.length &&
    !v.allOf?.length &&
    !v.oneOf?.length &&
    !v.anyOf?.length &&
    v.not === undefined
  );
}

const isIntOrStringAnyOf = (any: NestedValueValidation[] | undefined): boolean =>
  any !== undefined && any.length === 2 && isOnlyType(any[0]!, 'integer') && isOnlyType(any[1]!, 'string');

function invariants(s: Structural | undefined, lvl: Level, p: string, opts: StructuralValidationOptions, errs: FieldIssue[]): void {
  if (!s) return;
  if (s.type === 'array' && !s.items) errs.push(fieldIssue.required(child(p, 'items'), 'must be specified'));
  invariants(s.items, 'item', child(p, 'items'), opts, errs);
  if (s.properties) for (const [k, v] of s.properties) invariants(v, 'field', key(child(p, 'properties'), k), opts, errs);
  if (s.additionalProperties) {
    if (lvl === 'root') errs.push(fieldIssue.forbidden(child(p, 'additionalProperties'), 'must not be used at the root'));
    if (s.additionalProperties.structural) invariants(s.additionalProperties.structural, 'field', child(p, 'additionalProperties'), opts, errs);
  }
  if (s.xIntOrString && s.xPreserveUnknownFields) {
    errs.push(fieldIssue.invalid(child(p, 'x-kubernetes-preserve-unknown-fields'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  if (s.xIntOrString && s.xEmbeddedResource) {
    errs.push(fieldIssue.invalid(child(p, 'x-kubernetes-embedded-resource'), true, 'must be false if x-kubernetes-int-or-string is true'));
  }
  const vv = s.valueValidation;
  const skipAnyOf = isIntOrStringAnyOf(vv?.anyOf);
  const skipFirstAllOfAnyOf = (vv?.allOf?.length ?? 0) >= 1 && isIntOrStringAnyOf(vv!.allOf![0]!.anyOf);
  valueValidation(vv, skipAnyOf, skipFirstAllOfAnyOf, lvl, p, opts, errs);

  const checkMetadata = lvl === 'root' || s.xEmbeddedResource;
  if (s.xEmbeddedResource && s.type !== 'object') {
    if (!s.type) errs.push(fieldIssue.required(child(p, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
    else errs.push(fieldIssue.invalid(child(p, 'type'), s.type, 'must be object if x-kubernetes-embedded-resource is true'));
  } else if (!s.type && !s.xIntOrString && !s.xPreserveUnknownFields) {
    const detail =
      lvl === 'root'
        ? 'must not be empty at the root'
        : lvl === 'item'
          ? 'must not be empty for specified array items'
          : 'must not be empty for specified object fields';
    errs.push(fieldIssue.required(child(p, 'type'), detail));
  }
  if (s.xEmbeddedResource && s.additionalProperties) {
    errs.push(fieldIssue.forbidden(child(p, 'additionalProperties'), 'must not be used if x-kubernetes-embedded-resource is set'));
  }
  if (lvl === 'root' && s.type && s.type !== 'object') errs.push(fieldIssue.invalid(child(p, 'type'), s.type, 'must be object at the root'));

  const kind = s.properties?.get('kind');
  if (kind && checkMetadata && kind.type !== 'string') {
    errs.push(fieldIssue.invalid(child(key(child(p, 'properties'), 'kind'), 'type'), kind.type, 'must be string'));
  }
  const apiVersion = s.properties?.get('apiVersion');
  if (apiVersion && checkMetadata && apiVersion.type !== 'string') {
    errs.push(fieldIssue.invalid(child(key(child(p, 'properties'), 'apiVersion'), 'type'), apiVersion.type, 'must be string'));
  }
  const metadata = s.properties?.get('metadata');
  if (metadata) metadataInvariants(metadata, checkMetadata, lvl, key(child(p, 'properties'), 'metadata'), errs);

  if (s.xEmbeddedResource && !s.xPreserveUnknownFields && !s.properties?.size) {
    errs.push(
      fieldIssue.required(child(p, 'properties'), 'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields'),
    );
  }
}

function metadataInvariants(s: Structural, checkMetadata: boolean, lvl: Level, p: string, errs: FieldIssue[]): void {
  if (checkMetadata && s.type !== 'object') errs.push(fieldIssue.invalid(child(p, 'type'), s.type, 'must be object'));
  if (lvl !== 'root') return;
  // Only name and generateName may be restricted at the root; type and default are checked elsewhere.
  const props = s.properties;
  let onlyNames = !props || props.size === 0;
  if (props) {
    const hasName = props.has('name');
    const hasGen = props.has('generateName');
    if ((hasName && hasGen && props.size === 2) || ((hasName || hasGen) && props.size === 1)) onlyNames = true;
  }
  const clean =
    onlyNames &&
    !s.items &&
    !s.additionalProperties &&
    !s.description &&
    !s.title &&
    !s.nullable &&
    !s.externalDocs &&
    s.example === undefined &&
    isEmptyExtensions(s) &&
    !s.xValidations?.length &&
    isEmptyValueValidation(s.valueValidation);
  if (!clean) errs.push(fieldIssue.forbidden(p, 'must not specify anything other than name and generateName, but metadata is implicitly specified'));
}

function valueValidation(
  v: ValueValidation | undefined,
  skipAnyOf: boolean,
  skipFirstAllOfAnyOf: boolean,
  lvl: Level,
  p: string,
  opts: StructuralValidationOptions,
  errs: FieldIssue[],
): void {
  if (!v) return;
  // CEL under anyOf/oneOf/not would need a CEL-aware validator, so only allOf may allow it.
  const noCel = { ...opts, allowNestedXValidations: false };
  if (!skipAnyOf) v.anyOf?.forEach((n, i) => nested(n, false, false, lvl, index(child(p, 'anyOf'), i), noCel, errs));
  v.allOf?.forEach((n, i) => nested(n, skipFirstAllOfAnyOf && i === 0, false, lvl, index(child(p, 'allOf'), i), opts, errs));
  v.oneOf?.forEach((n, i) => nested(n, false, false, lvl, index(child(p, 'oneOf'), i), noCel, errs));
  nested(v.not, false, false, lvl, child(p, 'not'), noCel, errs);
  if (v.pattern) {
    const re = compileRegexp(v.pattern);
    if (re.error !== undefined) errs.push(fieldIssue.invalid(child(p, 'pattern'), v.pattern, `must be a valid regular expression, but isn't: ${re.error}`));
  }
}

function nested(
  v: NestedValueValidation | undefined,
  skipAnyOf: boolean,
  skipAllOfAnyOf: boolean,
  lvl: Level,
  p: string,
  opts: StructuralValidationOptions,
  errs: FieldIssue[],
): void {
  if (!v) return;
  valueValidation(v, skipAnyOf, skipAllOfAnyOf, lvl, p, opts, errs);
  nested(v.items, false, false, lvl, child(p, 'items'), opts, errs);
  if (v.properties) for (const [k, f] of v.properties) nested(f, false, false, 'field', key(child(p, 'properties'), k), opts, errs);
  const g = v.forbiddenGenerics;
  const x = v.forbiddenExtensions;
  if (g.type) errs.push(fieldIssue.forbidden(child(p, 'type'), 'must be empty to be structural'));
  if (v.additionalProperties && !opts.allowNestedAdditionalProperties) {
    errs.push(fieldIssue.forbidden(child(p, 'additionalProperties'), 'must be undefined to be structural'));
  } else {
    nested(v.additionalProperties, false, false, lvl, child(p, 'additionalProperties'), opts, errs);
  }
  if (g.default !== undefined) errs.push(fieldIssue.forbidden(child(p, 'default'), 'must be undefined to be structural'));
  if (g.title) errs.push(fieldIssue.forbidden(child(p, 'title'), 'must be empty to be structural'));
  if (g.description) errs.push(fieldIssue.forbidden(child(p, 'description'), 'must be empty to be structural'));
  if (g.nullable) errs.push(fieldIssue.forbidden(child(p, 'nullable'), 'must be false to be structural'));
  if (x.xPreserveUnknownFields) errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-preserve-unknown-fields'), 'must be false to be structural'));
  if (x.xEmbeddedResource) errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-embedded-resource'), 'must be false to be structural'));
  if (x.xIntOrString) errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-int-or-string'), 'must be false to be structural'));
  if (x.xListMapKeys?.length) errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-list-map-keys'), 'must be empty to be structural'));
  if (x.xListType !== undefined) errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-list-type'), 'must be undefined to be structural'));
  if (x.xMapType !== undefined) errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-map-type'), 'must be undefined to be structural'));
  if (v.xValidations?.length && !opts.allowNestedXValidations)
    errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-validations'), 'must be empty to be structural'));
  // Reasoning about metadata in value validations could restrict metadata in ways we do not want.
  if (v.properties?.has('metadata')) errs.push(fieldIssue.forbidden(key(child(p, 'properties'), 'metadata'), 'must not be specified in a nested context'));
}

function completeness(
  v: ValueValidation | undefined,
  s: Structural | undefined,
  sPath: string,
  vPath: string,
  opts: StructuralValidationOptions,
  errs: FieldIssue[],
): void {
  if (!v) return;
  if (!s) {
    errs.push(fieldIssue.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  nestedCompleteness(v.not, s, sPath, child(vPath, 'not'), opts, errs);
  v.allOf?.forEach((n, i) => nestedCompleteness(n, s, sPath, index(child(vPath, 'allOf'), i), opts, errs));
  v.anyOf?.forEach((n, i) => nestedCompleteness(n, s, sPath, index(child(vPath, 'anyOf'), i), opts, errs));
  v.oneOf?.forEach((n, i) => nestedCompleteness(n, s, sPath, index(child(vPath, 'oneOf'), i), opts, errs));
}

function nestedCompleteness(
  v: NestedValueValidation | undefined,
  s: Structural | undefined,
  sPath: string,
  vPath: string,
  opts: StructuralValidationOptions,
  errs: FieldIssue[],
): void {
  if (!v) return;
  if (!s) {
    errs.push(fieldIssue.required(sPath, `because it is defined in ${vPath}`));
    return;
  }
  completeness(v, s, sPath, vPath, opts, errs);
  nestedCompleteness(v.items, s.items, child(sPath, 'items'), child(vPath, 'items'), opts, errs);
  const apSchema = s.additionalProperties?.structural;
  if (v.properties) {
    for (const [k, vf] of v.properties) {
      const sf = s.properties?.get(k);
      if (!sf) {
        if (!apSchema || !opts.allowValidationPropertiesWithAdditionalProperties) {
          errs.push(fieldIssue.required(key(child(sPath, 'properties'), k), `because it is defined in ${key(child(vPath, 'properties'), k)}`));
        } else {
          nestedCompleteness(vf, apSchema, child(sPath, 'additionalProperties'), key(child(vPath, 'properties'), k), opts, errs);
        }
      } else {
        nestedCompleteness(vf, sf, key(child(sPath, 'properties'), k), key(child(vPath, 'properties'), k), opts, errs);
      }
    }
  }
  if (v.additionalProperties && opts.allowNestedAdditionalProperties) {
    nestedCompleteness(v.additionalProperties, apSchema, child(sPath, 'additionalProperties'), child(vPath, 'additionalProperties'), opts, errs);
  }
}

// ---------------------------------------------------------------------------------------------
// CRD rules on openAPIV3Schema (ValidateCustomResourceDefinitionOpenAPISchema and its caller)

/** validationOptions of CRD validation; all default to the strict values used for new CRDs. */
export interface CRDSchemaValidationOptions {
  /** The version has the status subresource: restricts what the root may specify. Default false. */
  statusSubresource?: boolean;
  allowDefaults?: boolean;
  requireValidPropertyType?: boolean;
  requireStructuralSchema?: boolean;
  requirePrunedDefaults?: boolean;
  requireAtomicSetType?: boolean;
  requireMapListKeysMapSetValidation?: boolean;
}

const OPENAPI_V3_TYPES = ['array', 'boolean', 'integer', 'number', 'object', 'string'];
const SUPPORTED_VALIDATION_REASONS = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];
/** Root fields allowed with the status subresource, in JSON spelling (upstream lists Go field names). */
const ALLOWED_AT_ROOT_WITH_STATUS = new Set([
  'description',
  'type',
  'format',
  'title',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
  'required',
  'items',
  'properties',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-validations',
]);
const ALLOWED_AT_ROOT_GO_NAMES =
  '[Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations]';

/**
 * validateCustomResourceDefinitionValidation for one schema: status-subresource root rules,
 * `nullable` at the root, structurality ({@link validateStructural}), defaults
 * ({@link validateDefaults}) and the per-node CRD rules. `fieldPath` ends in `openAPIV3Schema`.
 * The CEL compilation of `x-kubernetes-validations` is not done here.
 */
export function validateOpenAPIV3Schema(schema: JSONSchemaProps, fieldPath: string, opts: CRDSchemaValidationOptions = {}): FieldIssue[] {
  const o = withDefaults(opts);
  const errs: FieldIssue[] = [];
  if (o.statusSubresource) {
    for (const [k, v] of Object.entries(schema)) {
      if (isZero(v)) continue;
      if (k === 'type') {
        if (schema.type !== 'object') {
          errs.push(
            fieldIssue.invalid(
              child(fieldPath, 'type'),
              schema.type,
              'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
            ),
          );
          break;
        }
        continue;
      }
      if (!ALLOWED_AT_ROOT_WITH_STATUS.has(k)) {
        errs.push(
          fieldIssue.invalid(
            fieldPath,
            schema,
            `only ${ALLOWED_AT_ROOT_GO_NAMES} fields are allowed at the root of the schema if the status subresource is enabled`,
          ),
        );
        break;
      }
    }
  }
  if (schema.nullable) errs.push(fieldIssue.forbidden(child(fieldPath, 'nullable'), 'nullable cannot be true at the root'));

  const initErrs: FieldIssue[] = [];
  if (o.requireStructuralSchema) {
    let ss: Structural | undefined;
    try {
      ss = newStructural(schema);
    } catch (e) {
      initErrs.push(fieldIssue.invalid(fieldPath, '', e instanceof Error ? e.message : String(e)));
    }
    if (ss) {
      const se = validateStructural(ss, fieldPath);
      if (se.length > 0) errs.push(...se);
      else errs.push(...validateDefaults(ss, fieldPath, { isResourceRoot: true, requirePrunedDefaults: o.requirePrunedDefaults }));
    }
  }
  validateSchemaNode(schema, fieldPath, { allowDefaults: o.allowDefaults, disallowDefaultsReason: '', insideResourceMeta: false }, true, o, errs, 0);
  if (errs.length === 0 && initErrs.length > 0) errs.push(...initErrs);
  return errs;
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === '' || v === 0) return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v).length === 0;
}

type Required_<T> = { [K in keyof T]-?: T[K] };

function withDefaults(o: CRDSchemaValidationOptions): Required_<CRDSchemaValidationOptions> {
  return {
    statusSubresource: o.statusSubresource ?? false,
    allowDefaults: o.allowDefaults ?? true,
    requireValidPropertyType: o.requireValidPropertyType ?? true,
    requireStructuralSchema: o.requireStructuralSchema ?? true,
    requirePrunedDefaults: o.requirePrunedDefaults ?? true,
    requireAtomicSetType: o.requireAtomicSetType ?? true,
    requireMapListKeysMapSetValidation: o.requireMapListKeysMapSetValidation ?? true,
  };
}

/** specStandardValidatorV3's state. */
interface SSV {
  allowDefaults: boolean;
  disallowDefaultsReason: string;
  insideResourceMeta: boolean;
}

const META_FIELDS = new Set(['metadata', 'kind', 'apiVersion']);

/**
 * ValidateCustomResourceDefinitionOpenAPISchema without CEL: the per-node rules (forbidden
 * features, uniqueItems, additionalProperties vs properties, list/map types, x-kubernetes-validations
 * shape). Exported for callers that validate a schema outside of a CRD version.
 */
export function validateCRDSchemaNodes(schema: JSONSchemaProps, fieldPath: string, opts: CRDSchemaValidationOptions = {}): FieldIssue[] {
  const o = withDefaults(opts);
  const errs: FieldIssue[] = [];
  validateSchemaNode(schema, fieldPath, { allowDefaults: o.allowDefaults, disallowDefaultsReason: '', insideResourceMeta: false }, true, o, errs, 0);
  return errs;
}

function validateSchemaNode(
  schema: JSONSchemaProps | undefined,
  p: string,
  ssv: SSV,
  isRoot: boolean,
  o: Required_<CRDSchemaValidationOptions>,
  errs: FieldIssue[],
  depth: number,
): void {
  if (!schema) return;
  if (depth > MAX_SCHEMA_DEPTH) {
    errs.push(fieldIssue.forbidden(p, `must not be nested deeper than ${MAX_SCHEMA_DEPTH} levels`));
    return;
  }
  standardValidate(schema, p, ssv, o, errs);
  if (schema.uniqueItems)
    errs.push(fieldIssue.forbidden(child(p, 'uniqueItems'), 'uniqueItems cannot be set to true since the runtime complexity becomes quadratic'));

  const ap = schema.additionalProperties;
  if (ap !== undefined) {
    // properties are for structs, additionalProperties for maps; both would contradict ignoring unknown fields.
    if (schema.properties && Object.keys(schema.properties).length > 0 && (ap === false || typeof ap === 'object')) {
      errs.push(fieldIssue.forbidden(child(p, 'additionalProperties'), 'additionalProperties and properties are mutual exclusive'));
    }
    // Defaults inside maps of object metadata cannot be pruned without an actual value.
    const sub = ssv.insideResourceMeta
      ? { ...ssv, allowDefaults: false, disallowDefaultsReason: 'inside additionalProperties applying to object metadata' }
      : ssv;
    if (typeof ap === 'object') validateSchemaNode(ap, child(p, 'additionalProperties'), sub, false, o, errs, depth + 1);
  }
  if (schema.properties) {
    for (const [prop, js] of Object.entries(schema.properties)) {
      let sub = ssv;
      if ((isRoot || schema['x-kubernetes-embedded-resource']) && META_FIELDS.has(prop)) {
        sub = { ...sub, insideResourceMeta: true };
        if (isRoot) sub = { ...sub, allowDefaults: false, disallowDefaultsReason: `in top-level ${prop}` };
      }
      validateSchemaNode(js, key(child(p, 'properties'), prop), sub, false, o, errs, depth + 1);
    }
  }
  validateSchemaNode(schema.not, child(p, 'not'), ssv, false, o, errs, depth + 1);
  schema.allOf?.forEach((s, i) => validateSchemaNode(s, index(child(p, 'allOf'), i), ssv, false, o, errs, depth + 1));
  schema.oneOf?.forEach((s, i) => validateSchemaNode(s, index(child(p, 'oneOf'), i), ssv, false, o, errs, depth + 1));
  schema.anyOf?.forEach((s, i) => validateSchemaNode(s, index(child(p, 'anyOf'), i), ssv, false, o, errs, depth + 1));
  if (schema.definitions) {
    for (const [d, s] of Object.entries(schema.definitions)) validateSchemaNode(s, key(child(p, 'definitions'), d), ssv, false, o, errs, depth + 1);
  }
  if (schema.items !== undefined) {
    if (Array.isArray(schema.items)) schema.items.forEach((s, i) => validateSchemaNode(s, index(child(p, 'items'), i), ssv, false, o, errs, depth + 1));
    else validateSchemaNode(schema.items, child(p, 'items'), ssv, false, o, errs, depth + 1);
  }
  if (schema.dependencies) {
    for (const [d, s] of Object.entries(schema.dependencies)) {
      if (!Array.isArray(s)) validateSchemaNode(s, key(child(p, 'dependencies'), d), ssv, false, o, errs, depth + 1);
    }
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === false) {
    errs.push(fieldIssue.invalid(child(p, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  }
  errs.push(...validateListTypeExtensions(schema, p, { requireAtomicSetType: o.requireAtomicSetType }));
  if (o.requireMapListKeysMapSetValidation) errs.push(...validateMapListKeysMapSet(schema, p));
  validateXValidationsShape(schema, p, errs);
}

function standardValidate(schema: JSONSchemaProps, p: string, ssv: SSV, o: Required_<CRDSchemaValidationOptions>, errs: FieldIssue[]): void {
  // WARNING (upstream): anything newly allowed here must also be supported by newStructural.
  if (o.requireValidPropertyType && schema.type && !OPENAPI_V3_TYPES.includes(schema.type)) {
    errs.push(fieldIssue.notSupported(child(p, 'type'), schema.type, OPENAPI_V3_TYPES));
  }
  if (schema.default !== undefined && !ssv.allowDefaults) {
    errs.push(fieldIssue.forbidden(child(p, 'default'), ssv.disallowDefaultsReason ? `must not be set ${ssv.disallowDefaultsReason}` : 'must not be set'));
  }
  if (schema.id) errs.push(fieldIssue.forbidden(child(p, 'id'), 'id is not supported'));
  if (schema.additionalItems !== undefined) errs.push(fieldIssue.forbidden(child(p, 'additionalItems'), 'additionalItems is not supported'));
  if (schema.patternProperties && Object.keys(schema.patternProperties).length > 0)
    errs.push(fieldIssue.forbidden(child(p, 'patternProperties'), 'patternProperties is not supported'));
  if (schema.definitions && Object.keys(schema.definitions).length > 0)
    errs.push(fieldIssue.forbidden(child(p, 'definitions'), 'definitions is not supported'));
  if (schema.dependencies !== undefined) errs.push(fieldIssue.forbidden(child(p, 'dependencies'), 'dependencies is not supported'));
  if (schema.$ref !== undefined) errs.push(fieldIssue.forbidden(child(p, '$ref'), '$ref is not supported'));
  if (schema.type === 'null') errs.push(fieldIssue.forbidden(child(p, 'type'), 'type cannot be set to null, use nullable as an alternative'));
  if (Array.isArray(schema.items) && schema.items.length > 0)
    errs.push(fieldIssue.forbidden(child(p, 'items'), 'items must be a schema object and not an array'));
  if (ssv.insideResourceMeta && schema['x-kubernetes-embedded-resource']) {
    errs.push(fieldIssue.forbidden(child(p, 'x-kubernetes-embedded-resource'), 'must not be used inside of resource meta'));
  }
}

const NEWLINES = /[\n\r]+/;

function validateXValidationsShape(schema: JSONSchemaProps, p: string, errs: FieldIssue[]): void {
  const rules = schema['x-kubernetes-validations'];
  if (!rules?.length) return;
  rules.forEach((rule, i) => {
    const rp = index(child(p, 'x-kubernetes-validations'), i);
    const trimmedRule = (rule.rule ?? '').trim();
    const msg = rule.message ?? '';
    const trimmedMsg = msg.trim();
    if (!trimmedRule) errs.push(fieldIssue.required(child(rp, 'rule'), 'rule is not specified'));
    else if (msg.length > 0 && !trimmedMsg) errs.push(fieldIssue.invalid(child(rp, 'message'), msg, 'must be non-empty if specified'));
    else if (NEWLINES.test(trimmedMsg)) errs.push(fieldIssue.invalid(child(rp, 'message'), msg, 'must not contain line breaks'));
    else if (NEWLINES.test(trimmedRule) && !trimmedMsg)
      errs.push(fieldIssue.required(child(rp, 'message'), 'message must be specified if rule contains line breaks'));
    if (rule.messageExpression !== undefined && rule.messageExpression.length > 0 && !rule.messageExpression.trim()) {
      errs.push(fieldIssue.required(child(rp, 'messageExpression'), 'messageExpression must be non-empty if specified'));
    }
    if (rule.reason !== undefined && !SUPPORTED_VALIDATION_REASONS.includes(rule.reason)) {
      errs.push(fieldIssue.notSupported(child(rp, 'reason'), rule.reason, SUPPORTED_VALIDATION_REASONS));
    }
    const fp = rule.fieldPath ?? '';
    if (fp.length > 0 && !fp.trim()) errs.push(fieldIssue.invalid(child(rp, 'fieldPath'), fp, 'must be non-empty if specified'));
    if (NEWLINES.test(fp)) errs.push(fieldIssue.invalid(child(rp, 'fieldPath'), fp, 'must not contain line breaks'));
  });
}
