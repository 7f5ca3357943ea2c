// A resource's behaviour, as data and small functions: the generic store never branches on kind.
import type { FieldIssue } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { NameValidator } from '../apimachinery/validation/names.js';
import type { FinalizerNamePolicy } from '../apimachinery/validation/objectmeta.js';
import type { DeleteOptions } from './delete-options.js';
import type { Storage } from '../storage/storage.js';
import { cloneObject } from './codec.js';

export interface TableColumn {
  readonly name: string;
  readonly type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  readonly format?: string;
  readonly description: string;
  /** 0 = shown by default; >0 only with `-o wide`. */
  readonly priority: number;
}

export interface Strategy {
  readonly namespaced: boolean;
  /** PUT on a missing object creates it. */
  readonly allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion is accepted (last write wins). */
  readonly allowUnconditionalUpdate: boolean;
  /** Rules for metadata.name (default: DNS-1123 subdomain). */
  readonly nameValidator?: NameValidator;
  /**
   * How metadata.finalizers names are judged (default `generic`): `kube` for kinds whose upstream
   * validation goes through core's ValidateObjectMeta wrapper, `custom-resource` for the warning.
   */
  readonly finalizerNames?: FinalizerNamePolicy;
  /** Normalise a new object (status reset, defaults, generation). Mutates `obj`. */
  prepareForCreate(obj: KubeObject): void;
  /** Normalise an update against the stored object (e.g. keep status on a spec write). Mutates `obj`. */
  prepareForUpdate(obj: KubeObject, old: KubeObject): void;
  /** Kind-specific validation of a new object; must not mutate. */
  validate(obj: KubeObject): FieldIssue[];
  /** Kind-specific validation of an update; must not mutate. */
  validateUpdate(obj: KubeObject, old: KubeObject): FieldIssue[];
  /** Fill defaults (also applied to objects read back from storage). */
  defaults?(obj: KubeObject): void;
  /** Field-selector values besides metadata.name / metadata.namespace. */
  selectableFields?(obj: KubeObject): Record<string, string>;
  /** Extra columns after NAME (and before AGE unless the kind puts AGE elsewhere). */
  readonly tableColumns?: readonly TableColumn[];
  tableCells?(obj: KubeObject): unknown[];
  /** Warnings returned with a write (Warning headers). */
  warningsOnCreate?(obj: KubeObject): string[];
  warningsOnUpdate?(obj: KubeObject, old: KubeObject): string[];
  /**
   * Fields each endpoint resets, so that no field manager owns them there (upstream's
   * ResetFieldsStrategy): key '' is the resource itself, other keys name subresources; each path
   * is field names from the root, e.g. `{ '': [['status']], status: [['spec']] }`.
   */
  readonly resetFields?: Readonly<Record<string, readonly (readonly string[])[]>>;
  /** Hooks for subresources: what a write through `/status` (etc.) may change. */
  readonly subresources?: Readonly<Record<string, SubresourceStrategy>>;
  /**
   * A REST Delete of the resource's own in front of the generic one (upstream's namespace and CRD
   * REST), given the object as read and the options; the store has checked the preconditions in
   * storage's words already. `proceed`: the generic store's delete (finalizers, else removal).
   * `unchanged`: the object is answered as it is, not deleted: nothing is written and admission
   * does not run (a terminating namespace whose spec.finalizers remain). `{ update }`: that object
   * is written instead, with a deletionTimestamp and without a grace period, after admission; it
   * carries the garbage collector's finalizers as this resource wants them (the generic ones are
   * not applied).
   */
  beforeDelete?(obj: KubeObject, opts: DeleteOptions): 'proceed' | 'unchanged' | { update: KubeObject };
  /**
   * Upstream's BeginCreate (the Service REST allocates cluster IPs and node ports there): async
   * work on the new object after defaulting and before prepareForCreate and validation. It may
   * fill fields (the allocated values) and throw StatusErrors (a requested port taken). The
   * returned function is called exactly once: `true` once the object is stored (or a dry run
   * would have stored it), `false` when the create fails anywhere after (validation, admission,
   * storage), so that what was taken is given back.
   */
  beginCreate?(obj: KubeObject, ctx: WriteHookContext): Promise<FinishWrite>;
  /** Upstream's BeginUpdate, the same for updates of the resource itself (not of its subresources), before prepareForUpdate. */
  beginUpdate?(obj: KubeObject, old: KubeObject, ctx: WriteHookContext): Promise<FinishWrite>;
  /** Upstream's AfterDelete: runs once the object is removed from storage (not while finalizers hold it). */
  afterDelete?(obj: KubeObject, ctx: WriteHookContext): Promise<void>;
  /** Whether an object with these finalizers/state may be removed from storage now. */
  canRemove?(obj: KubeObject): boolean;
  /** What a DELETE without propagationPolicy does to dependents when a GC runs (default DeleteDependents). */
  readonly defaultGarbageCollectionPolicy?: 'DeleteDependents' | 'OrphanDependents' | 'Unsupported';
}

