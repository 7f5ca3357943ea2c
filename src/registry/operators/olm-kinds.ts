// OLM's kinds (operators.coreos.com), served as built-in resources shaped like the CRDs that
// operator-framework/api ships (crds/operators.coreos.com_*.yaml): namespaced, a status
// subresource, the CRDs' short names, categories and additionalPrinterColumns. CatalogSource's
// spec is validated as its CRD schema does (required fields and the types of its fields); the other
// kinds are stored as their CRDs accept them for the steps that come next (the resolver,
// Subscription → InstallPlan → CSV), with `spec` and `status` kept as written.
import { isDeepStrictEqual } from 'node:util';
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import { ALL_VERBS, type ResourceDescriptor } from '../../apimachinery/resource.js';
import type { Definitions, OpenAPISchema } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { apiVersionField, kind, kindField, listKind, objectMetaField, struct } from '../../apimachinery/definitions/util.js';
import type { ResourceRegistration } from '../registry.js';
import { keepStoredField, type Strategy, type TableColumn } from '../strategy.js';
import { ageColumn, ageSince, CREATION_TIMESTAMP_DESCRIPTION, nameColumn } from '../table.js';

export const OPERATORS_GROUP = 'operators.coreos.com';
/** The definitions' prefix, as OLM's generated OpenAPI names them. */
const DEF = 'com.github.operator-framework.api.pkg.operators.';

/** One additionalPrinterColumn of an OLM CRD: a JSON path into the object. */
interface PrinterColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'boolean' | 'date';
  readonly description?: string;
  /** Dot path from the root; a trailing `[0]` takes a list's first item. */
  readonly path: string;
}

/** A cell as the CRD table convertor renders a JSON path: absent → nil (kubectl prints `<none>`), date → age. */
function cellAt(o: KubeObject, c: PrinterColumn): unknown {
  let cur: unknown = o;
  for (const part of c.path.split('.')) {
    const m = /^(\w+)\[(\d+)\]$/.exec(part);
    const key = m ? m[1]! : part;
    cur = cur && typeof cur === 'object' && !Array.isArray(cur) ? (cur as Record<string, unknown>)[key] : undefined;
    if (m) cur = Array.isArray(cur) ? cur[Number(m[2])] : undefined;
  }
  if (cur === undefined || cur === null) return null;
  if (c.type === 'date') return typeof cur === 'string' ? ageSince(cur) : null;
  if (typeof cur === 'object') return JSON.stringify(cur);
  return cur;
}

function columnsOf(printer: readonly PrinterColumn[] | undefined): { tableColumns: TableColumn[]; tableCells: (o: KubeObject) => unknown[] } {
  // A CRD without additionalPrinterColumns shows NAME and AGE.
  if (!printer) {
    return {
      tableColumns: [nameColumn, ageColumn],
      tableCells: (o) => [o.metadata?.name ?? '', ageSince(o.metadata?.creationTimestamp)],
    };
  }
  return {
    tableColumns: [
      nameColumn,
      ...printer.map(
        (c): TableColumn => ({
          name: c.name,
          type: c.type === 'date' ? 'date' : c.type,
          description: c.description ?? (c.path === 'metadata.creationTimestamp' ? CREATION_TIMESTAMP_DESCRIPTION : ''),
          priority: 0,
        }),
      ),
    ],
    tableCells: (o) => [o.metadata?.name ?? '', ...printer.map((c) => cellAt(o, c))],
  };
}

interface OlmKind {
  readonly kind: string;
  readonly plural: string;
  readonly version: string;
  readonly shortNames: readonly string[];
  readonly description: string;
  readonly printerColumns?: readonly PrinterColumn[];
  /** The spec's schema (default: any object, kept as written). */
  readonly spec?: OpenAPISchema;
  readonly status?: OpenAPISchema;
  /** Validation of the object beyond metadata (create and update). */
  readonly validate?: (o: KubeObject) => FieldIssue[];
}

