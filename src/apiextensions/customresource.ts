// Serving one version of a custom resource: the descriptor (discovery, routing, OpenAPI), the
// Strategy built from the CRD (structural validation, pruning, defaulting, generation, status and
// scale subresources, printer columns, selectable fields), the apiVersion rewriting between served
// and storage versions (conversion None), and the OpenAPI definitions of the kind and its list.
import { fieldIssue, forbidden, invalid, type FieldIssue } from '../apimachinery/errors.js';
import { goMarshal } from '../golang/json.js';
import { formatFloat64 } from '../golang/strconv.js';
import { ALL_VERBS, type ResourceDescriptor, type SubresourceDescriptor } from '../apimachinery/resource.js';
import type { Definitions, OpenAPISchema } from '../apimachinery/schema.js';
import { CUSTOM_RESOURCE_SCHEMA, refTo } from '../apimachinery/schema.js';
import { apiVersionOf, type KubeObject } from '../apimachinery/types.js';
import { cloneObject } from '../registry/codec.js';
import type { ResourceRegistration } from '../registry/registry.js';
import type { VersionConverter } from '../registry/store.js';
import type { Strategy, SubresourceStrategy, TableColumn } from '../registry/strategy.js';
import { ageSince, CREATION_TIMESTAMP_DESCRIPTION, nameColumn, parseTimeMillis } from '../registry/table.js';
import { META, apiVersionField, kindField, listMetaField } from '../apimachinery/definitions/util.js';
import { compileJSONPath, getPath, setPath, simplePathFields, type CompiledJSONPath } from './jsonpath.js';
import type { CompiledRules, ValidationRulesEngine } from './rules.js';
import { defaultAndPruneNulls, needsDefaulting, newStructural, prune, validateObject, type JSONSchemaProps, type Structural } from './schema/index.js';
import type { CRDVersion, CustomResourceColumnDefinition, CustomResourceDefinition, ScaleSubresource } from './types.js';
import { semanticEqual } from './validation.js';
import { stringifyJSON } from '../golang/json-int64.js';
import type { ConversionWebhook } from './conversion.js';

export interface CustomResourceOptions {
  readonly rules?: ValidationRulesEngine | undefined;
  /** Whether the CRD is being deleted now: creates are refused then (upstream's forbidCreateAdmission). */
  readonly terminating?: (() => boolean) | undefined;
  /** The CRD's conversion webhook (strategy Webhook); without it versions convert as with None. */
  readonly conversion?: ConversionWebhook | undefined;
}

export interface ServedVersion {
  readonly registration: ResourceRegistration;
  readonly definitions: Definitions;
}

/** `stable.example.com`, `v1`, `CronTab` → `com.example.stable.v1.CronTab`, as upstream names CR definitions. */
export function customResourceDefinitionName(group: string, version: string, kind: string): string {
  return `${group.split('.').reverse().join('.')}.${version}.${kind}`;
}

function hasDefaults(s: JSONSchemaProps | undefined): boolean {
  if (!s || typeof s !== 'object') return false;
  if (s.default !== undefined) return true;
  for (const p of Object.values(s.properties ?? {})) if (hasDefaults(p)) return true;
  if (s.items && !Array.isArray(s.items) && hasDefaults(s.items)) return true;
  if (typeof s.additionalProperties === 'object' && hasDefaults(s.additionalProperties)) return true;
  return false;
}

// ---- table -----------------------------------------------------------------------------------

// customresource/tableconvertor: a Name column, then the version's additionalPrinterColumns (or,
// when it has none, serveDefaultColumnsIfEmpty's Age column).
const ageColumnDef: CustomResourceColumnDefinition = {
  name: 'Age',
  type: 'date',
  description: CREATION_TIMESTAMP_DESCRIPTION,
  jsonPath: '.metadata.creationTimestamp',
};

interface Column {
  readonly def: TableColumn;
  readonly path: CompiledJSONPath | undefined;
}

/**
 * A string column's cell: what jsonpath's PrintResults writes for the value (objects and arrays as
 * JSON, scalars as fmt.Fprint prints them, a JSON null as text/template's "<no value>").
 */
function stringCell(value: unknown): string {
  if (value === null || value === undefined) return '<no value>';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  // Integral numbers decode to int64 upstream; the rest are float64.
  if (typeof value === 'number') return Number.isInteger(value) && Number.isSafeInteger(value) ? String(value) : formatFloat64(value);
  if (typeof value === 'bigint') return value.toString(); // an int64 past 2^53
  return goMarshal(value); // json.Marshal: keys sorted, <, > and & escaped
}

