import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { nameIsDNSLabel } from '../../apimachinery/validation/names.js';
import { FINALIZER_DELETE_DEPENDENTS as FINALIZER_FOREGROUND, FINALIZER_ORPHAN_DEPENDENTS as FINALIZER_ORPHAN, validateFinalizerName, withGcFinalizers } from '../../apimachinery/validation/objectmeta.js';
import { cloneObject } from '../codec.js';
import type { Strategy } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';

/** The finalizer the namespace controller removes once the namespace is empty. */
export const KUBERNETES_FINALIZER = 'kubernetes';
/**
 * The namespaces the generic control plane creates at start and keeps (the system namespaces
 * controller, created in this order): upstream's controlplane options default SystemNamespaces to
 * kube-system, kube-public and default; kube-node-lease is added by kube-apiserver only.
 */
export const SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'default'] as const;
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
    const n = o as KubeObject & NamespaceShape;
    const spec = specOf(old);
    if (spec) n.spec = cloneObject(spec);
    else delete n.spec;
    const status = statusOf(old);
    if (status) n.status = cloneObject(status);
    else delete n.status;
  },
  // The status is Active on create (prepareForCreate), and an update keeps the stored spec and
  // status (prepareForUpdate): ValidateNamespaceUpdate checks only metadata. Subresources check
  // what they change.
  validate: (o) => validateSpecFinalizers(o, false),
  validateUpdate: () => [],
  selectableFields: (o) => ({ 'status.phase': statusOf(o)?.phase ?? '' }),
  // Status changes only through /status, spec finalizers only through /finalize.
  resetFields: { '': [['status']], status: [['spec']], finalize: [['status']] },
  subresources: {
    status: {
      merge(incoming, current) {
        const s = statusOf(incoming);
        const out = current as KubeObject & NamespaceShape;
        if (s) out.status = s;
        else delete out.status;
        return withMeta(out, incoming);
      },
      validateUpdate: validateStatusUpdate,
    },
    finalize: {
      merge(incoming, current) {
        const out = current as KubeObject & NamespaceShape;
        out.spec = { ...(out.spec ?? {}), finalizers: specOf(incoming)?.finalizers ?? [] };
        return withMeta(out, incoming);
      },
      validateUpdate: (o) => validateSpecFinalizers(o, true),
    },
  },
  /**
   * The namespace REST's Delete: the first DELETE only marks the namespace Terminating (with its
   * deletionTimestamp), even when it has no finalizers at all; a DELETE of a terminating namespace
   * answers it unchanged while spec.finalizers remain, and is an ordinary delete once they are gone
   * (removed now unless metadata.finalizers hold it).
   */
  // The namespace REST's Delete (pkg/registry/core/namespace/storage): the first DELETE only marks
  // it Terminating and sets the garbage collector's finalizers by its own rules
  // (shouldHaveOrphanFinalizer / shouldHaveDeleteDependentsFinalizer: orphanDependents=false asks
  // for foreground deletion); a terminating namespace with spec.finalizers left is answered as it
  // is, whatever the options; once they are gone, an ordinary delete.
  beforeDelete(o, opts) {
    if (o.metadata?.deletionTimestamp) return (specOf(o)?.finalizers?.length ?? 0) > 0 ? { update: cloneObject(o), ownFinalizers: true } : 'proceed';
    const next = cloneObject(o) as KubeObject & NamespaceShape;
    next.status = { ...(next.status ?? {}), phase: 'Terminating' };
    const current = next.metadata?.finalizers ?? [];
    const orphan = opts.orphanDependents !== undefined ? opts.orphanDependents : opts.propagationPolicy !== undefined ? opts.propagationPolicy === 'Orphan' : current.includes(FINALIZER_ORPHAN);
    const foreground = opts.orphanDependents !== undefined ? !opts.orphanDependents : opts.propagationPolicy !== undefined ? opts.propagationPolicy === 'Foreground' : current.includes(FINALIZER_FOREGROUND);
    const finalizers = withGcFinalizers(current, orphan, foreground);
    if (finalizers) (next.metadata ??= {}).finalizers = finalizers;
    return { update: next, ownFinalizers: true };
  },
  canRemove: (o) => (specOf(o)?.finalizers?.length ?? 0) === 0,
  tableColumns: [nameColumn, { name: 'Status', type: 'string', description: 'The status of the namespace', priority: 0 }, ageColumn],
  tableCells: (o) => [o.metadata?.name ?? '', statusOf(o)?.phase ?? '', ageSince(o.metadata?.creationTimestamp)],
};

/** Subresource writes may still carry the resourceVersion precondition and labels from the client. */
function withMeta(out: KubeObject, incoming: KubeObject): KubeObject {
  out.metadata = { ...(out.metadata ?? {}) };
  const rv = incoming.metadata?.resourceVersion;
  if (rv !== undefined) out.metadata.resourceVersion = rv;
  else delete out.metadata.resourceVersion;
  return out;
}
