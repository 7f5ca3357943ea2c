// core/v1 nodes (cluster-scoped, with /status): everything the control plane needs to serve the kind.
import { ALL_VERBS, type ResourceDescriptor } from '../../../apimachinery/resource.js';
import type { ResourceRegistration } from '../../registry.js';
import { nodeDefinitions } from './definitions.js';
import { nodeStrategy } from './strategy.js';

export const nodesResource: ResourceDescriptor = {
  group: '',
  version: 'v1',
  kind: 'Node',
  listKind: 'NodeList',
  plural: 'nodes',
  singular: 'node',
  shortNames: ['no'],
  categories: [],
  namespaced: false,
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'Node', verbs: ['get', 'patch', 'update'] }],
  definitionName: 'io.k8s.api.core.v1.Node',
};

export const nodes: ResourceRegistration = {
  descriptor: nodesResource,
  strategy: nodeStrategy,
  definitions: nodeDefinitions,
  goTypedBody: true,
};
