// coordination.k8s.io/v1 leases: everything the control plane needs to serve the kind.
import { CoordinatedLeaderElection } from '../../../featuregate/kube-features.js';
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { coordinationDefinitions } from './definitions.js';
import { leaseStrategy } from './strategy.js';

// ---- coordination.k8s.io/v1
export const leasesResource: ResourceDescriptor = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  shortNames: [],
  categories: [],
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: [],
  definitionName: 'io.k8s.api.coordination.v1.Lease',
};

export const leases: ResourceRegistration = {
  descriptor: leasesResource,
  strategy: leaseStrategy,
  keyPrefix: '/registry/leases/',
  definitions: coordinationDefinitions,
  protobuf: { kind: 'k8s.io.api.coordination.v1.Lease', list: 'k8s.io.api.coordination.v1.LeaseList' },
  goFieldTypes: { 'io.k8s.api.coordination.v1.LeaseSpec': { strategy: 'v1.CoordinatedLeaseStrategy' } },
  goTypedBody: true,
  // pkg/registry/coordination/lease/strategy.go: PrepareForCreate clears both while the gate is
  // off; PrepareForUpdate clears each unless the old Lease has it.
  gatedFields: [
    { feature: CoordinatedLeaderElection, path: ['spec', 'strategy'] },
    { feature: CoordinatedLeaderElection, path: ['spec', 'preferredHolder'] },
  ],
};
