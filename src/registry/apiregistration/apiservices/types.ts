// apiregistration.k8s.io/v1 APIService: the shape kube-aggregator's v1 types have.
import type { KubeObject } from '../../../apimachinery/types.js';

export const APIREGISTRATION_GROUP = 'apiregistration.k8s.io';
export const APIREGISTRATION_VERSION = 'v1';

export interface ServiceReference {
  namespace?: string;
  name?: string;
  /** Defaults to 443. */
  port?: number;
}

export interface APIServiceCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface APIServiceSpec {
  service?: ServiceReference | null;
  group?: string;
  version?: string;
  insecureSkipTLSVerify?: boolean;
  /** base64 of PEM bytes, as Go's []byte in JSON. */
  caBundle?: string;
  groupPriorityMinimum?: number;
  versionPriority?: number;
}

export interface APIService extends KubeObject {
  spec?: APIServiceSpec;
  status?: { conditions?: APIServiceCondition[] };
}

/** The one condition type upstream defines. */
export const AVAILABLE = 'Available';

/** `<version>.<group>`, the only name an APIService may have (`v1.` for the legacy group). */
export const apiServiceName = (group: string, version: string): string => `${version}.${group}`;

export function availableCondition(o: APIService): APIServiceCondition | undefined {
  return o.status?.conditions?.find((c) => c.type === AVAILABLE);
}

/** IsAPIServiceConditionTrue(apiService, Available). */
export const isAvailable = (o: APIService): boolean => availableCondition(o)?.status === 'True';
