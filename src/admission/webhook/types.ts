// admissionregistration.k8s.io/v1 webhook configurations as the dispatcher reads them (the shapes
// of k8s.io/api/admissionregistration/v1, defaults applied by the registry before storage).
import type { LabelSelectorObject } from '../../apimachinery/labels.js';
import type { KubeObject } from '../../apimachinery/types.js';

export interface WebhookRule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  scope?: string;
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
  /** Base64 of PEM certificates (JSON's form of Go's []byte). */
  caBundle?: string;
}

export interface Webhook {
  name?: string;
  clientConfig?: WebhookClientConfig;
  rules?: WebhookRule[];
  failurePolicy?: string;
  matchPolicy?: string;
  namespaceSelector?: LabelSelectorObject;
  objectSelector?: LabelSelectorObject;
  sideEffects?: string;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  matchConditions?: unknown[];
  /** Mutating webhooks only: `Never` (default) or `IfNeeded`. */
  reinvocationPolicy?: string;
}

export interface WebhookConfiguration extends KubeObject {
  webhooks?: Webhook[];
}

export const ADMISSION_REGISTRATION_GROUP = 'admissionregistration.k8s.io';
export const VALIDATING_WEBHOOK_CONFIGURATIONS = 'validatingwebhookconfigurations';
export const MUTATING_WEBHOOK_CONFIGURATIONS = 'mutatingwebhookconfigurations';
