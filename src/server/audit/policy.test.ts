// The audit policy's matching (upstream's checker_test.go cases, in their words) and the event's
// encoding (the v1 struct's field order and MicroTime).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { encodeEventJSON, encodeEventLegacy, formatMicroTime, type AuditEvent } from './event.js';
import { parsePolicy, PolicyRuleEvaluator, type AuditAttributes } from './policy.js';

const attrs = (a: Partial<AuditAttributes>): AuditAttributes => ({
  verb: 'get',
  isResourceRequest: true,
  path: '',
  namespace: 'default',
  apiGroup: '',
  resource: 'pods',
  subresource: '',
  name: 'p',
  ...a,
});
const tim = { name: 'tim', groups: ['humans', 'system:authenticated'] };

test('the first matching rule decides; resources, subresources, names, namespaces, URLs', () => {
  const p = parsePolicy(`apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
omitManagedFields: true
rules:
- level: None
  users: [system:kube-proxy]
- level: RequestResponse
  resources: [{group: "", resources: ["pods/log"]}]
- level: Request
  resources: [{group: "", resources: ["*/status"]}]
  omitStages: [ResponseStarted]
  omitManagedFields: false
- level: Metadata
  resources: [{group: apps, resources: ["deployments/*"]}]
- level: Request
  resources: [{group: "", resources: [configmaps], resourceNames: [special]}]
- level: Metadata
  namespaces: [kube-system]
- level: RequestResponse
  nonResourceURLs: ["/logs*", "/metrics"]
- level: None
  userGroups: [system:nodes]
`);
  const e = new PolicyRuleEvaluator(p);
  const level = (user: typeof tim | undefined, a: Partial<AuditAttributes>): string => e.evaluate(user, attrs(a)).level;
  assert.equal(level({ name: 'system:kube-proxy', groups: [] }, {}), 'None');
  assert.equal(level(tim, { subresource: 'log' }), 'RequestResponse');
  assert.equal(level(tim, { subresource: 'exec' }), 'None');
  assert.equal(level(tim, { resource: 'nodes', subresource: 'status', namespace: '' }), 'Request');
  assert.equal(level(tim, { apiGroup: 'apps', resource: 'deployments', subresource: 'scale' }), 'Metadata');
  assert.equal(level(tim, { apiGroup: 'apps', resource: 'deployments' }), 'Metadata', 'deployments/* matches the resource itself too, as upstream');
  assert.equal(level(tim, { resource: 'configmaps', name: 'special' }), 'Request');
  assert.equal(level(tim, { resource: 'configmaps', name: '', verb: 'create' }), 'None', 'a create has no name to match');
  assert.equal(level(tim, { resource: 'configmaps', namespace: 'kube-system' }), 'Metadata');
  assert.equal(level(tim, { isResourceRequest: false, path: '/logs/kube.log', resource: '', namespace: '' }), 'RequestResponse');
  assert.equal(level(tim, { isResourceRequest: false, path: '/metrics/x', resource: '', namespace: '' }), 'None');
  assert.equal(level(undefined, { isResourceRequest: false, path: '/metrics', resource: '', namespace: '' }), 'RequestResponse');
  // Stages: the policy's joined to the rule's; omitManagedFields: the rule's over the policy's.
  const status = e.evaluate(tim, attrs({ resource: 'nodes', subresource: 'status' }));
  assert.deepEqual([...status.omitStages].sort(), ['RequestReceived', 'ResponseStarted']);
  assert.equal(status.omitManagedFields, false);
  assert.equal(e.evaluate(tim, attrs({ subresource: 'log' })).omitManagedFields, true);
  const none = e.evaluate(tim, attrs({ resource: 'secrets' }));
  assert.deepEqual(none, { level: 'None', omitStages: ['RequestReceived'], omitManagedFields: true });
});

test('validation: upstream paths and words, all problems at once', () => {
  assert.throws(
    () =>
      parsePolicy(`apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "apps/v1", resourceNames: [x]}]
  namespaces: [a]
  nonResourceURLs: ["/a*b"]
`),
    {
      message:
        `[rules[0].nonResourceURLs[0]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule, ` +
        `rules[0].resources.group: Invalid value: "apps/v1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), ` +
        `rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource, ` +
        `rules[0].nonResourceURLs: Invalid value: []string{"/a*b"}: rules cannot apply to both regular resources and non-resource URLs]`,
    },
  );
  assert.throws(
    () => parsePolicy('apiVersion: audit.k8s.io/v2\nkind: Policy\n'),
    /^Error: failed decoding: no kind "Policy" is registered for version "audit.k8s.io\/v2"/,
  );
  const warnings: string[] = [];
  parsePolicy('apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: None\n  levle: x\n', (w) => warnings.push(w));
  assert.deepEqual(warnings, ['Audit policy contains errors, falling back to lenient decoding: strict decoding error: unknown field "levle"']);
});

test('an event encodes as upstream writes audit.k8s.io/v1 Events', () => {
  const ev: AuditEvent = {
    level: 'Metadata',
    auditID: 'a1',
    stage: 'ResponseComplete',
    requestURI: '/api/v1/namespaces/default/configmaps?limit=500',
    verb: 'list',
    user: { name: 'alice', groups: ['devs', 'system:authenticated'], extra: { 'b<': ['1'] } },
    impersonatedUser: undefined,
    sourceIPs: ['127.0.0.1'],
    userAgent: 'kubectl/v1.33.9',
    objectRef: { resource: 'configmaps', namespace: 'default', name: '', uid: '', apiGroup: '', apiVersion: 'v1', resourceVersion: '', subresource: '' },
    responseStatus: { code: 200 },
    requestObject: undefined,
    responseObject: undefined,
    requestReceivedTimestamp: 1_764_958_421_000_042,
    stageTimestamp: 1_764_958_421_123_456,
    annotations: new Map([
      ['z', '1'],
      ['authorization.k8s.io/decision', 'allow'],
    ]),
  };
  assert.equal(
    encodeEventJSON(ev),
    '{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"a1","stage":"ResponseComplete",' +
      '"requestURI":"/api/v1/namespaces/default/configmaps?limit=500","verb":"list",' +
      '"user":{"username":"alice","groups":["devs","system:authenticated"],"extra":{"b\\u003c":["1"]}},"sourceIPs":["127.0.0.1"],' +
      '"userAgent":"kubectl/v1.33.9","objectRef":{"resource":"configmaps","namespace":"default","apiVersion":"v1"},' +
      '"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2025-12-05T18:13:41.000042Z",' +
      '"stageTimestamp":"2025-12-05T18:13:41.123456Z","annotations":{"authorization.k8s.io/decision":"allow","z":"1"}}',
  );
  assert.equal(
    encodeEventLegacy(ev),
    '2025-12-05T18:13:41.000042Z AUDIT: id="a1" stage="ResponseComplete" ip="127.0.0.1" method="list" user="alice" ' +
      'groups="\\"devs\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.33.9" namespace="default" ' +
      'uri="/api/v1/namespaces/default/configmaps?limit=500" response="200"',
  );
  assert.equal(formatMicroTime(1_764_958_421_000_000), '2025-12-05T18:13:41.000000Z');
});
