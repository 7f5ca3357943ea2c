// ObjectMeta rules every resource shares (apimachinery/pkg/api/validation/objectmeta.go and
// meta/v1/validation). Validators collect every issue and never throw or mutate.
import { fieldIssue, type FieldIssue } from '../errors.js';
import { isJsonObject, parseApiVersion } from '../types.js';
import type { ManagedFieldsEntry, ObjectMeta, OwnerReference } from '../types.js';
import type { LabelSelectorObject } from '../labels.js';
import { isQualifiedName, isValidLabelValue, validateNamespaceName, type NameValidator } from './names.js';

export const FIELD_IMMUTABLE_MESSAGE = 'field is immutable';
export const TOTAL_ANNOTATION_SIZE_LIMIT_BYTES = 256 * 1024;
export const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';
export const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';

/**
 * `finalizers` with the garbage collector's two (orphan, foregroundDeletion) present as asked, the
 * others kept in order; undefined when that is the set they already hold.
 */
export function withGcFinalizers(finalizers: readonly string[], orphan: boolean, foreground: boolean): string[] | undefined {
  if (orphan === finalizers.includes(FINALIZER_ORPHAN_DEPENDENTS) && foreground === finalizers.includes(FINALIZER_DELETE_DEPENDENTS)) return undefined;
  const next = finalizers.filter((f) => f !== FINALIZER_ORPHAN_DEPENDENTS && f !== FINALIZER_DELETE_DEPENDENTS);
  if (orphan) next.push(FINALIZER_ORPHAN_DEPENDENTS);
  if (foreground) next.push(FINALIZER_DELETE_DEPENDENTS);
  return next;
}
const IS_NEGATIVE_MESSAGE = 'must be greater than or equal to 0';

/**
 * How a kind judges `metadata.finalizers` names beyond the qualified-name rule every kind shares:
 * - `generic`: only that rule (apimachinery's ValidateObjectMeta: leases, core/v1 events, CRDs);
 * - `kube`: core validation's ValidateObjectMeta wrapper (configmaps, secrets, namespaces,
 *   serviceaccounts, events.k8s.io/v1 events) also refuses a name without a `/` that is not a
 *   standard finalizer, on create and on every update;
 * - `custom-resource`: custom resources accept such a name with a warning ({@link finalizerWarnings}).
 */
export type FinalizerNamePolicy = 'generic' | 'kube' | 'custom-resource';

export interface ObjectMetaValidationOptions {
  namespaced: boolean;
  /** Checks `name` (prefix=false) and `generateName` (prefix=true). */
  nameValidator: NameValidator;
  /** Root of the field paths; `metadata` unless validating an embedded template. */
  path?: string;
  /** Default `generic`. */
  finalizerNames?: FinalizerNamePolicy;
}

/**
 * field.TooLong as released upstream since 1.32 ("must have at most N bytes"); errors.ts still has
 * the older "may not be more than" wording, so this module builds its own.
 */
function tooLongBytes(field: string, maxBytes: number): FieldIssue {
  return { ...fieldIssue.tooLong(field, '', maxBytes), detail: `must have at most ${maxBytes} ${maxBytes === 1 ? 'byte' : 'bytes'}` };
}

const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');

export function validateLabels(labels: Record<string, string> | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!labels) return issues;
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) issues.push(fieldIssue.invalid(path, k, m));
    if (typeof v !== 'string') {
      issues.push(fieldIssue.typeInvalid(path, v, 'must be a string'));
      continue;
    }
    for (const m of isValidLabelValue(v)) issues.push(fieldIssue.invalid(path, v, m));
  }
  return issues;
}

