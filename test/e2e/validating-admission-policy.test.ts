// ValidatingAdmissionPolicy end to end with kubectl 1.20 and 1.33: a policy and its binding applied,
// a create refused with the policy's message (and messageExpression, variables, reason), [Warn] shown
// as a kubectl warning, paramKind ConfigMap with paramRef (name and parameterNotFoundAction), CEL
// that does not compile refused with 422 and the field path; [Audit] recorded in the audit log; and a
// webhook whose matchConditions are false is not called.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createCertificateAuthority, issueCertificate } from '../../src/server/certs.js';
import { eventually } from '../support/eventually.js';
import { readAuditEvents } from '../support/audit.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, run, tools } from '../support/tools.js';

ensureTools();

const configMap = (name: string, labels: Record<string, string>, data: Record<string, string> = { a: '1' }): string =>
  JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels }, data });

/** A policy on ConfigMap creates and updates of objects labelled `policy: <label>`. */
function policy(name: string, spec: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'] }] },
      ...spec,
    },
  });
}

function binding(name: string, policyName: string, label: string, actions: string[], paramRef?: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: {
      policyName,
      validationActions: actions,
      matchResources: { objectSelector: { matchLabels: { policy: label } } },
      ...(paramRef ? { paramRef } : {}),
    },
  });
}