const anyObject = (description: string): OpenAPISchema => ({ type: 'object', description, 'x-kubernetes-preserve-unknown-fields': true });

function withoutMetaAndStatus(o: KubeObject): Record<string, unknown> {
  const { metadata: _m, status: _s, apiVersion: _a, kind: _k, ...rest } = o as Record<string, unknown>;
  return rest;
}

/** A CRD-shaped strategy: metadata.generation moves with spec changes, status only through /status. */
function crdLikeStrategy(k: OlmKind): Strategy {
  const validate = k.validate ?? (() => []);
  return {
    namespaced: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    finalizerNames: 'custom-resource',
    prepareForCreate(o) {
      delete (o as Record<string, unknown>).status;
      (o.metadata ??= {}).generation = 1;
    },
    prepareForUpdate(o, old) {
      keepStoredField(o, old, 'status');
      // As a custom resource with a status subresource: a change of anything but metadata and status.
      const gen = old.metadata?.generation ?? 1;
      (o.metadata ??= {}).generation = isDeepStrictEqual(withoutMetaAndStatus(o), withoutMetaAndStatus(old)) ? gen : gen + 1;
    },
    validate,
    validateUpdate: (o) => validate(o),
    resetFields: { '': [['status']], status: [['spec']] },
    subresources: {
      status: {
        merge: (incoming) => incoming,
        prepareForUpdate(o, old) {
          keepStoredField(o, old, 'spec');
        },
        validateUpdate: (o) => validate(o),
      },
    },
    ...columnsOf(k.printerColumns),
  };
}

function registration(k: OlmKind): ResourceRegistration {
  const gv = { group: OPERATORS_GROUP, version: k.version };
  const defName = `${DEF}${k.version}.${k.kind}`;
  const descriptor: ResourceDescriptor = {
    group: OPERATORS_GROUP,
    version: k.version,
    kind: k.kind,
    listKind: `${k.kind}List`,
    plural: k.plural,
    singular: k.kind.toLowerCase(),
    shortNames: k.shortNames,
    categories: ['olm'],
    namespaced: true,
    verbs: ALL_VERBS,
    subresources: [{ name: 'status', kind: k.kind, verbs: ['get', 'patch', 'update'] }],
    definitionName: defName,
  };
  const definitions: Definitions = {
    [defName]: kind({ ...gv, kind: k.kind }, k.description, {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: k.spec ?? anyObject(`The desired state of the ${k.kind}.`),
      status: k.status ?? anyObject(`The observed state of the ${k.kind}.`),
    }),
    [`${defName}List`]: listKind(gv, defName, k.kind, `The ${k.plural}.`),
  };
  // Custom resources upstream: no strategic merge patch (415), as the CRD handler answers.
  return { descriptor, strategy: crdLikeStrategy(k), definitions, strategicMergePatch: false };
}

// ---------------------------------------------------------------------------------------------
// CatalogSource (operators.coreos.com/v1alpha1)

type Json = Record<string, unknown>;

/** The JSON type name kube-openapi's validator reports for a value. */
function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

/** kube-openapi's type error as a custom resource's validation reports it. */
function typeIssue(path: string, want: string, v: unknown): FieldIssue {
  const got = jsonType(v);
  return fieldIssue.typeInvalid(path, got, `${path} in body must be of type ${want}: ${JSON.stringify(got)}`);
}

function checkType(issues: FieldIssue[], obj: Json, key: string, path: string, want: 'string' | 'integer' | 'object' | 'array' | 'boolean'): boolean {
  if (!Object.hasOwn(obj, key)) return false;
  const v = obj[key];
  if (jsonType(v) === want) return true;
  issues.push(typeIssue(`${path}.${key}`, want, v));
  return false;
}

