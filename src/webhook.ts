// The `kplane/webhook` entry: what an admission or conversion webhook server needs from kplane (the
// AdmissionReview shapes, a CA and serving certificates), without loading the control plane: a
// webhook importing `kplane` would carry every API module in its heap (about 30 MB, which each of
// its full garbage collections then walks).
export { createCertificateAuthority, issueCertificate } from './server/certs.js';
export type { CertAndKey, IssueOptions } from './server/certs.js';
export type { AdmissionReview, AdmissionRequest, AdmissionResponse } from './admission/webhook/review.js';
export type { KubeObject, Status } from './apimachinery/types.js';