for (const kubectl of KUBECTLS)
  describe(`ValidatingAdmissionPolicy with kubectl ${kubectl.name}`, () => {
    const ks = useKubectlServer(kubectl.bin, 'kplane-vap-');

    /** Applies policy and binding, then waits until a create of `probe` is refused (the caches caught up). */
    async function install(label: string, docs: string[], probe: string): Promise<void> {
      for (const [i, d] of docs.entries()) await ks.ok(['apply', '-f', await ks.file(`${label}-${i}.json`, d)]);
      await eventually(10_000, `policy ${label} active`, async () => {
        const r = await ks.k(['create', '--dry-run=server', '-f', await ks.file(`${label}-probe.json`, probe)]);
        return r.code !== 0 || r.stderr.includes('Warning') ? true : undefined;
      });
    }

    it('denies a create with the policy message; allows what passes; prints its columns', async () => {
      await install(
        'deny',
        [
          policy('max-keys', {
            variables: [{ name: 'keys', expression: 'has(object.data) ? object.data.size() : 0' }],
            validations: [
              { expression: 'variables.keys <= 2', messageExpression: "'too many keys: ' + string(variables.keys)", reason: 'Forbidden' },
              { expression: "!object.metadata.name.startsWith('x-')", message: 'names may not start with x-' },
            ],
          }),
          binding('max-keys-binding', 'max-keys', 'deny', ['Deny']),
        ],
        configMap('probe-deny', { policy: 'deny' }, { a: '1', b: '2', c: '3' }),
      );
      const big = await ks.k(['create', '-f', await ks.file('big.json', configMap('big', { policy: 'deny' }, { a: '1', b: '2', c: '3' }))]);
      assert.notEqual(big.code, 0);
      assert.match(
        big.stderr,
        /configmaps "big" is forbidden: ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: too many keys: 3/,
      );
      const x = await ks.k(['create', '-f', await ks.file('x.json', configMap('x-one', { policy: 'deny' }))]);
      assert.notEqual(x.code, 0);
      // Reason Invalid (the default): 422, which kubectl prints as an invalid object.
      assert.match(
        x.stderr,
        /The configmaps "x-one" is invalid: : ValidatingAdmissionPolicy 'max-keys' with binding 'max-keys-binding' denied request: names may not start with x-/,
      );
      await ks.ok(['create', '-f', await ks.file('small.json', configMap('small', { policy: 'deny' }))]);
      // Not selected by the binding: never refused.
      await ks.ok(['create', '-f', await ks.file('other.json', configMap('x-other', { policy: 'none' }, { a: '1', b: '2', c: '3' }))]);
      const table = await ks.ok(['get', 'validatingadmissionpolicies']);
      assert.match(table, /NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE/);
      assert.match(table, /max-keys\s+2\s+<unset>/);
      const bindings = await ks.ok(['get', 'validatingadmissionpolicybindings']);
      assert.match(bindings, /NAME\s+POLICYNAME\s+PARAMREF\s+AGE/);
      assert.match(bindings, /max-keys-binding\s+max-keys\s+<unset>/);
    });

    it("kube's newer CEL: two-variable comprehensions and optional entries in validations and messages", async () => {
      await install(
        'newcel',
        [
          policy('short-values', {
            variables: [{ name: 'owners', expression: '[?object.metadata.?labels.?team, ?object.metadata.?annotations.?owner]' }],
            validations: [
              {
                expression: "object.data.all(k, v, v.size() <= 8 || k.startsWith('long-'))",
                messageExpression: "'values too long: ' + object.data.transformList(k, v, v.size() > 8 && !k.startsWith('long-'), k).join(', ')",
              },
              { expression: 'variables.owners.size() > 0', message: 'a team label or an owner annotation is required' },
            ],
          }),
          binding('short-values-binding', 'short-values', 'newcel', ['Deny']),
        ],
        configMap('probe-newcel', { policy: 'newcel' }, { a: 'far-too-long-value' }),
      );
      const long = await ks.k([
        'create',
        '-f',
        await ks.file('long.json', configMap('long', { policy: 'newcel', team: 'db' }, { a: 'far-too-long-value', 'long-b': 'far-too-long-value', c: 'ok' })),
      ]);
      assert.notEqual(long.code, 0);
      assert.match(long.stderr, /ValidatingAdmissionPolicy 'short-values' with binding 'short-values-binding' denied request: values too long: a$/m);
      const nobody = await ks.k(['create', '-f', await ks.file('nobody.json', configMap('nobody', { policy: 'newcel' }))]);
      assert.notEqual(nobody.code, 0);
      assert.match(nobody.stderr, /denied request: a team label or an owner annotation is required/);
      await ks.ok([
        'create',
        '-f',
        await ks.file('fine.json', configMap('fine', { policy: 'newcel', team: 'db' }, { a: 'short', 'long-b': 'far-too-long-value' })),
      ]);
    });

    it('[Warn] shows as a kubectl warning and the write goes through', async () => {
      await install(
        'warn',
        [
          policy('warn-label', {
            validations: [{ expression: "has(object.metadata.labels) && 'team' in object.metadata.labels", message: 'a team label is expected' }],
          }),
          binding('warn-label-binding', 'warn-label', 'warn', ['Warn', 'Audit']),
        ],
        configMap('probe-warn', { policy: 'warn' }),
      );
      const r = await ks.k(['create', '-f', await ks.file('warned.json', configMap('warned', { policy: 'warn' }))]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(
        r.stderr,
        /Warning: Validation failed for ValidatingAdmissionPolicy 'warn-label' with binding 'warn-label-binding': a team label is expected/,
      );
      await ks.ok(['get', 'configmap', 'warned']);
    });

    it('paramKind ConfigMap with paramRef by name; parameterNotFoundAction Deny', async () => {
      await ks.ok(['create', 'configmap', 'limits', '--from-literal=maxKeys=1']);
      await install(
        'param',
        [
          policy('param-keys', {
            paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
            validations: [{ expression: 'size(object.data) <= int(params.data.maxKeys)', messageExpression: "'at most ' + params.data.maxKeys + ' keys'" }],
          }),
          binding('param-keys-binding', 'param-keys', 'param', ['Deny'], { name: 'limits', namespace: 'default', parameterNotFoundAction: 'Deny' }),
        ],
        configMap('probe-param', { policy: 'param' }, { a: '1', b: '2' }),
      );
      const r = await ks.k(['create', '-f', await ks.file('p2.json', configMap('p2', { policy: 'param' }, { a: '1', b: '2' }))]);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /ValidatingAdmissionPolicy 'param-keys' with binding 'param-keys-binding' denied request: at most 1 keys/);
      await ks.ok(['create', '-f', await ks.file('p1.json', configMap('p1', { policy: 'param' }))]);
      // The parameter object gone: Deny refuses every matching write.
      await ks.ok(['delete', 'configmap', 'limits']);
      await eventually(10_000, 'param gone', async () => {
        const g = await ks.k(['create', '--dry-run=server', '-f', await ks.file('p3.json', configMap('p3', { policy: 'param' }))]);
        return g.code !== 0 && g.stderr.includes('failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction')
          ? true
          : undefined;
      });
    });

    it('kubectl explain describes the kinds', async () => {
      const spec = await ks.ok(['explain', 'validatingadmissionpolicies.spec.validations']);
      assert.match(spec, /messageExpression/);
      const b = await ks.ok(['explain', 'validatingadmissionpolicybindings.spec.paramRef']);
      assert.match(b, /parameterNotFoundAction/);
    });

    it('CEL that does not compile is refused with 422 and the field path', async () => {
      const bad = policy('bad-cel', {
        validations: [
          { expression: 'object.metadata.name ==' },
          { expression: "'a string'" },
          // request and namespaceObject are typed as upstream types them (BuildRequestType, BuildNamespaceType).
          { expression: "request.operaton == 'CREATE'" },
          { expression: "namespaceObject.metadata.lables['team'] == 'a'" },
          { expression: 'request.name' },
        ],
        matchConditions: [{ name: 'c1', expression: 'nosuchvar > 1' }],
      });
      const r = await ks.k(['create', '--validate=false', '-f', await ks.file('bad-cel.json', bad)]);
      assert.notEqual(r.code, 0);
      for (const text of [
        'The ValidatingAdmissionPolicy "bad-cel" is invalid',
        'spec.validations[0].expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:',
        `spec.validations[1].expression: Invalid value: "'a string'": must evaluate to bool but got string`,
        'spec.matchConditions[0].expression: Invalid value: "nosuchvar > 1": compilation failed: ERROR: <input>:1:1: undeclared reference to \'nosuchvar\'',
        `spec.validations[2].expression: Invalid value: "request.operaton == 'CREATE'": compilation failed: ERROR: <input>:1:8: undefined field 'operaton'`,
        `spec.validations[3].expression: Invalid value: "namespaceObject.metadata.lables['team'] == 'a'": compilation failed: ERROR: <input>:1:25: undefined field 'lables'`,
        'spec.validations[4].expression: Invalid value: "request.name": must evaluate to bool but got string',
      ]) {
        assert.ok(r.stderr.includes(text), `missing ${text}\n${r.stderr}`);
      }
      const badBinding = JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: 'bad-binding' },
        spec: { policyName: 'x', validationActions: ['Deny', 'Warn'], paramRef: { name: 'a', selector: {} } },
      });
      const b = await ks.k(['create', '--validate=false', '-f', await ks.file('bad-binding.json', badBinding)]);
      assert.notEqual(b.code, 0);
      assert.match(b.stderr, /spec.paramRef.name: Forbidden: name and selector are mutually exclusive/);
      assert.match(b.stderr, /spec.paramRef.parameterNotFoundAction: Required value/);
      assert.match(b.stderr, /spec.validationActions: Invalid value: \["Deny","Warn"\]: must not contain both Deny and Warn/);
    });
  });

