// io.k8s.api.coordination.v1: Leases, used for leader election and heartbeats. Shapes follow
// upstream's generated OpenAPI; descriptions are our own.

import type { Definitions } from '../../../apimachinery/schema.js';
import { META, apiVersionField, int32, kind, kindField, listKind, objectMetaField, ref, str, struct } from '../../../apimachinery/definitions/util.js';

const CO = 'io.k8s.api.coordination.v1.';
const GV = { group: 'coordination.k8s.io', version: 'v1' };

export const coordinationDefinitions: Definitions = {
  [CO + 'Lease']: kind({ ...GV, kind: 'Lease' }, 'Lease is a time-bound claim, held by one identity, used for leader election and heartbeats.', {
    apiVersion: apiVersionField,
    kind: kindField,
    metadata: objectMetaField(),
    spec: ref(CO + 'LeaseSpec', 'The lease: its holder and timing.'),
  }),

  [CO + 'LeaseSpec']: struct('LeaseSpec is the state of a lease.', {
    acquireTime: ref(META + 'MicroTime', 'When the current holder acquired the lease.'),
    holderIdentity: str('Identity of the current holder.'),
    leaseDurationSeconds: int32('How long, counted from renewTime, other candidates must wait before they may take the lease over.'),
    leaseTransitions: int32('How many times the lease has changed holders.'),
    preferredHolder: str('Identity that should hold the lease instead; the current holder is asked to give it up. Used by coordinated leader election.'),
    renewTime: ref(META + 'MicroTime', 'When the current holder last renewed the lease.'),
    strategy: str('How the leader is picked in coordinated leader election, e.g. "OldestEmulationVersion".'),
  }),

  [CO + 'LeaseList']: listKind(GV, CO + 'Lease', 'Lease', 'The leases.'),
};
