// kplane as a library: build a kube-compatible control plane in code (KEP-4080).
export { createControlPlane, versionInfo, KPLANE_VERSION, KUBE_API_LEVEL } from './controlplane/controlplane.js';
export type { ControlPlane, ControlPlaneOptions, StorageFactory } from './controlplane/controlplane.js';
export { core, coordination, events, apiextensions, admissionRegistration, defaultModules, features } from './controlplane/modules.js';
export { apiRegistration } from './controlplane/modules.js';
export { ALL_VERBS, type ResourceDescriptor } from './apimachinery/resource.js';
export { cloud, type CloudModuleOptions } from './controlplane/cloud-module.js';
// The built-in kinds, each a ResourceRegistration an ApiModule can list.
export { configMaps } from './registry/core/configmaps/index.js';
export { coreEvents } from './registry/core/events/index.js';
export { namespaces } from './registry/core/namespaces/index.js';
export { secrets } from './registry/core/secrets/index.js';
export { serviceAccounts } from './registry/core/serviceaccounts/index.js';
export { leases } from './registry/coordination/leases/index.js';
export { eventsV1Events } from './registry/events/events/index.js';
export { Scheme } from './apimachinery/scheme.js';
export type { GoFieldTypes } from './apimachinery/gotypes.js';
export type { ProtobufKind } from './apimachinery/protobuf/kinds.js';
export type { ApiModule, AdmissionPlugin, AdmissionAttributes, ResourceRegistration, UserInfo } from './registry/registry.js';
// The slots later modules and library users plug into: the admission chain the handlers run, and
// the server's authorization and impersonation hooks.
export { AdmissionChain } from './admission/chain.js';
export type { AdmissionHandles, AdmissionOperation, MutationInterface, ValidationInterface } from './admission/interfaces.js';
export type { Authorizer, AuthorizationResult } from './server/filters/authorization.js';
export type { Impersonator } from './server/filters/impersonation.js';
export type { RequestInfo } from './server/requestinfo.js';
export { ApiRegistry } from './registry/registry.js';
export { GenericStore } from './registry/store.js';
export type { Strategy, TableColumn } from './registry/strategy.js';
export { sqlite, etcd, memory } from './storage/factories.js';
export { createKlog } from './golang/klog.js';
export type { Logger, LogFormat, KlogOptions } from './golang/klog.js';
export type { Storage, KV, WatchEvent } from './storage/storage.js';
export { StatusError } from './apimachinery/errors.js';
export type { KubeObject, ObjectMeta, Status } from './apimachinery/types.js';
export type { OwnerReference, KubeList } from './apimachinery/types.js';
// Writing controllers: the client (HTTPS or in-process loopback) and the controller runtime.
export { createHttpsClient, loadKubeconfig, createLoopbackClient, isStatusError, ClientNetworkError, isNetworkError } from './client/index.js';
export type {
  KubeClient,
  GVR,
  WatchEvent as ClientWatchEvent,
  ListOptions,
  WatchOptions,
  WriteOptions,
  PatchOptions,
  PatchType,
  DeleteOptions,
  GetOptions,
} from './client/index.js';
export {
  Manager,
  Controller,
  Informer,
  Store,
  WorkQueue,
  LeaderElector,
  TerminalError,
  isTerminal,
  keyOf,
  splitKey,
  controllerMetrics,
} from './controllers/runtime/index.js';
export type {
  ManagerOptions,
  ManagerLeaderElection,
  Runnable,
  Reconciler,
  ReconcileResult,
  ControllerOptions,
  EventHandlers,
  InformerSpec,
  IndexFunc,
} from './controllers/runtime/index.js';
export { defaultControllers, runControllers, namespaceDeletion, garbageCollector, controllerFactory } from './controllers/index.js';
export type { ControllerContext, ControllerFactory, RunControllersOptions, RunningControllers } from './controllers/index.js';
export { loadAuthenticationConfiguration, parseAuthenticationConfiguration } from './auth/authn/jwt-config.js';
export type { AuthenticationConfiguration } from './auth/authn/jwt-config.js';
export type { TokenAuthenticator, TokenOutcome } from './auth/types.js';
// Writing admission webhooks: the AdmissionReview shapes and TLS from a generated CA.
export { createCertificateAuthority, issueCertificate } from './server/certs.js';
export type { CertAndKey, IssueOptions } from './server/certs.js';
export type { AdmissionReview, AdmissionRequest, AdmissionResponse } from './admission/webhook/review.js';
// Extension API servers: delegated authentication of bearer tokens (TokenReview to the front).
export { tokenReviewAuthenticator } from './auth/authn/token-review.js';
export type { TokenReviewAuthenticatorOptions } from './auth/authn/token-review.js';
