import { fieldIssue, type FieldIssue } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { isQualifiedName } from '../../../apimachinery/validation/names.js';
import type { Strategy } from '../../strategy.js';
import { ageColumn, ageSince, nameColumn } from '../../table.js';

interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  leaseTransitions?: number;
  strategy?: string | null;
  preferredHolder?: string | null;
}

/** validLeaseStrategies (coordination.OldestEmulationVersion). */
const VALID_LEASE_STRATEGIES = ['OldestEmulationVersion'];

/**
 * ValidateCoordinatedLeaseStrategy: a name without `/` must be one of Kubernetes' own; a name
 * with one a qualified name. Upstream's caller passes `spec.strategy` and the NotSupported case
 * adds `strategy` again, so that error names `spec.strategy.strategy`; kept, as clients see it.
 */
function validateCoordinatedLeaseStrategy(strategy: string, path: string): FieldIssue[] {
  if (!strategy.includes('/')) {
    return VALID_LEASE_STRATEGIES.includes(strategy) ? [] : [fieldIssue.notSupported(`${path}.strategy`, strategy, VALID_LEASE_STRATEGIES)];
  }
  return isQualifiedName(strategy).map((msg) => fieldIssue.invalid(path, strategy, msg));
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
  // The two fields of coordinated leader election, validated whenever present: with the
  // CoordinatedLeaderElection gate off they are dropped before validation (gatedFields) unless
  // the stored object already has them.
  if (typeof s.strategy === 'string') issues.push(...validateCoordinatedLeaseStrategy(s.strategy, 'spec.strategy'));
  if (s.preferredHolder && !s.strategy) {
    issues.push(fieldIssue.forbidden('spec.preferredHolder', 'may only be specified if `strategy` is defined'));
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
