// admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and ValidatingAdmissionPolicyBinding as
// the plugin reads them (k8s.io/api/admissionregistration/v1, defaults applied by the registry).
import type { LabelSelectorObject } from '../../apimachinery/labels.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { WebhookRule } from '../webhook/types.js';

export interface NamedRuleWithOperations extends WebhookRule {
  resourceNames?: string[];
}

export interface MatchResources {
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
  /** `Equivalent` (default) or `Exact`. */
  matchPolicy?: string;
}

export interface ParamKind {
  apiVersion?: string;
  kind?: string;
}

export interface Validation {
  expression?: string;
  message?: string;
  reason?: string;
  messageExpression?: string;
}

export interface AuditAnnotation {
  key?: string;
  valueExpression?: string;
}

export interface MatchCondition {
  name?: string;
  expression?: string;
}

export interface Variable {
  name?: string;
  expression?: string;
}

export interface ValidatingAdmissionPolicySpec {
  paramKind?: ParamKind;
  matchConstraints?: MatchResources;
  validations?: Validation[];
  failurePolicy?: string;
  auditAnnotations?: AuditAnnotation[];
  matchConditions?: MatchCondition[];
  variables?: Variable[];
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

export interface ValidatingAdmissionPolicy extends KubeObject {
  spec?: ValidatingAdmissionPolicySpec;
  status?: { observedGeneration?: number; typeChecking?: { expressionWarnings?: ExpressionWarning[] }; conditions?: unknown[] };
}

export interface ParamRef {
  name?: string;
  namespace?: string;
  selector?: LabelSelectorObject;
  /** `Allow` or `Deny`. */
  parameterNotFoundAction?: string;
}

export interface ValidatingAdmissionPolicyBinding extends KubeObject {
  spec?: {
    policyName?: string;
    paramRef?: ParamRef;
    matchResources?: MatchResources;
    /** `Deny`, `Warn`, `Audit`. */
    validationActions?: string[];
  };
}

export const VALIDATING_ADMISSION_POLICIES = 'validatingadmissionpolicies';
export const VALIDATING_ADMISSION_POLICY_BINDINGS = 'validatingadmissionpolicybindings';