/** cellForJSONValue (and PrintResults for string columns); null is printed as <none> by kubectl. */
function cellFor(type: string, value: unknown): unknown {
  if (type === 'string') return stringCell(value);
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
      return typeof value === 'number' ? Math.trunc(value) : typeof value === 'bigint' ? value : null;
    case 'number':
      return typeof value === 'number' || typeof value === 'bigint' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
    case 'date': {
      // metav1.Time's UnmarshalQueryParameter: "" and "null" are the zero time, anything but RFC 3339 is invalid.
      if (typeof value !== 'string') return null;
      if (value === '' || value === 'null') return '<unknown>';
      return parseTimeMillis(value) === undefined ? '<invalid>' : ageSince(value);
    }
    default:
      return null;
  }
}

function tableOf(cols: readonly CustomResourceColumnDefinition[]): { columns: TableColumn[]; cells: (obj: KubeObject) => unknown[] } {
  const list = (cols.length ? cols : [ageColumnDef]).map((c): Column => {
    let path: CompiledJSONPath | undefined;
    try {
      path = compileJSONPath(c.jsonPath ?? '');
    } catch {
      path = undefined;
    }
    const def: TableColumn = {
      name: c.name ?? '',
      type: (c.type ?? 'string') as TableColumn['type'],
      ...(c.format ? { format: c.format } : {}),
      description: c.description || `Custom resource definition column (in JSONPath format): ${c.jsonPath ?? ''}`,
      priority: c.priority ?? 0,
    };
    return { def, path };
  });
  return {
    columns: [nameColumn, ...list.map((c) => c.def)],
    cells: (obj) => [
      obj.metadata?.name ?? '',
      ...list.map((c) => {
        const found = c.path?.find(obj) ?? [];
        return found.length === 0 ? null : cellFor(c.def.type, found[0]);
      }),
    ],
  };
}

// ---- scale -----------------------------------------------------------------------------------