/** What the write hooks get: whether the write is a dry run, and the store's storage (for state of their own, as allocators). */
export interface WriteHookContext {
  readonly dryRun: boolean;
  readonly storage: Storage;
}

/** Ends what a begin hook started: success true commits, false reverts. */
export type FinishWrite = (success: boolean) => Promise<void>;

export interface SubresourceStrategy {
  /**
   * Copy from `incoming` onto a copy of `current` only what this subresource owns. With `view`,
   * `incoming` is the subresource's own kind (a Scale), not the parent's.
   */
  merge(incoming: KubeObject, current: KubeObject): KubeObject;
  /**
   * For subresources with a kind of their own (scale → autoscaling/v1 Scale): the object as the
   * subresource shows it. GET answers with it, PUT bodies and PATCH bases are of this kind.
   */
  view?(obj: KubeObject): KubeObject;
  /** Like Strategy.prepareForUpdate, for writes through this subresource (e.g. scale bumps generation). */
  prepareForUpdate?(obj: KubeObject, old: KubeObject): void;
  validateUpdate?(obj: KubeObject, old: KubeObject): FieldIssue[];
  /**
   * POST on the subresource of one object (upstream's NamedCreater: serviceaccounts/token): the
   * body, decoded as the subresource's kind, in; the object to answer with (201) out. Nothing of
   * the parent is written. Throws StatusErrors for what it refuses.
   */
  create?(input: SubresourceCreateInput): Promise<SubresourceCreateResult>;
  /**
   * POST or PUT of a report of the subresource's own kind that the server folds into the parent
   * (features/uses): `validate` judges the body (its issues answer 422), `fold` merges it into the
   * current object inside the store's retry loop. The write is recorded without a managedFields
   * entry for the reporter, and a report already folded in writes nothing.
   */
  readonly report?: SubresourceReport;
}

export interface SubresourceReport {
  validate(body: KubeObject): FieldIssue[];
  fold(body: KubeObject, current: KubeObject, now: Date): SubresourceReportResult;
}

export type SubresourceReportResult =
  | { readonly issues: FieldIssue[] }
  | {
      /** The parent with the report folded in (the current object itself when `changed` is false). */
      readonly object: KubeObject;
      /** What the request is answered with (the report as recorded). */
      readonly answer: KubeObject;
      /** A new entry (201) rather than one replaced or already there (200). */
      readonly created: boolean;
      readonly changed: boolean;
    };

export interface SubresourceCreateInput {
  readonly namespace: string | undefined;
  /** The parent object's name (from the URL). */
  readonly name: string;
  readonly body: KubeObject;
  readonly dryRun: boolean;
  /**
   * Validating admission of the request as the strategy completed it (upstream's createValidation),
   * called after its own validation and before it acts; throws (rejects) with a refusal.
   */
  validate(obj: KubeObject): Promise<void> | undefined;
  /** Reads an object of a served core/v1 resource (`secrets`, `serviceaccounts`); a resource not served reads as not found. */
  get(resource: string, namespace: string | undefined, name: string): Promise<KubeObject>;
}

export interface SubresourceCreateResult {
  readonly object: KubeObject;
  readonly warnings?: readonly string[];
}

/**
 * Puts the stored object's `spec` or `status` back on the object written (a copy): what a write
 * of the object does to status and a write of /status does to spec. Absent (or null) when stored,
 * it is removed from the object written.
 */
export function keepStoredField(o: KubeObject, old: KubeObject, field: 'spec' | 'status'): void {
  const stored = (old as Record<string, unknown>)[field];
  if (stored !== undefined && stored !== null) (o as Record<string, unknown>)[field] = cloneObject(stored);
  else delete (o as Record<string, unknown>)[field];
}
