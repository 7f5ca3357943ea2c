// The built-in resources the e2e tests use through KubeClient.
import type { GVR } from '../../src/client/types.js';

export const NS: GVR = { group: '', version: 'v1', resource: 'namespaces' };
export const CM: GVR = { group: '', version: 'v1', resource: 'configmaps' };
export const SECRETS: GVR = { group: '', version: 'v1', resource: 'secrets' };
export const EVENTS: GVR = { group: '', version: 'v1', resource: 'events' };
export const LEASES: GVR = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' };
export const CRDS: GVR = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
