// admission.k8s.io/v1 AdmissionReview as a webhook receives and answers it (k8s.io/api/admission/v1
// types.go), for webhook servers written with kplane's library. The dispatcher builds the same shape.
import type { KubeObject, Status } from '../../apimachinery/types.js';

export interface AdmissionGroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface AdmissionGroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  uid: string;
  kind: AdmissionGroupVersionKind;
  resource: AdmissionGroupVersionResource;
  subResource?: string;
  requestKind?: AdmissionGroupVersionKind;
  requestResource?: AdmissionGroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  /** CREATE, UPDATE, DELETE or CONNECT. */
  operation: string;
  userInfo: { username?: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  object?: T | null;
  oldObject?: T | null;
  dryRun?: boolean;
  /** CreateOptions, UpdateOptions or DeleteOptions of the operation. */
  options?: Record<string, unknown> | null;
}

export interface AdmissionResponse {
  /** The request's uid, echoed. */
  uid: string;
  allowed: boolean;
  /** Why a request is refused: `message` is what the client sees, `code` its HTTP status (default 400). */
  status?: Partial<Pick<Status, 'code' | 'message' | 'reason' | 'details'>>;
  /** Base64 of a JSONPatch (RFC 6902); mutating webhooks only. */
  patch?: string;
  patchType?: 'JSONPatch';
  auditAnnotations?: Record<string, string>;
  warnings?: string[];
}

export interface AdmissionReview<T extends KubeObject = KubeObject> {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest<T>;
  response?: AdmissionResponse;
}