describe('webhook matchConditions', () => {
  const kubectl = KUBECTLS[KUBECTLS.length - 1]!;
  const ks = useKubectlServer(kubectl.bin, 'kplane-matchcond-');
  const ca = createCertificateAuthority({ commonName: 'webhook-ca' });
  let server: Server;
  let url = '';
  const seen: string[] = [];

  before(async () => {
    const cert = issueCertificate(ca, { commonName: 'webhook', hosts: ['127.0.0.1'], usage: 'server' });
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: { uid: string; object?: { metadata?: { name?: string } } } };
        seen.push(review.request.object?.metadata?.name ?? '');
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: review.request.uid, allowed: true } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/validate`;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('a webhook whose matchConditions are false is not called; an error fails closed', async () => {
    const cfg = (expression: string): string =>
      JSON.stringify({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'conditional' },
        webhooks: [
          {
            name: 'conditional.kplane.test',
            admissionReviewVersions: ['v1'],
            sideEffects: 'None',
            clientConfig: { url, caBundle: Buffer.from(ca.certPem).toString('base64') },
            rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
            matchConditions: [{ name: 'only-checked', expression }],
          },
        ],
      });
    await ks.ok(['apply', '-f', await ks.file('cond.json', cfg("object.metadata.name.startsWith('checked-')"))]);
    await eventually(10_000, 'webhook active', async () => {
      const n = seen.length;
      await ks.k(['create', '--dry-run=server', '-f', await ks.file('probe.json', configMap('checked-probe', {}))]);
      return seen.length > n ? true : undefined;
    });
    const before = seen.length;
    await ks.ok(['create', '-f', await ks.file('skipped.json', configMap('skipped', {}))]);
    await ks.ok(['create', '-f', await ks.file('checked.json', configMap('checked-one', {}))]);
    assert.deepEqual(seen.slice(before), ['checked-one']);
    // Upstream's matchConditions metrics: the skipped create is an exclusion; every evaluation is timed.
    const series = async (name: string): Promise<number> => {
      const text = (await ks.raw.request({ path: '/metrics' })).text();
      const labels = 'name="conditional.kplane.test",kind="webhook",type="validating",operation="CREATE"';
      const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
      return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
    };
    assert.ok((await series('apiserver_admission_match_condition_exclusions_total')) >= 1, 'the exclusion counted');
    assert.ok((await series('apiserver_admission_match_condition_evaluation_seconds_count')) >= 2, 'both evaluations timed');
    assert.equal(await series('apiserver_admission_match_condition_evaluation_errors_total'), 0);
    // A condition that fails to evaluate, under failurePolicy Fail: the request is refused (403).
    await ks.ok(['apply', '-f', await ks.file('cond2.json', cfg("object.data.nosuchkey == 'x'"))]);
    await eventually(10_000, 'condition error refuses', async () => {
      const r = await ks.k(['create', '--dry-run=server', '-f', await ks.file('e.json', configMap('errs', {}))]);
      return r.code !== 0 &&
        /configmaps "errs" is forbidden: expression 'object.data.nosuchkey == 'x'' resulted in error: no such key: nosuchkey/.test(r.stderr)
        ? true
        : undefined;
    });
    assert.ok((await series('apiserver_admission_match_condition_evaluation_errors_total')) >= 1, 'the error counted');
    // A condition that does not compile is refused with the field path.
    const bad = await ks.k(['apply', '-f', await ks.file('cond3.json', cfg('object.metadata.name =='))]);
    assert.notEqual(bad.code, 0);
    assert.match(
      bad.stderr,
      /webhooks\[0\]\.matchConditions\[0\]\.expression: Invalid value: "object.metadata.name ==": compilation failed: ERROR: <input>:1:/,
    );
  });
});

describe('[Audit] with an audit log', () => {
  let dir = '';
  let srv: TestServer;
  let logPath = '';

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-vap-audit-'));
    logPath = join(dir, 'audit.log');
    const policyFile = join(dir, 'policy.yaml');
    await writeFile(policyFile, 'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n');
    srv = await startTestServer({ audit: { policyFile, log: { path: logPath } } });
  });
  after(async () => {
    await srv?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('a failed validation is annotated on the request, which goes through', async () => {
    const env = { KUBECONFIG: srv.kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
    const kube = (args: string[]) => run(tools.kubectl, args, { env });
    const file = async (name: string, text: string): Promise<string> => {
      const f = join(dir, name);
      await writeFile(f, text);
      return f;
    };
    assert.equal((await kube(['apply', '-f', await file('p.json', policy('audited', { validations: [{ expression: 'false', message: 'noted' }] }))])).code, 0);
    assert.equal((await kube(['apply', '-f', await file('b.json', binding('audited-binding', 'audited', 'audit', ['Audit']))])).code, 0);
    const annotation = await eventually(10_000, 'validation_failure annotation', async () => {
      const name = `a${Date.now()}`;
      const r = await kube(['create', '-f', await file(`${name}.json`, configMap(name, { policy: 'audit' }))]);
      assert.equal(r.code, 0, r.stderr);
      const ev = readAuditEvents<{ stage: string; objectRef?: { name?: string }; annotations?: Record<string, string> }>(logPath, 'ResponseComplete').find(
        (e) => e.objectRef?.name === name,
      );
      return ev?.annotations?.['validation.policy.admission.k8s.io/validation_failure'];
    });
    assert.deepEqual(JSON.parse(annotation), [
      { message: 'noted', policy: 'audited', binding: 'audited-binding', expressionIndex: 0, validationActions: ['Audit'] },
    ]);
  });
});

describe('ValidatingAdmissionPolicy authorizer checks with RBAC, kubectl 1.33', () => {
  const ks = useKubectlServer(tools.kubectl, 'kplane-vap-authz-', { authorizationModes: ['RBAC'] });

  it('authorizer checks what the requesting user may do (RBAC): only approvers create approved ConfigMaps', async () => {
    // alice and bob may create ConfigMaps; only bob may `approve` them.
    for (const args of [
      ['create', 'role', 'cm-writer', '--verb=create,get', '--resource=configmaps'],
      ['create', 'rolebinding', 'cm-writers', '--role=cm-writer', '--user=alice', '--user=bob'],
      ['create', 'role', 'cm-approver', '--verb=approve', '--resource=configmaps'],
      ['create', 'rolebinding', 'cm-approvers', '--role=cm-approver', '--user=bob'],
    ])
      await ks.ok(args);
    for (const [i, d] of [
      policy('approved-only', {
        validations: [
          {
            expression:
              "authorizer.group('').resource('configmaps').namespace(request.namespace).labelSelector('policy=approve').fieldSelector('metadata.name!=x').check('approve').allowed()",
            messageExpression:
              "request.userInfo.username + ' may not approve configmaps (requestResource: ' + string(authorizer.requestResource.check('create').allowed()) + ', /healthz: ' + string(authorizer.path('/healthz').check('get').allowed()) + ', a stranger service account: ' + string(authorizer.serviceAccount('default', 'stranger').group('').resource('configmaps').check('create').allowed()) + ')'",
          },
        ],
      }),
      binding('approved-only', 'approved-only', 'approve', ['Deny']),
    ].entries())
      await ks.ok(['apply', '-f', await ks.file(`approve-${i}.json`, d)]);
    const byAlice = await ks.file('approve-a.json', configMap('by-alice', { policy: 'approve' }));
    await eventually(10_000, 'the authorizer policy active', async () =>
      (await ks.k(['create', '--as=alice', '--dry-run=server', '-f', byAlice])).code !== 0 ? true : undefined,
    );
    const refused = (await ks.k(['create', '--as=alice', '-f', byAlice])).stderr;
    assert.match(
      refused,
      /ValidatingAdmissionPolicy 'approved-only' with binding 'approved-only' denied request: alice may not approve configmaps \(requestResource: true, \/healthz: true, a stranger service account: false\)/,
    );
    const byBob = await ks.k(['create', '--as=bob', '-f', await ks.file('approve-b.json', configMap('by-bob', { policy: 'approve' }))]);
    assert.equal(byBob.code, 0, byBob.stderr);
  });
});
