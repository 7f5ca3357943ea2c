// The CustomResourceDefinition strategy (pkg/registry/customresourcedefinition/strategy.go):
// status is the server's (reset on create, kept on spec writes, written through /status),
// generation follows spec changes, storedVersions gains the storage version.
import { undecodable, type FieldIssue } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { cloneObject } from '../registry/codec.js';
import type { Strategy } from '../registry/strategy.js';
import { rfc3339 } from '../apimachinery/times.js';
import { CUSTOM_RESOURCE_CLEANUP_FINALIZER, setCRDCondition } from './serving.js';
import { defaultCRD, semanticEqual, validateCRD, validateCRDStatus, type CRDValidationHooks } from './validation.js';
import type { CustomResourceDefinition } from './types.js';

function addStorageVersion(crd: CustomResourceDefinition): void {
  const storage = crd.spec?.versions?.find((v) => v?.storage)?.name;
  if (!storage) return;
  const status = (crd.status ??= {});
  const stored = (status.storedVersions ??= []);
  if (!stored.includes(storage)) stored.push(storage);
}

/** Validation must never turn a malformed body (a string where a list belongs) into a 500. */
function guarded(fn: () => FieldIssue[]): FieldIssue[] {
  try {
    return fn();
  } catch (e) {
    if (e instanceof TypeError) throw undecodable('CustomResourceDefinition', 'v1', 'CustomResourceDefinition', e.message);
    throw e;
  }
}

export function crdStrategy(hooks: CRDValidationHooks = {}): Strategy {
  return {
    namespaced: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    defaults(obj) {
      defaultCRD(obj);
    },
    prepareForCreate(obj) {
      const crd = obj as CustomResourceDefinition;
      crd.status = {};
      crd.metadata!.generation = 1;
      addStorageVersion(crd);
    },
    prepareForUpdate(obj, old) {
      const crd = obj as CustomResourceDefinition;
      const prev = old as CustomResourceDefinition;
      if (prev.status === undefined) delete crd.status;
      else crd.status = cloneObject(prev.status);
      const gen = prev.metadata?.generation ?? 1;
      crd.metadata!.generation = semanticEqual(crd.spec, prev.spec) ? gen : gen + 1;
      addStorageVersion(crd);
    },
    validate: (obj) => guarded(() => validateCRD(obj, undefined, hooks)),
    validateUpdate: (obj, old) => guarded(() => validateCRD(obj, old, hooks)),
    // Upstream's REST.Delete (registry/customresourcedefinition/etcd.go; the store checks its
    // preconditions in storage's words on every DELETE). The first DELETE only sets the deletionTimestamp (the
    // store does), the clean-up finalizer and Terminating=True/InstanceDeletionPending: the garbage
    // collector's finalizers are not touched (propagationPolicy and orphanDependents are validated
    // but have no effect), the generation stays and no grace period is set; admission and dryRun
    // as for any write. The clean-up in serving.ts deletes the instances and removes the finalizer.
    // A later DELETE is the generic store's (which does apply the options' GC finalizers).
    beforeDelete(obj) {
      const crd = obj as CustomResourceDefinition;
      if (crd.metadata?.deletionTimestamp) return 'proceed';
      const next = cloneObject(crd);
      const meta = (next.metadata ??= {});
      if (!meta.finalizers?.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) meta.finalizers = [...(meta.finalizers ?? []), CUSTOM_RESOURCE_CLEANUP_FINALIZER];
      const status = (next.status ??= {});
      const conditions = (status.conditions ??= []);
      setCRDCondition(
        conditions,
        {
          type: 'Terminating',
          status: 'True',
          reason: 'InstanceDeletionPending',
          message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
        },
        rfc3339(new Date()),
      );
      return { update: next };
    },
    resetFields: { '': [['status']], status: [['metadata'], ['spec']] },
    subresources: {
      status: {
        merge(incoming: KubeObject, current: KubeObject): KubeObject {
          const next = current as CustomResourceDefinition;
          const status = (incoming as CustomResourceDefinition).status;
          if (status === undefined) delete next.status;
          else next.status = status;
          return next;
        },
        validateUpdate: (obj) => guarded(() => validateCRDStatus(obj)),
      },
    },
  };
}
