// Admission's contracts (k8s.io/apiserver/pkg/admission/interfaces.go): what a plugin is told about
// a write (Attributes), whether it cares about an operation (Handles), and its two phases: mutating
// (Admit, may change the object) and validating (Validate, may only refuse). Handlers call the
// chain (chain.ts); built-in plugins, webhooks and CEL policies implement these.
import type { GroupVersionKind, GroupVersionResource, KubeObject } from '../apimachinery/types.js';

export interface UserInfo {
  readonly name: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  /** user.Info's Extra: e.g. `authentication.kubernetes.io/credential-id` of a ServiceAccount token. */
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionAttributes {
  readonly operation: AdmissionOperation;
  readonly resource: GroupVersionResource;
  readonly subresource: string;
  readonly kind: GroupVersionKind;
  readonly namespace: string;
  readonly name: string;
  /** The new object (create/update); plugins in the mutating phase may change it. */
  readonly object?: KubeObject;
  readonly oldObject?: KubeObject;
  readonly dryRun: boolean;
  /**
   * admission.Attributes.GetOperationOptions as the request gave them, without kind and apiVersion
   * (which follow from the operation): CreateOptions' or UpdateOptions' dryRun, fieldManager and
   * fieldValidation, or DeleteOptions' fields, in Go's field order, unset ones left out. Absent:
   * only `dryRun` is known.
   */
  readonly options?: Readonly<Record<string, unknown>>;
  readonly userInfo: UserInfo;
  /** Where a plugin's warnings go: the response's Warning headers (upstream's warning.AddWarning). */
  readonly warnings?: WarningSink;
  /** Where a plugin's audit annotations go: the request's audit event (upstream's Attributes.AddAnnotation). */
  readonly annotations?: AnnotationSink;
}

export interface AnnotationSink {
  /**
   * admission.Attributes.AddAnnotation; with `level` (AddAnnotationWithLevel) the annotation is kept
   * only in audit events of that level or above (a mutating webhook's patch needs Request).
   */
  addAnnotation(key: string, value: string, level?: 'Request'): void;
  /** False when the request is not audited (nothing would be kept): annotations costly to make are skipped. Absent: audited. */
  readonly audited?: boolean;
}

export interface WarningSink {
  addWarning(text: string): void;
}

/** admission.Interface: whether the plugin runs for an operation at all (absent: every operation). */
export interface AdmissionHandles {
  readonly name: string;
  handles?(operation: AdmissionOperation): boolean;
}

/** admission.MutationInterface: may change `attrs.object`; throws a StatusError to deny. */
export interface MutationInterface extends AdmissionHandles {
  admit(attrs: AdmissionAttributes): void | Promise<void>;
}

/** admission.ValidationInterface: may only refuse (throws a StatusError); must not change the object. */
export interface ValidationInterface extends AdmissionHandles {
  validate(attrs: AdmissionAttributes): void | Promise<void>;
}

/**
 * An admission plugin as modules contribute it: mutating (`admit`, runs first), validating
 * (`validate`, runs last, just before storage), or both. Both throw StatusError to deny.
 */
export interface AdmissionPlugin extends AdmissionHandles {
  admit?(attrs: AdmissionAttributes): void | Promise<void>;
  validate?(attrs: AdmissionAttributes): void | Promise<void>;
}

/**
 * The versions a resource is served in, for `matchPolicy: Equivalent` (upstream's
 * EquivalentResourceMapper, here the same group and resource in its other versions).
 */
export interface EquivalentResources {
  /** The versions serving `group`/`resource`, in the registry's order, each with its kind. */
  versionsOf(group: string, resource: string): readonly EquivalentVersion[];
  /** `obj` of `group`/`resource` in version `from`, converted to version `to`. */
  convert(obj: KubeObject, group: string, resource: string, from: string, to: string): Promise<KubeObject>;
}

export interface EquivalentVersion {
  readonly version: string;
  readonly kind: string;
}
