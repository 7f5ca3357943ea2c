import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

const spec = (o: KubeObject): LeaseSpec => (o as { spec?: LeaseSpec }).spec ?? {};

function validateLease(o: KubeObject): FieldIssue[] {
  const s = spec(o);
  const issues: FieldIssue[] = [];
  if (s.leaseDurationSeconds !== undefined && !(s.leaseDurationSeconds > 0)) {
    issues.push(fieldIssue.invalid('spec.leaseDurationSeconds', s.leaseDurationSeconds, 'must be greater than 0'));
  }
  if (s.leaseTransitions !== undefined && s.leaseTransitions < 0) {
    issues.push(fieldIssue.invalid('spec.leaseTransitions', s.leaseTransitions, 'must be greater than or equal to 0'));
  }
  if (s.strategy !== undefined && s.strategy !== 'OldestEmulationVersion') {
    issues.push(fieldIssue.notSupported('spec.strategy', s.strategy, ['OldestEmulationVersion']));
  }
  if (s.preferredHolder && !s.strategy) {
    issues.push(fieldIssue.forbidden('spec.preferredHolder', 'preferredHolder is only allowed if strategy is set'));
  }
  return issues;
}

export const leaseStrategy: Strategy = {
  namespaced: true,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: false,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: validateLease,
  validateUpdate: validateLease,
  // printers.go: leaseColumnDefinitions (coordinationv1.LeaseSpec{}.SwaggerDoc()["holderIdentity"]) / printLease.
  tableColumns: [
    nameColumn,
    {
      name: 'Holder',
      type: 'string',
      description:
        'holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.',
      priority: 0,
    },
    ageColumn,
  ],
  tableCells: (o) => [o.metadata?.name ?? '', spec(o).holderIdentity ?? '', ageSince(o.metadata?.creationTimestamp)],
};