/** metav1validation.ValidateLabelSelector (invalid label values refused). */
export function validateLabelSelector(ls: LabelSelectorObject, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [...validateLabels(ls.matchLabels, `${path}.matchLabels`)];
  (ls.matchExpressions ?? []).forEach((e, i) => {
    const p = `${path}.matchExpressions[${i}]`;
    switch (e.operator) {
      case 'In':
      case 'NotIn':
        if (!e.values?.length) issues.push(fieldIssue.required(`${p}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (e.values?.length) issues.push(fieldIssue.forbidden(`${p}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
        break;
      default:
        issues.push(fieldIssue.invalid(`${p}.operator`, e.operator, 'not a valid selector operator'));
    }
    for (const msg of isQualifiedName(e.key ?? '')) issues.push(fieldIssue.invalid(`${p}.key`, e.key ?? '', msg));
    (e.values ?? []).forEach((v, j) => {
      for (const msg of isValidLabelValue(v)) issues.push(fieldIssue.invalid(`${p}.values[${j}]`, v, msg));
    });
  });
  return issues;
}

export function validateAnnotations(annotations: Record<string, string> | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!annotations) return issues;
  let total = 0;
  for (const [k, v] of Object.entries(annotations)) {
    // Annotation keys are qualified names where case does not matter.
    for (const m of isQualifiedName(k.toLowerCase())) issues.push(fieldIssue.invalid(path, k, m));
    total += utf8Length(k) + (typeof v === 'string' ? utf8Length(v) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT_BYTES) issues.push(tooLongBytes(path, TOTAL_ANNOTATION_SIZE_LIMIT_BYTES));
  return issues;
}

/** schema.FromAPIVersionAndKind: an unparseable apiVersion yields an empty version. */
function versionOf(apiVersion: string | undefined): { group: string; version: string } {
  if (!apiVersion || apiVersion.split('/').length > 2) return { group: '', version: '' };
  return parseApiVersion(apiVersion);
}

function validateOwnerReference(ref: OwnerReference, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const gv = versionOf(ref.apiVersion);
  if (!gv.version) issues.push(fieldIssue.invalid(`${path}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty'));
  if (!ref.kind) issues.push(fieldIssue.invalid(`${path}.kind`, ref.kind ?? '', 'must not be empty'));
  if (!ref.name) issues.push(fieldIssue.invalid(`${path}.name`, ref.name ?? '', 'must not be empty'));
  if (!ref.uid) issues.push(fieldIssue.invalid(`${path}.uid`, ref.uid ?? '', 'must not be empty'));
  // Events are garbage collected on their own schedule; owning anything through them is refused.
  if (gv.group === '' && gv.version === 'v1' && ref.kind === 'Event') {
    issues.push(fieldIssue.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
  }
  return issues;
}

/** Upstream reports owner reference problems at `ownerReferences.<field>`, without an index. */
export function validateOwnerReferences(refs: OwnerReference[] | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!refs) return issues;
  let firstController = '';
  for (const ref of refs) {
    issues.push(...validateOwnerReference(ref, path));
    if (ref.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController) {
        issues.push(
          fieldIssue.invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else {
        firstController = current;
      }
    }
  }
  return issues;
}

export function validateFinalizers(finalizers: string[] | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (!finalizers) return issues;
  for (const f of finalizers) for (const m of isQualifiedName(f)) issues.push(fieldIssue.invalid(path, f, m));
  if (finalizers.includes(FINALIZER_ORPHAN_DEPENDENTS) && finalizers.includes(FINALIZER_DELETE_DEPENDENTS)) {
    issues.push(fieldIssue.invalid(path, finalizers, `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`));
  }
  return issues;
}

/** The finalizer names kube itself uses (core helper's standardFinalizers). */
const STANDARD_FINALIZERS = new Set(['kubernetes', FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS]);

export function isStandardFinalizerName(name: string): boolean {
  return STANDARD_FINALIZERS.has(name);
}

/** Core validation's validateKubeFinalizerName: a name without a `/` must be a standard one. */
export function validateKubeFinalizerName(name: string, path: string): FieldIssue[] {
  if (name.includes('/') || isStandardFinalizerName(name)) return [];
  return [fieldIssue.invalid(path, name, 'name is neither a standard finalizer name nor is it fully qualified')];
}

/**
 * Core validation's validateFinalizerName, used for a namespace's `spec.finalizers`: the
 * qualified-name rule, then {@link validateKubeFinalizerName}, both at `path`.
 */
export function validateFinalizerName(name: string, path: string): FieldIssue[] {
  return [...isQualifiedName(name).map((m) => fieldIssue.invalid(path, name, m)), ...validateKubeFinalizerName(name, path)];
}

/** What the `kube` policy adds, per finalizer at its index (upstream appends it after the rest of metadata). */
function kubeFinalizerIssues(meta: ObjectMeta, opts: Partial<ObjectMetaValidationOptions>, path: string): FieldIssue[] {
  if (opts.finalizerNames !== 'kube') return [];
  return (meta.finalizers ?? []).flatMap((f, i) => validateKubeFinalizerName(f, `${path}.finalizers[${i}]`));
}

/**
 * Custom resources accept a finalizer without a domain prefix but warn (Warning header), since two
 * controllers picking the same short name would release each other's objects. Built-in kinds never
 * warn: `kube` kinds refuse such names instead and `generic` kinds accept them silently.
 */
export function finalizerWarnings(finalizers: string[] | undefined, policy: FinalizerNamePolicy = 'custom-resource', path = 'metadata.finalizers'): string[] {
  const warnings: string[] = [];
  if (policy !== 'custom-resource') return warnings;
  for (const f of finalizers ?? []) {
    if (!f.includes('/') && !isStandardFinalizerName(f)) {
      warnings.push(
        `${path}: ${JSON.stringify(f)}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers`,
      );
    }
  }
  return warnings;
}

export function validateManagedFields(entries: ManagedFieldsEntry[] | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  (entries ?? []).forEach((e, i) => {
    const p = `${path}[${i}]`;
    if (e.operation !== 'Apply' && e.operation !== 'Update')
      issues.push(fieldIssue.invalid(`${p}.operation`, e.operation ?? '', 'must be `Apply` or `Update`'));
    if (e.fieldsType !== 'FieldsV1') issues.push(fieldIssue.invalid(`${p}.fieldsType`, e.fieldsType ?? '', 'must be `FieldsV1`'));
    if (e.subresource !== undefined && e.subresource.length > 256) issues.push(tooLongBytes(`${p}.subresource`, 256));
    if (e.fieldsV1 !== undefined && !isJsonObject(e.fieldsV1)) issues.push(fieldIssue.invalid(`${p}.fieldsV1`, e.fieldsV1, 'must be an object'));
  });
  return issues;
}

function validateCommon(meta: ObjectMeta, opts: ObjectMetaValidationOptions, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  if (opts.namespaced) {
    if (!meta.namespace) issues.push(fieldIssue.required(`${path}.namespace`));
    else for (const m of validateNamespaceName(meta.namespace, false)) issues.push(fieldIssue.invalid(`${path}.namespace`, meta.namespace, m));
  } else if (meta.namespace) {
    issues.push(fieldIssue.forbidden(`${path}.namespace`, 'not allowed on this type'));
  }
  if (meta.generation !== undefined && meta.generation < 0) issues.push(fieldIssue.invalid(`${path}.generation`, meta.generation, IS_NEGATIVE_MESSAGE));
  issues.push(...validateLabels(meta.labels, `${path}.labels`));
  issues.push(...validateAnnotations(meta.annotations, `${path}.annotations`));
  issues.push(...validateOwnerReferences(meta.ownerReferences, `${path}.ownerReferences`));
  issues.push(...validateFinalizers(meta.finalizers, `${path}.finalizers`));
  issues.push(...validateManagedFields(meta.managedFields, `${path}.managedFields`));
  return issues;
}

/** ValidateObjectMetaAccessor: expects name generation to have run already. */
export function validateObjectMetaCreate(meta: ObjectMeta, opts: ObjectMetaValidationOptions): FieldIssue[] {
  const path = opts.path ?? 'metadata';
  const issues: FieldIssue[] = [];
  if (meta.generateName) {
    for (const m of opts.nameValidator(meta.generateName, true)) issues.push(fieldIssue.invalid(`${path}.generateName`, meta.generateName, m));
  }
  if (!meta.name) issues.push(fieldIssue.required(`${path}.name`, 'name or generateName is required'));
  else for (const m of opts.nameValidator(meta.name, false)) issues.push(fieldIssue.invalid(`${path}.name`, meta.name, m));
  issues.push(...validateCommon(meta, opts, path));
  issues.push(...kubeFinalizerIssues(meta, opts, path));
  return issues;
}

function sameValue(a: unknown, b: unknown): boolean {
  // Unset and null are the same to Go's semantic equality for pointers and metav1.Time.
  return (a ?? null) === (b ?? null);
}

function immutable(issues: FieldIssue[], field: string, newValue: unknown, oldValue: unknown): void {
  if (!sameValue(newValue, oldValue)) issues.push(fieldIssue.invalid(field, newValue ?? '', FIELD_IMMUTABLE_MESSAGE));
}

/** ValidateObjectMetaAccessorUpdate. Run after {@link prepareObjectMetaForUpdate}, as upstream does. */
export function validateObjectMetaUpdate(newMeta: ObjectMeta, oldMeta: ObjectMeta, opts: Partial<ObjectMetaValidationOptions> = {}): FieldIssue[] {
  const path = opts.path ?? 'metadata';
  const issues: FieldIssue[] = [];
  if (oldMeta.deletionTimestamp) {
    const old = new Set(oldMeta.finalizers ?? []);
    const extra = [...new Set(newMeta.finalizers ?? [])].filter((f) => !old.has(f)).sort();
    if (extra.length) {
      issues.push(
        fieldIssue.forbidden(
          `${path}.finalizers`,
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  if (!newMeta.resourceVersion) issues.push(fieldIssue.invalid(`${path}.resourceVersion`, newMeta.resourceVersion ?? '', 'must be specified for an update'));
  if ((newMeta.generation ?? 0) < (oldMeta.generation ?? 0))
    issues.push(fieldIssue.invalid(`${path}.generation`, newMeta.generation ?? 0, 'must not be decremented'));
  immutable(issues, `${path}.name`, newMeta.name ?? '', oldMeta.name ?? '');
  immutable(issues, `${path}.namespace`, newMeta.namespace ?? '', oldMeta.namespace ?? '');
  immutable(issues, `${path}.uid`, newMeta.uid ?? '', oldMeta.uid ?? '');
  immutable(issues, `${path}.creationTimestamp`, newMeta.creationTimestamp, oldMeta.creationTimestamp);
  immutable(issues, `${path}.deletionTimestamp`, newMeta.deletionTimestamp, oldMeta.deletionTimestamp);
  immutable(issues, `${path}.deletionGracePeriodSeconds`, newMeta.deletionGracePeriodSeconds, oldMeta.deletionGracePeriodSeconds);
  issues.push(...validateLabels(newMeta.labels, `${path}.labels`));
  issues.push(...validateAnnotations(newMeta.annotations, `${path}.annotations`));
  issues.push(...validateOwnerReferences(newMeta.ownerReferences, `${path}.ownerReferences`));
  issues.push(...validateManagedFields(newMeta.managedFields, `${path}.managedFields`));
  // Only the `kube` policy looks at finalizer names on update (apimachinery's update check does not).
  issues.push(...kubeFinalizerIssues(newMeta, opts, path));
  return issues;
}

/**
 * rest.BeforeCreate's metadata part: clients may not set deletion state on create, and a
 * generateName with no name gets a generated name from `generate`.
 */
export function prepareObjectMetaForCreate(meta: ObjectMeta, generate: (base: string) => string): void {
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  if (!meta.name && meta.generateName) meta.name = generate(meta.generateName);
}

/**
 * rest.BeforeUpdate's metadata part: system-owned fields a client cannot change silently keep
 * their stored values (generation, uid when omitted, creationTimestamp, deletion state).
 */
export function prepareObjectMetaForUpdate(newMeta: ObjectMeta, oldMeta: ObjectMeta): void {
  if (oldMeta.generation !== undefined) newMeta.generation = oldMeta.generation;
  else delete newMeta.generation;
  if (!newMeta.uid && oldMeta.uid) newMeta.uid = oldMeta.uid;
  if (oldMeta.creationTimestamp) newMeta.creationTimestamp = oldMeta.creationTimestamp;
  if (oldMeta.deletionTimestamp && newMeta.deletionTimestamp !== oldMeta.deletionTimestamp) newMeta.deletionTimestamp = oldMeta.deletionTimestamp;
  if (oldMeta.deletionGracePeriodSeconds !== undefined && newMeta.deletionGracePeriodSeconds === undefined) {
    newMeta.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
  }
}

/**
 * What a round trip through Go's ObjectMeta does to empty values: every collection and string in
 * it is `omitempty`, so `labels: {}` (left by removing the last label with a patch),
 * `finalizers: []` or `generateName: ""` are not stored or served.
 */
export function dropEmptyObjectMetaFields(meta: ObjectMeta): void {
  const m = meta as Record<string, unknown>;
  for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences', 'managedFields', 'generateName', 'namespace', 'selfLink', 'uid'] as const) {
    const v = m[key];
    if (
      v === null ||
      v === '' ||
      (Array.isArray(v) && v.length === 0) ||
      (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
    ) {
      delete m[key];
    }
  }
}