function scaleSubresource(scale: ScaleSubresource): SubresourceStrategy {
  const specPath = simplePathFields(scale.specReplicasPath ?? '');
  const statusPath = simplePathFields(scale.statusReplicasPath ?? '');
  const selectorPath = scale.labelSelectorPath ? simplePathFields(scale.labelSelectorPath) : undefined;
  // Scale's replicas is an int32: Go's int32(int64) keeps the low 32 bits (an int64 past 2^53 is a bigint).
  const int = (v: unknown): number =>
    typeof v === 'bigint' ? Number(BigInt.asIntN(32, v)) : typeof v === 'number' && Number.isFinite(v) ? Number(BigInt.asIntN(32, BigInt(Math.trunc(v)))) : 0;
  return {
    view(obj) {
      const m = obj.metadata ?? {};
      const spec = int(getPath(obj, specPath));
      const selector = selectorPath ? getPath(obj, selectorPath) : undefined;
      return {
        kind: 'Scale',
        apiVersion: 'autoscaling/v1',
        metadata: {
          name: m.name,
          ...(m.namespace ? { namespace: m.namespace } : {}),
          uid: m.uid,
          resourceVersion: m.resourceVersion,
          creationTimestamp: m.creationTimestamp,
        },
        spec: spec !== 0 ? { replicas: spec } : {},
        status: { replicas: int(getPath(obj, statusPath)), ...(typeof selector === 'string' && selector ? { selector } : {}) },
      };
    },
    merge(incoming, current) {
      const replicas = (incoming as { spec?: { replicas?: unknown } }).spec?.replicas;
      const issues: FieldIssue[] = [];
      if (replicas !== undefined && replicas !== null && (typeof replicas !== 'number' || !Number.isInteger(replicas))) {
        issues.push(fieldIssue.invalid('spec.replicas', replicas, 'must be an integer'));
      } else if (typeof replicas === 'number' && replicas < 0) {
        issues.push(fieldIssue.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'));
      }
      if (issues.length) throw invalid({ group: 'autoscaling', kind: 'Scale' }, current.metadata?.name ?? '', issues);
      const want = typeof replicas === 'number' ? replicas : 0;
      if (getPath(current, specPath) !== want) setPath(current, specPath, want);
      return current;
    },
    // A scale write changes spec: the main strategy's generation rule applies (upstream scales
    // through the main store).
    prepareForUpdate(obj, old) {
      const m = (obj.metadata ??= {});
      const gen = old.metadata?.generation ?? 1;
      m.generation = semanticEqual((obj as Record<string, unknown>)['spec'], (old as Record<string, unknown>)['spec']) ? gen : gen + 1;
    },
  };
}

// ---- openapi ---------------------------------------------------------------------------------

const KEEP = [
  'description',
  'type',
  'format',
  'title',
  'required',
  'enum',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'multipleOf',
  'nullable',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const;

const INT_OR_STRING = '[{"type":"integer"},{"type":"string"}]';
const isIntOrString = (anyOf: readonly JSONSchemaProps[] | undefined) => anyOf !== undefined && stringifyJSON(anyOf) === INT_OR_STRING;

/**
 * A CRD schema as published in /openapi/v3, as upstream's builder publishes the structural schema
 * (Structural.Unfold, then ToKubeOpenAPI, then addEmbeddedProperties): value validations with their
 * junctors (allOf/anyOf/oneOf/not, whose nodes are `nested`: no unfolding, no embedded
 * properties), `x-kubernetes-int-or-string` unfolded into `anyOf: [integer, string]` (under a
 * leading `allOf` when the node has an anyOf of its own), and embedded resources given apiVersion,
 * kind and metadata (required: kind, apiVersion). Examples and other non-structural keywords are
 * dropped. /openapi/v2 derives its form from this one (openapi/v2.ts: structuralToV2).
 */
export function toPublishedSchema(s: JSONSchemaProps, nested = false): OpenAPISchema {
  const out: Record<string, unknown> = {};
  for (const k of KEEP) {
    const v = s[k];
    // Upstream's schema type omits false flags, empty strings and empty lists (`default` aside).
    if (v !== undefined && (k === 'default' || (v !== false && v !== '' && !(Array.isArray(v) && v.length === 0)))) out[k] = v;
  }
  if (s.properties) out['properties'] = Object.fromEntries(Object.entries(s.properties).map(([k, v]) => [k, toPublishedSchema(v, nested)]));
  if (s.items && !Array.isArray(s.items)) out['items'] = toPublishedSchema(s.items, nested);
  if (s.additionalProperties !== undefined) {
    out['additionalProperties'] = typeof s.additionalProperties === 'boolean' ? s.additionalProperties : toPublishedSchema(s.additionalProperties, nested);
  }
  const junctor = (list: readonly JSONSchemaProps[] | undefined) => list?.map((x) => toPublishedSchema(x, true));
  let allOf = junctor(s.allOf);
  let anyOf = junctor(s.anyOf);
  if (!nested && s['x-kubernetes-int-or-string'] && !isIntOrString(s.anyOf) && !isIntOrString(s.allOf?.[0]?.anyOf)) {
    const intOrString: OpenAPISchema[] = [{ type: 'integer' }, { type: 'string' }];
    if (anyOf === undefined) anyOf = intOrString;
    else allOf = [{ anyOf: intOrString }, ...(allOf ?? [])];
  }
  if (allOf) out['allOf'] = allOf;
  if (s.oneOf) out['oneOf'] = junctor(s.oneOf);
  if (anyOf) out['anyOf'] = anyOf;
  if (s.not) out['not'] = toPublishedSchema(s.not, true);
  if (!nested && s['x-kubernetes-embedded-resource']) {
    out['properties'] = { ...(out['properties'] as Record<string, OpenAPISchema> | undefined), ...embeddedResourceProperties() };
    const required = [...(s.required ?? [])];
    for (const f of ['kind', 'apiVersion']) if (!required.includes(f)) required.push(f);
    out['required'] = required;
  }
  return out;
}

/** apiVersion, kind and metadata, as the root and embedded resources have them. */
function embeddedResourceProperties(): Record<string, OpenAPISchema> {
  return { apiVersion: apiVersionField, kind: kindField, metadata: { ...refTo(META + 'ObjectMeta'), description: "Standard object's metadata." } };
}

function definitionsFor(
  defName: string,
  group: string,
  version: string,
  kind: string,
  listKind: string,
  plural: string,
  schema: JSONSchemaProps | undefined,
): Definitions {
  const root = schema ? toPublishedSchema(schema) : ({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true } as OpenAPISchema);
  const properties: Record<string, OpenAPISchema> = { ...(root.properties ?? {}), ...embeddedResourceProperties() };
  const sorted = Object.fromEntries(Object.entries(properties).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return {
    // CUSTOM_RESOURCE_SCHEMA marks the kind for the v2 builder (stripped from both documents).
    [defName]: { ...root, type: 'object', properties: sorted, 'x-kubernetes-group-version-kind': [{ group, version, kind }], [CUSTOM_RESOURCE_SCHEMA]: true },
    [defName + 'List']: {
      description: `${listKind} is a list of ${kind}`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: apiVersionField,
        items: {
          type: 'array',
          description: `List of ${plural}. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md`,
          items: refTo(defName),
        },
        kind: kindField,
        metadata: listMetaField(),
      },
      'x-kubernetes-group-version-kind': [{ group, version, kind: listKind }],
    },
  };
}

// ---- the served version ----------------------------------------------------------------------

function withoutMetaAndStatus(obj: KubeObject, dropStatus: boolean): Record<string, unknown> {
  const { metadata: _m, ...rest } = obj as Record<string, unknown>;
  if (dropStatus) delete rest['status'];
  return rest;
}

/** Builds the registration of one served version of an established CRD. */
export function buildServedVersion(crd: CustomResourceDefinition, v: CRDVersion, opts: CustomResourceOptions = {}): ServedVersion {
  const spec = crd.spec!;
  const names = crd.status?.acceptedNames?.plural ? crd.status.acceptedNames : spec.names!;
  const group = spec.group!;
  const version = v.name!;
  const kind = names.kind!;
  const listKind = names.listKind ?? `${kind}List`;
  const plural = names.plural!;
  const namespaced = spec.scope === 'Namespaced';
  // v1 CRDs carry schema, subresources, columns and selectable fields per version.
  const settings = v;
  const schema = settings.schema?.openAPIV3Schema;
  let structural: Structural | undefined;
  try {
    structural = schema ? newStructural(schema) : undefined;
  } catch {
    structural = undefined;
  }
  const rules: CompiledRules | undefined = structural && opts.rules ? opts.rules.compile(structural) : undefined;
  const statusEnabled = !!settings.subresources?.status;
  const scale = settings.subresources?.scale;
  const defName = customResourceDefinitionName(group, version, kind);
  const storageVersion = spec.versions?.find((x) => x.storage)?.name ?? version;
  const servedAPIVersion = apiVersionOf(group, version);
  const storageAPIVersion = apiVersionOf(group, storageVersion);
  const defaulting = hasDefaults(schema);
  const table = tableOf(settings.additionalPrinterColumns ?? []);
  const selectable = (settings.selectableFields ?? []).map((f) => ({
    name: (f.jsonPath ?? '').replace(/^\./, ''),
    fields: simplePathFields(f.jsonPath ?? ''),
  }));

  const subresources: SubresourceDescriptor[] = [];
  const subStrategies: Record<string, SubresourceStrategy> = {};
  if (scale) {
    subresources.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: ['get', 'patch', 'update'] });
    subStrategies['scale'] = scaleSubresource(scale);
  }
  if (statusEnabled) {
    subresources.push({ name: 'status', kind, verbs: ['get', 'patch', 'update'] });
    subStrategies['status'] = {
      merge(incoming, current) {
        const status = (incoming as Record<string, unknown>)['status'];
        const next = current as Record<string, unknown>;
        if (status === undefined) delete next['status'];
        else next['status'] = status;
        return current;
      },
    };
  }

  const descriptor: ResourceDescriptor = {
    group,
    version,
    kind,
    listKind,
    plural,
    singular: names.singular ?? kind.toLowerCase(),
    shortNames: names.shortNames ?? [],
    categories: names.categories ?? [],
    namespaced,
    verbs: ALL_VERBS,
    // upstream's discovery controller: "if we're terminating we don't allow some verbs"
    ...(opts.terminating?.() ? { discoveryVerbs: ['delete', 'deletecollection', 'get', 'list', 'watch'] } : {}),
    subresources,
    definitionName: defName,
  };

  const validate = (obj: KubeObject, old: KubeObject | undefined): FieldIssue[] => {
    if (!structural) return [];
    const issues = validateObject(obj, structural);
    if (!rules) return issues;
    // hasBlockingErr upstream: CEL rules only run on an object whose fields have the schema's
    // types; otherwise one error says so in their place.
    if (issues.some((i) => i.type === 'FieldValueTypeInvalid')) {
      issues.push(
        fieldIssue.invalid(
          '<nil>',
          'null',
          'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
        ),
      );
    } else issues.push(...rules.validate(obj, old));
    return issues;
  };

  const strategy: Strategy = {
    namespaced,
    finalizerNames: 'custom-resource',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    defaults(obj) {
      if (structural) defaultAndPruneNulls(obj, structural);
    },
    prepareForCreate(obj) {
      if (opts.terminating?.()) {
        throw forbidden({ group, resource: plural }, obj.metadata?.name ?? '', 'create not allowed while custom resource definition is terminating');
      }
      if (statusEnabled) delete (obj as Record<string, unknown>)['status'];
      obj.metadata!.generation = 1;
    },
    prepareForUpdate(obj, old) {
      if (statusEnabled) {
        const prev = (old as Record<string, unknown>)['status'];
        if (prev === undefined) delete (obj as Record<string, unknown>)['status'];
        else (obj as Record<string, unknown>)['status'] = cloneObject(prev);
      }
      const gen = old.metadata?.generation ?? 1;
      obj.metadata!.generation = semanticEqual(withoutMetaAndStatus(obj, statusEnabled), withoutMetaAndStatus(old, statusEnabled)) ? gen : gen + 1;
    },
    validate: (obj) => validate(obj, undefined),
    validateUpdate: (obj, old) => validate(obj, old),
    ...(selectable.length
      ? {
          selectableFields(obj: KubeObject): Record<string, string> {
            const out: Record<string, string> = {};
            for (const f of selectable) {
              const v = getPath(obj, f.fields);
              out[f.name] = v === undefined || v === null ? '' : String(v);
            }
            return out;
          },
        }
      : {}),
    tableColumns: table.columns,
    tableCells: table.cells,
    subresources: subStrategies,
    ...(statusEnabled ? { resetFields: { '': [['status']], status: [['metadata'], ['spec']] } } : {}),
  };

  const needsConversion = (spec.versions?.length ?? 0) > 1 || (crd.status?.storedVersions?.length ?? 0) > 1 || defaulting;
  const converted = new WeakMap<KubeObject, KubeObject>();
  const webhook = spec.conversion?.strategy === 'Webhook' ? opts.conversion : undefined;
  const converter: VersionConverter = {
    // Strategy Webhook: the webhook converts between versions first; what follows then only
    // defaults (fromStorage) or finds the object in the storage version already (toStorage).
    ...(webhook
      ? {
          external: {
            toStorage: async (obj: KubeObject) => (await webhook.convert([obj], storageAPIVersion))[0]!,
            fromStorage: (objs: readonly KubeObject[]) => webhook.convert(objs, servedAPIVersion),
          },
        }
      : {}),
    toStorage(obj) {
      return obj.apiVersion === storageAPIVersion ? obj : { ...obj, apiVersion: storageAPIVersion };
    },
    fromStorage(stored) {
      if (stored.apiVersion === servedAPIVersion && !defaulting) return stored;
      let out = converted.get(stored);
      if (out) return out;
      // Defaults were filled when the object was written, unless the schema gained some since:
      // then the stored object is served as it is (no copy; the store can send its bytes).
      if (stored.apiVersion === servedAPIVersion && !needsDefaulting(stored, structural)) {
        converted.set(stored, stored);
        return stored;
      }
      out = cloneObject(stored);
      out.apiVersion = servedAPIVersion;
      if (defaulting && structural) {
        defaultAndPruneNulls(out, structural);
      }
      converted.set(stored, out);
      return out;
    },
  };

  const warning = v.deprecated ? (v.deprecationWarning ?? `${group}/${version} ${kind} is deprecated`) : undefined;
  const registration: ResourceRegistration = {
    descriptor,
    strategy,
    keyPrefix: `/registry/${group}/${plural}/`,
    ...(needsConversion ? { converter } : {}),
    strategicMergePatch: false,
    customResource: true,
    pruneUnknownFields: (obj) => prune(obj, structural, { isResourceRoot: true, pruneRootMetadata: true }),
    ...(warning ? { warnings: [warning] } : {}),
  };
  return { registration, definitions: definitionsFor(defName, group, version, kind, listKind, plural, schema) };
}
