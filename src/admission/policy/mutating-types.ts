// admissionregistration.k8s.io/v1beta1 MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding
// as the plugin reads them (k8s.io/api/admissionregistration/v1beta1, defaults applied by the
// registry). v1alpha1 has the same shape.
import type { KubeObject } from '../../apimachinery/types.js';
import type { MatchCondition, MatchResources, ParamKind, ParamRef, Variable } from './types.js';

export interface Mutation {
  /** `ApplyConfiguration` or `JSONPatch`. */
  patchType?: string;
  applyConfiguration?: { expression?: string };
  jsonPatch?: { expression?: string };
}

export interface MutatingAdmissionPolicySpec {
  paramKind?: ParamKind;
  matchConstraints?: MatchResources;
  variables?: Variable[];
  mutations?: Mutation[];
  /** `Fail` (default) or `Ignore`. */
  failurePolicy?: string;
  matchConditions?: MatchCondition[];
  /** `Never` (default) or `IfNeeded`. */
  reinvocationPolicy?: string;
}

export interface MutatingAdmissionPolicy extends KubeObject {
  spec?: MutatingAdmissionPolicySpec;
}

export interface MutatingAdmissionPolicyBinding extends KubeObject {
  spec?: {
    policyName?: string;
    paramRef?: ParamRef;
    matchResources?: MatchResources;
  };
}

export const MUTATING_ADMISSION_POLICIES = 'mutatingadmissionpolicies';
export const MUTATING_ADMISSION_POLICY_BINDINGS = 'mutatingadmissionpolicybindings';
