// The `kplane/webhook` entry: what an admission or conversion webhook server needs from kplane (the
// AdmissionReview shapes, a CA and serving certificates), without loading the control plane: a
// webhook importing `kplane` would carry every API module in its heap (examples/webhook run from
// source: 30.5 MB after start that way, 7.5 MB with this entry; each full GC walks all of it).
export { createCertificateAuthority, issueCertificate } from './server/certs.js';
export type { CertAndKey, IssueOptions } from './server/certs.js';
export type { AdmissionReview, AdmissionRequest, AdmissionResponse } from './admission/webhook/review.js';
export type { KubeObject, Status } from './apimachinery/types.js';
