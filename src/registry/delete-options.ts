// The options of a delete, shared by the generic store, which runs it, and the strategies, whose
// delete hooks see it: apart from both, so that neither imports the other.
import type { KubeObject } from '../apimachinery/types.js';

export interface DeleteOptions {
  readonly preconditions?: { uid?: string; resourceVersion?: string };
  readonly propagationPolicy?: string;
  readonly orphanDependents?: boolean;
  readonly gracePeriodSeconds?: number;
  readonly dryRun?: boolean;
  /**
   * Admission of the delete (upstream's deleteValidation), given a copy of the object as it is:
   * run once the object is read and the preconditions hold, before anything is written, and again
   * before a removal that follows a finalizer update, where upstream's store runs it.
   */
  readonly validate?: (old: KubeObject) => void | Promise<void>;
}
