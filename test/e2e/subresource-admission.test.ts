// Admission of writes through subresources with a kind of their own, as kube-apiserver runs it, with
// kubectl 1.33: a ValidatingAdmissionPolicy on `<crd>/scale` sees autoscaling/v1 Scale objects (the
// new and the old one) and `kubectl scale` past its limit is refused with its message; one on
// `serviceaccounts/token` sees the TokenRequest as the server completed it (audiences and
// expiration defaulted) and `kubectl create token` is refused or served accordingly.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { useKubectlServer } from '../support/kubectl.js';
import { ensureTools, tools } from '../support/tools.js';

ensureTools();

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: pools.sub.example.com}
spec:
  group: sub.example.com
  scope: Namespaced
  names: {plural: pools, singular: pool, kind: Pool}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {replicas: {type: integer}}}
          status: {type: object, properties: {replicas: {type: integer}}}
`;

/** A policy and its binding (Deny) on `resource` for `operation`, with one validation. */
function policy(name: string, resource: string, group: string, operation: string, expression: string, messageExpression: string): string {
  return `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: ${name}}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
    - {apiGroups: ["${group}"], apiVersions: ["*"], operations: [${operation}], resources: ["${resource}"]}
  validations:
  - expression: ${JSON.stringify(expression)}
    messageExpression: ${JSON.stringify(messageExpression)}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: ${name}}
spec:
  policyName: ${name}
  validationActions: [Deny]
`;
}

describe('admission of subresource writes with kubectl 1.33', () => {
  const ks = useKubectlServer(tools.kubectl, 'kplane-subresource-admission-');

  before(async () => {
    await ks.ok(['apply', '-f', await ks.file('crd.yaml', CRD)]);
    await ks.ok(['wait', '--for=condition=Established', 'crd/pools.sub.example.com', '--timeout=30s']);
    await eventually(10_000, 'pools served', async () => ((await ks.k(['get', 'pools'])).code === 0 ? true : undefined));
    await ks.ok(['apply', '-f', await ks.file('pool.yaml', 'apiVersion: sub.example.com/v1\nkind: Pool\nmetadata: {name: p}\nspec: {replicas: 1}\n')]);
  });

  it('a policy on <resource>/scale sees Scale objects, new and old; kubectl scale past it is refused', async () => {
    await ks.ok([
      'apply',
      '-f',
      await ks.file(
        'scale-policy.yaml',
        policy(
          'max-pool-scale',
          'pools/scale',
          'sub.example.com',
          'UPDATE',
          "object.kind == 'Scale' && oldObject.kind == 'Scale' && request.kind.kind == 'Scale' && object.spec.replicas <= 5",
          "'scale of ' + request.kind.kind + ' ' + object.metadata.name + ' from ' + string(oldObject.spec.replicas) + ' to ' + string(object.spec.replicas) + ' refused'",
        ),
      ),
    ]);
    // Active once a scale past the limit is refused.
    let refused = '';
    await eventually(10_000, 'the scale policy active', async () => {
      const r = await ks.k(['scale', 'pool', 'p', '--replicas=9']);
      refused = r.stderr;
      return r.code !== 0 ? true : undefined;
    });
    assert.match(refused, /ValidatingAdmissionPolicy 'max-pool-scale' with binding 'max-pool-scale' denied request: scale of Scale p from 1 to 9 refused/);
    assert.equal((await ks.ok(['get', 'pool', 'p', '-o', 'jsonpath={.spec.replicas}'])).trim(), '1', 'nothing stored');
    // Within the limit: the policy's Scale checks hold, and the write goes through.
    const scaled = await ks.k(['scale', 'pool', 'p', '--replicas=3']);
    assert.equal(scaled.code, 0, scaled.stderr);
    assert.equal((await ks.ok(['get', 'pool', 'p', '-o', 'jsonpath={.spec.replicas}'])).trim(), '3');
  });

  it('a policy on serviceaccounts/token sees the TokenRequest as completed (defaulted audiences and expiration)', async () => {
    await ks.ok([
      'apply',
      '-f',
      await ks.file(
        'token-policy.yaml',
        policy(
          'token-rules',
          'serviceaccounts/token',
          '',
          'CREATE',
          "request.kind.kind == 'TokenRequest' && request.subResource == 'token' && object.metadata.name == 'bot' && size(object.spec.audiences) > 0 && object.spec.audiences.all(a, a != 'forbidden') && object.spec.expirationSeconds <= 7200",
          "'token for ' + object.metadata.name + ' refused: audiences ' + object.spec.audiences.join(',') + ', ' + string(object.spec.expirationSeconds) + 's'",
        ),
      ),
    ]);
    await ks.ok(['create', 'serviceaccount', 'bot']);
    let refused = '';
    await eventually(10_000, 'the token policy active', async () => {
      const r = await ks.k(['create', 'token', 'bot', '--audience=forbidden']);
      refused = r.stderr;
      return r.code !== 0 ? true : undefined;
    });
    assert.match(refused, /denied request: token for bot refused: audiences forbidden, 3600s/);
    const long = await ks.k(['create', 'token', 'bot', '--duration=3h']);
    assert.notEqual(long.code, 0);
    assert.match(long.stderr, /token for bot refused: audiences .+, 10800s/);
    // Audiences left to the server's default, an hour: allowed.
    const token = await ks.k(['create', 'token', 'bot']);
    assert.equal(token.code, 0, token.stderr);
    assert.equal(token.stdout.trim().split('.').length, 3, 'a JWT');
  });
});
