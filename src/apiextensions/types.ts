// apiextensions.k8s.io/v1 CustomResourceDefinition as it travels in JSON (the v1 wire form; kplane
// has no internal version, see validation.ts for how upstream's internal form shows in field paths).
import type { JSONSchemaProps } from './schema/index.js';
import type { KubeObject } from '../apimachinery/types.js';

export const GROUP = 'apiextensions.k8s.io';
export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const API_APPROVED_ANNOTATION = 'api-approved.kubernetes.io';

export interface CRDNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

export interface CustomResourceColumnDefinition {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

export interface ScaleSubresource {
  specReplicasPath?: string;
  statusReplicasPath?: string;
  labelSelectorPath?: string;
}

export interface CRDSubresources {
  status?: Record<string, never>;
  scale?: ScaleSubresource;
}

export interface SelectableField {
  jsonPath?: string;
}

export interface CRDVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: CRDSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
  selectableFields?: SelectableField[];
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
  caBundle?: string;
}

export interface CRDConversion {
  strategy?: string;
  webhook?: { clientConfig?: WebhookClientConfig; conversionReviewVersions?: string[] };
}

export interface CRDSpec {
  group?: string;
  names?: CRDNames;
  scope?: string;
  versions?: CRDVersion[];
  conversion?: CRDConversion;
  preserveUnknownFields?: boolean;
}

export interface CRDCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CRDStatus {
  conditions?: CRDCondition[];
  acceptedNames?: CRDNames;
  storedVersions?: string[];
}

export interface CustomResourceDefinition extends KubeObject {
  spec?: CRDSpec;
  status?: CRDStatus;
}

export function conditionOf(crd: CustomResourceDefinition, type: string): CRDCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function isConditionTrue(crd: CustomResourceDefinition, type: string): boolean {
  return conditionOf(crd, type)?.status === 'True';
}

export function storageVersionOf(crd: CustomResourceDefinition): string | undefined {
  return crd.spec?.versions?.find((v) => v.storage)?.name;
}
