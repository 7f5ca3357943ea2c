import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { nameIsDNSLabel } from '../../../apimachinery/validation/names.js';
import {
  FINALIZER_DELETE_DEPENDENTS as FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN_DEPENDENTS as FINALIZER_ORPHAN,
  validateFinalizerName,
  withGcFinalizers,
} from '../../../apimachinery/validation/objectmeta.js';
import { cloneObject } from '../../codec.js';
import { keepStoredField, type Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

/** The finalizer the namespace controller removes once the namespace is empty. */
export const KUBERNETES_FINALIZER = 'kubernetes';
/** metav1.NamespaceDefault, NamespaceSystem and NamespacePublic. */
export const NAMESPACE_DEFAULT = 'default';
export const NAMESPACE_SYSTEM = 'kube-system';
export const NAMESPACE_PUBLIC = 'kube-public';
/**
 * The namespaces the system namespaces controller creates at start and re-creates when missing
 * (in this order): the generic control plane's options default SystemNamespaces to kube-system,
 * kube-public and default; kube-node-lease is added by kube-apiserver only. Which namespaces may not
 * be deleted is NamespaceLifecycle's own list (lifecycle.ts), as upstream keeps them apart.
 */
export const SYSTEM_NAMESPACES: readonly string[] = [NAMESPACE_SYSTEM, NAMESPACE_PUBLIC, NAMESPACE_DEFAULT];
/** Namespaces get this label with their own name (kube 1.21+). */
const NAME_LABEL = 'kubernetes.io/metadata.name';

interface NamespaceShape {
  spec?: { finalizers?: string[] };
  status?: { phase?: string; conditions?: unknown[] };
}

function specOf(o: KubeObject): NamespaceShape['spec'] {
  return (o as NamespaceShape).spec;
}
function statusOf(o: KubeObject): NamespaceShape['status'] {
  return (o as NamespaceShape).status;
}

/**
 * ValidateNamespace / ValidateNamespaceFinalizeUpdate: each spec finalizer is a qualified name and,
 * without a `/`, a standard one. Upstream reports them at `spec.finalizers` on create but at
 * `spec.finalizers[i]` through /finalize, so `indexed` picks the path.
 */
function validateSpecFinalizers(o: KubeObject, indexed: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  (specOf(o)?.finalizers ?? []).forEach((f, i) => {
    const path = indexed ? `spec.finalizers[${i}]` : 'spec.finalizers';
    // A non-string cannot reach Go's validation (decoding fails); refuse it without crashing here.
    if (typeof f !== 'string') issues.push(fieldIssue.typeInvalid(path, f, 'must be a string'));
    else issues.push(...validateFinalizerName(f, path));
  });
  return issues;
}

/**
 * ValidateNamespaceStatusUpdate: the phase follows deletionTimestamp. The path's capital `Phase`
 * is upstream's (field.NewPath("status", "Phase")).
 */
function validateStatusUpdate(o: KubeObject): FieldIssue[] {
  const phase = statusOf(o)?.phase ?? '';
  if (!o.metadata?.deletionTimestamp) {
    return phase === 'Active' ? [] : [fieldIssue.invalid('status.Phase', phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  }
  return phase === 'Terminating' ? [] : [fieldIssue.invalid('status.Phase', phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
}

export const namespaceStrategy: Strategy = {
  namespaced: false,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  nameValidator: nameIsDNSLabel,
  finalizerNames: 'kube',
  defaults(o) {
    const meta = (o.metadata ??= {});
    if (meta.name) meta.labels = { ...(meta.labels ?? {}), [NAME_LABEL]: meta.name };
    // SetDefaults_NamespaceStatus: decoding gives every namespace a phase, so a /status write
    // without one means Active.
    const n = o as KubeObject & NamespaceShape;
    if (!n.status?.phase) n.status = { ...(n.status ?? {}), phase: 'Active' };
  },
  prepareForCreate(o) {
    const n = o as KubeObject & NamespaceShape;
    n.status = { phase: 'Active' };
    const fins = n.spec?.finalizers ?? [];
    n.spec = { ...(n.spec ?? {}), finalizers: fins.includes(KUBERNETES_FINALIZER) ? fins : [...fins, KUBERNETES_FINALIZER] };
  },
  prepareForUpdate(o, old) {
    // Spec finalizers change only through /finalize, status only through /status.
    keepStoredField(o, old, 'spec');
    keepStoredField(o, old, 'status');
  },
  // The status is Active on create (prepareForCreate), and an update keeps the stored spec and
  // status (prepareForUpdate): ValidateNamespaceUpdate checks only metadata. Subresources check
  // what they change.
  validate: (o) => validateSpecFinalizers(o, false),
  validateUpdate: () => [],
  selectableFields: (o) => ({ 'status.phase': statusOf(o)?.phase ?? '' }),
  // Status changes only through /status, spec finalizers only through /finalize.
  resetFields: { '': [['status']], status: [['spec']], finalize: [['status']] },
  // namespaceStatusStrategy and namespaceFinalizeStrategy: a write through /status keeps the
  // stored spec, one through /finalize the stored status; everything else of the object written
  // (labels, annotations, metadata.finalizers, ...) is applied, as on the namespace itself.
  subresources: {
    status: {
      merge: (incoming) => incoming,
      prepareForUpdate: (o, old) => keepStoredField(o, old, 'spec'),
      validateUpdate: validateStatusUpdate,
    },
    finalize: {
      merge: (incoming) => incoming,
      prepareForUpdate: (o, old) => keepStoredField(o, old, 'status'),
      validateUpdate: (o) => validateSpecFinalizers(o, true),
    },
  },
  // The namespace REST's Delete (pkg/registry/core/namespace/storage): its own precondition check
  // first; the first DELETE only marks the namespace Terminating (with its deletionTimestamp) and
  // sets the garbage collector's finalizers by its own rules (shouldHaveOrphanFinalizer /
  // shouldHaveDeleteDependentsFinalizer: orphanDependents=false asks for foreground deletion),
  // even when it has no finalizers at all; a terminating namespace with spec.finalizers left is
  // answered as it is, whatever the options; once they are gone, the generic store's delete.
  beforeDelete(o, opts) {
    if (o.metadata?.deletionTimestamp) return (specOf(o)?.finalizers?.length ?? 0) > 0 ? 'unchanged' : 'proceed';
    const next = cloneObject(o) as KubeObject & NamespaceShape;
    next.status = { ...(next.status ?? {}), phase: 'Terminating' };
    const current = next.metadata?.finalizers ?? [];
    const orphan =
      opts.orphanDependents !== undefined
        ? opts.orphanDependents
        : opts.propagationPolicy !== undefined
          ? opts.propagationPolicy === 'Orphan'
          : current.includes(FINALIZER_ORPHAN);
    const foreground =
      opts.orphanDependents !== undefined
        ? !opts.orphanDependents
        : opts.propagationPolicy !== undefined
          ? opts.propagationPolicy === 'Foreground'
          : current.includes(FINALIZER_FOREGROUND);
    const finalizers = withGcFinalizers(current, orphan, foreground);
    if (finalizers) (next.metadata ??= {}).finalizers = finalizers;
    return { update: next };
  },
  canRemove: (o) => (specOf(o)?.finalizers?.length ?? 0) === 0,
  tableColumns: [nameColumn, { name: 'Status', type: 'string', description: 'The status of the namespace', priority: 0 }, ageColumn],
  tableCells: (o) => [o.metadata?.name ?? '', statusOf(o)?.phase ?? '', ageSince(o.metadata?.creationTimestamp)],
};
