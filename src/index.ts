// kplane as a library: build a kube-compatible control plane in code (KEP-4080).
export { createControlPlane, versionInfo, KPLANE_VERSION, KUBE_API_LEVEL } from './controlplane.js';
export type { ControlPlane, ControlPlaneOptions, StorageFactory } from './controlplane.js';
export { core, coordination, events, apiextensions, defaultModules } from './registry/modules.js';
export type { ApiModule, AdmissionPlugin, AdmissionAttributes, ResourceRegistration, UserInfo } from './registry/registry.js';
export { ApiRegistry } from './registry/registry.js';
export { GenericStore } from './registry/store.js';
export type { Strategy, TableColumn } from './registry/strategy.js';
export { sqlite, etcd, memory } from './storage/factories.js';
export type { Storage, KV, WatchEvent } from './storage/storage.js';
export { StatusError } from './apimachinery/errors.js';
export type { KubeObject, ObjectMeta, Status } from './apimachinery/types.js';
