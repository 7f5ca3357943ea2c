import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { availableCell, serviceCell, validateAPIService } from './strategy.js';
import type { APIService } from './types.js';

const svc = (spec: APIService['spec'], name = 'v1.wardle.example.com'): APIService => ({ metadata: { name }, spec });
const fields = (o: APIService): string[] => validateAPIService(o).map((i) => `${i.type} ${i.field}`);

describe('APIService validation (upstream ValidateAPIService)', () => {
  const good = { group: 'wardle.example.com', version: 'v1', groupPriorityMinimum: 1000, versionPriority: 15 };

  it('accepts a local APIService and one with a service', () => {
    assert.deepEqual(fields(svc(good)), []);
    assert.deepEqual(fields(svc({ ...good, service: { namespace: 'w', name: 'api', port: 443 }, caBundle: 'Zm9v' })), []);
    assert.deepEqual(fields(svc({ version: 'v1', groupPriorityMinimum: 18000, versionPriority: 1 }, 'v1.')), []);
  });

  it('wants the name version.group, a group unless v1, DNS names and bounded priorities', () => {
    assert.deepEqual(fields(svc(good, 'v2.wardle.example.com')), ['FieldValueInvalid metadata.name']);
    assert.deepEqual(fields(svc({ ...good, group: '' }, 'v1.')), []);
    assert.deepEqual(fields(svc({ ...good, group: '', version: 'v2' }, 'v2.')), ['FieldValueRequired spec.group']);
    assert.deepEqual(fields(svc({ ...good, groupPriorityMinimum: 20001, versionPriority: 0 })), [
      'FieldValueInvalid spec.groupPriorityMinimum',
      'FieldValueInvalid spec.versionPriority',
    ]);
    assert.deepEqual(fields(svc({ ...good, groupPriorityMinimum: 20000, versionPriority: 1000 })), []);
  });

  it('keeps caBundle and insecureSkipTLSVerify apart, and off local APIServices', () => {
    assert.deepEqual(fields(svc({ ...good, caBundle: 'Zm9v', insecureSkipTLSVerify: true })), [
      'FieldValueInvalid spec.caBundle',
      'FieldValueInvalid spec.insecureSkipTLSVerify',
    ]);
    assert.deepEqual(fields(svc({ ...good, service: { namespace: 'w', name: 'api' }, caBundle: 'Zm9v', insecureSkipTLSVerify: true })), [
      'FieldValueInvalid spec.insecureSkipTLSVerify',
    ]);
    assert.deepEqual(fields(svc({ ...good, service: {} })), ['FieldValueRequired spec.service.namespace', 'FieldValueRequired spec.service.name']);
  });

  it('prints SERVICE and AVAILABLE as kube-aggregator does', () => {
    assert.equal(serviceCell(svc(good)), 'Local');
    assert.equal(serviceCell(svc({ ...good, service: { namespace: 'w', name: 'api' } })), 'w/api');
    assert.equal(availableCell(svc(good)), 'Unknown');
    assert.equal(availableCell({ ...svc(good), status: { conditions: [{ type: 'Available', status: 'True', reason: 'Passed' }] } }), 'True');
    assert.equal(
      availableCell({ ...svc(good), status: { conditions: [{ type: 'Available', status: 'False', reason: 'FailedDiscoveryCheck' }] } }),
      'False (FailedDiscoveryCheck)',
    );
  });
});
