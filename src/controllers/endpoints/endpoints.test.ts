import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pod, Service } from '../endpointslice/endpoints.js';
import { endpointsSubsets } from './index.js';

const svc = (over: Partial<NonNullable<Service['spec']>> = {}): Service => ({
  metadata: { name: 'web', namespace: 'default', uid: 'svc' },
  spec: { selector: { app: 'web' }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }], ...over },
});
const pod = (name: string, ip: string, opts: { ready?: boolean; deleting?: boolean; port?: number } = {}): Pod => ({
  metadata: { name, namespace: 'default', uid: `u-${name}`, ...(opts.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: { nodeName: 'sim-0', containers: [{ name: 'c', ports: [{ name: 'http', containerPort: opts.port ?? 8080, protocol: 'TCP' }] }] },
  status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
});
const ref = (name: string) => ({ kind: 'Pod', namespace: 'default', name, uid: `u-${name}` });

describe('endpointsSubsets', () => {
  it('ready pods are addresses, unready ones notReadyAddresses, terminating ones left out; sorted by IP', () => {
    const subsets = endpointsSubsets(svc(), [
      pod('b', '127.3.0.3'),
      pod('a', '127.3.0.2'),
      pod('c', '127.3.0.4', { ready: false }),
      pod('d', '127.3.0.5', { deleting: true }),
    ]);
    assert.deepEqual(subsets, [
      {
        ports: [{ name: 'http', port: 8080, protocol: 'TCP' }],
        addresses: [
          { ip: '127.3.0.2', nodeName: 'sim-0', targetRef: ref('a') },
          { ip: '127.3.0.3', nodeName: 'sim-0', targetRef: ref('b') },
        ],
        notReadyAddresses: [{ ip: '127.3.0.4', nodeName: 'sim-0', targetRef: ref('c') }],
      },
    ]);
  });
  it('pods with different target ports get separate subsets; publishNotReadyAddresses lists every pod as ready', () => {
    const subsets = endpointsSubsets(svc({ publishNotReadyAddresses: true }), [
      pod('a', '127.3.0.2'),
      pod('b', '127.3.0.3', { port: 9090, ready: false, deleting: true }),
    ]);
    assert.deepEqual(
      subsets.map((s) => [s.ports?.[0]?.port, s.addresses?.map((a) => a.ip), s.notReadyAddresses]),
      [
        [8080, ['127.3.0.2'], undefined],
        [9090, ['127.3.0.3'], undefined],
      ],
    );
  });
});