/** The CatalogSource CRD's schema checks: metadata and spec required, spec.sourceType required, the fields' types. */
export function validateCatalogSource(o: KubeObject): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const root = o as unknown as Json;
  if (!Object.hasOwn(root, 'spec')) return [fieldIssue.required('spec')];
  if (jsonType(root.spec) !== 'object') return [typeIssue('spec', 'object', root.spec)];
  const spec = root.spec as Json;
  if (!Object.hasOwn(spec, 'sourceType')) issues.push(fieldIssue.required('spec.sourceType'));
  for (const key of ['sourceType', 'address', 'image', 'configMap', 'displayName', 'publisher', 'description', 'runAsRoot'] as const) {
    if (key === 'runAsRoot') checkType(issues, spec, key, 'spec', 'boolean');
    else checkType(issues, spec, key, 'spec', 'string');
  }
  checkType(issues, spec, 'priority', 'spec', 'integer');
  if (checkType(issues, spec, 'secrets', 'spec', 'array')) {
    (spec.secrets as unknown[]).forEach((s, i) => {
      if (typeof s !== 'string') issues.push(typeIssue(`spec.secrets[${i}]`, 'string', s));
    });
  }
  if (checkType(issues, spec, 'icon', 'spec', 'object')) {
    const icon = spec.icon as Json;
    for (const key of ['base64data', 'mediatype']) {
      if (!Object.hasOwn(icon, key)) issues.push(fieldIssue.required(`spec.icon.${key}`));
      else checkType(issues, icon, key, 'spec.icon', 'string');
    }
  }
  if (checkType(issues, spec, 'updateStrategy', 'spec', 'object')) {
    const us = spec.updateStrategy as Json;
    if (checkType(issues, us, 'registryPoll', 'spec.updateStrategy', 'object')) {
      checkType(issues, us.registryPoll as Json, 'interval', 'spec.updateStrategy.registryPoll', 'string');
    }
  }
  checkType(issues, spec, 'grpcPodConfig', 'spec', 'object');
  return issues;
}

const catalogSourceSpec: OpenAPISchema = struct(
  'The catalog: where its registry is served (address, image or configMap) and how it is shown.',
  {
    address: { type: 'string', description: 'A host:port of a registry server (api.Registry over gRPC) to use instead of running one.' },
    configMap: { type: 'string', description: 'The ConfigMap holding a catalog (sourceType configmap).' },
    description: { type: 'string', description: 'A description of the catalog.' },
    displayName: { type: 'string', description: 'The pretty name of the catalog.' },
    grpcPodConfig: anyObject('How the registry pod is run (OLM runs one for spec.image; kplane serves the image in process).'),
    icon: struct('An icon for the catalog.', { base64data: { type: 'string' }, mediatype: { type: 'string' } }, { required: ['base64data', 'mediatype'] }),
    image: { type: 'string', description: 'A catalog image (a file-based catalog) the registry is served from.' },
    priority: { type: 'integer', format: 'int64', description: 'Which catalog the resolver prefers (higher first); default 0.' },
    publisher: { type: 'string', description: 'Who publishes the catalog.' },
    runAsRoot: { type: 'boolean', description: 'Run the registry pod as root (OLM; unused by kplane).' },
    secrets: { type: 'array', items: { type: 'string' }, description: 'Names of pull secrets for the catalog image.' },
    sourceType: { type: 'string', description: 'The type of the catalog: grpc (address or image), configmap or internal.' },
    updateStrategy: struct('How the catalog is kept up to date.', {
      registryPoll: struct('Poll the image for a new digest.', {
        interval: { type: 'string', description: 'How often, as a Go duration (e.g. 45m).' },
      }),
    }),
  },
  { required: ['sourceType'] },
);

const catalogSourceStatus: OpenAPISchema = anyObject(
  'The catalog as observed: connectionState {address, lastObservedState, lastConnect}, registryService, latestImageRegistryPoll, message, reason, conditions.',
);

