import type { Strategy } from '../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../table.js';

export const serviceAccountStrategy: Strategy = {
  // ValidateServiceAccount goes through core's ValidateObjectMeta wrapper.
  finalizerNames: 'kube',
  namespaced: true,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: () => [],
  validateUpdate: () => [],
  tableColumns: [nameColumn, { name: 'Secrets', type: 'string', description: 'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.', priority: 0 }, ageColumn],
  tableCells: (o) => [o.metadata?.name ?? '', Array.isArray(o.secrets) ? o.secrets.length : 0, ageSince(o.metadata?.creationTimestamp)],
};