const KINDS: readonly OlmKind[] = [
  {
    kind: 'CatalogSource',
    plural: 'catalogsources',
    version: 'v1alpha1',
    shortNames: ['catsrc'],
    description: 'CatalogSource is a repository of CSVs, CRDs, and operator packages.',
    printerColumns: [
      { name: 'Display', type: 'string', path: 'spec.displayName', description: 'The pretty name of the catalog' },
      { name: 'Type', type: 'string', path: 'spec.sourceType', description: 'The type of the catalog' },
      { name: 'Publisher', type: 'string', path: 'spec.publisher', description: 'The publisher of the catalog' },
      { name: 'Age', type: 'date', path: 'metadata.creationTimestamp' },
    ],
    spec: catalogSourceSpec,
    status: catalogSourceStatus,
    validate: validateCatalogSource,
  },
  {
    kind: 'Subscription',
    plural: 'subscriptions',
    version: 'v1alpha1',
    shortNames: ['sub', 'subs'],
    description: 'Subscription keeps operators up to date by tracking changes to Catalogs.',
    printerColumns: [
      { name: 'Package', type: 'string', path: 'spec.name', description: 'The package subscribed to' },
      { name: 'Source', type: 'string', path: 'spec.source', description: 'The catalog source for the specified package' },
      { name: 'Channel', type: 'string', path: 'spec.channel', description: 'The channel of updates to subscribe to' },
    ],
    validate: requireSpec,
  },
  {
    kind: 'InstallPlan',
    plural: 'installplans',
    version: 'v1alpha1',
    shortNames: ['ip'],
    description: 'InstallPlan defines the installation of a set of operators.',
    printerColumns: [
      { name: 'CSV', type: 'string', path: 'spec.clusterServiceVersionNames[0]', description: 'The first CSV in the list of clusterServiceVersionNames' },
      { name: 'Approval', type: 'string', path: 'spec.approval', description: 'The approval mode' },
      { name: 'Approved', type: 'boolean', path: 'spec.approved' },
    ],
    validate: requireSpec,
  },
  {
    kind: 'ClusterServiceVersion',
    plural: 'clusterserviceversions',
    version: 'v1alpha1',
    shortNames: ['csv', 'csvs'],
    description: 'ClusterServiceVersion is a Custom Resource of type `ClusterServiceVersionSpec`.',
    printerColumns: [
      { name: 'Display', type: 'string', path: 'spec.displayName', description: 'The name of the CSV' },
      { name: 'Version', type: 'string', path: 'spec.version', description: 'The version of the CSV' },
      { name: 'Release', type: 'string', path: 'spec.release', description: 'The release of this version of the CSV' },
      { name: 'Replaces', type: 'string', path: 'spec.replaces', description: 'The name of a CSV that this one replaces' },
      { name: 'Phase', type: 'string', path: 'status.phase' },
    ],
    validate: requireSpec,
  },
  {
    kind: 'OperatorGroup',
    plural: 'operatorgroups',
    version: 'v1',
    shortNames: ['og'],
    description: 'OperatorGroup is the unit of multitenancy for OLM managed operators.',
  },
];

/** The CRDs' `required: [metadata, spec]`. */
function requireSpec(o: KubeObject): FieldIssue[] {
  const root = o as unknown as Json;
  if (!Object.hasOwn(root, 'spec')) return [fieldIssue.required('spec')];
  if (jsonType(root.spec) !== 'object') return [typeIssue('spec', 'object', root.spec)];
  return [];
}

export const [catalogSources, subscriptions, installPlans, clusterServiceVersions, operatorGroups] = KINDS.map(registration) as [
  ResourceRegistration,
  ResourceRegistration,
  ResourceRegistration,
  ResourceRegistration,
  ResourceRegistration,
];

export const CATALOG_SOURCES_GVR = { group: OPERATORS_GROUP, version: 'v1alpha1', resource: 'catalogsources' } as const;
