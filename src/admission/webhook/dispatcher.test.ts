import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { CheckAuthorizer } from '../cel/authz.js';
import type { MatchConditionObserver } from '../cel/matchconditions.js';
import type { AdmissionAttributes } from '../interfaces.js';
import { compileConfigurations, mutatingWebhookPlugin, releaseWebhooks, validatingWebhookPlugin, type CompiledWebhook } from './dispatcher.js';
import { ruleMatches } from './rules.js';
import { AdmissionChain } from '../chain.js';
import type { Webhook } from './types.js';
import { admissionAnswer, jsonPatch, type ReviewServer, startReviewServer } from '../../../test/support/review-server.js';

function attrs(over: Partial<AdmissionAttributes> = {}): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    namespace: 'default',
    name: 'a',
    object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', labels: { app: 'x' } } },
    dryRun: false,
    userInfo: { name: 'alice', groups: [] },
    ...over,
  };
}

describe('webhook rules', () => {
  const rule = (resources: string[], scope?: string) => ({
    operations: ['CREATE'],
    apiGroups: ['*'],
    apiVersions: ['v1'],
    resources,
    ...(scope ? { scope } : {}),
  });
  it('match resources, subresources and wildcards as upstream', () => {
    const status = attrs({ subresource: 'status' });
    assert.equal(ruleMatches(rule(['configmaps']), attrs()), true);
    assert.equal(ruleMatches(rule(['configmaps']), status), false);
    assert.equal(ruleMatches(rule(['*']), status), false, "'*' is every resource without subresource");
    assert.equal(ruleMatches(rule(['configmaps/*']), status), true);
    assert.equal(ruleMatches(rule(['*/status']), status), true);
    assert.equal(ruleMatches(rule(['*/*']), attrs()), true);
    assert.equal(ruleMatches({ ...rule(['*']), operations: ['UPDATE'] }, attrs()), false);
    assert.equal(ruleMatches({ ...rule(['*']), apiVersions: ['v2'] }, attrs()), false);
  });
  it('match scopes; a Namespace is cluster-scoped', () => {
    const ns = attrs({ resource: { group: '', version: 'v1', resource: 'namespaces' }, namespace: 'a' });
    assert.equal(ruleMatches(rule(['*'], 'Namespaced'), attrs()), true);
    assert.equal(ruleMatches(rule(['*'], 'Cluster'), attrs()), false);
    assert.equal(ruleMatches(rule(['*'], 'Cluster'), ns), true);
    assert.equal(ruleMatches(rule(['*'], 'Namespaced'), ns), false);
  });
});

describe('webhook dispatch', () => {
  let server: ReviewServer | undefined;
  let url = '';
  let caBundle = '';
  const calls: string[] = [];
  /** What each call's review said of the object: `<path> <request.kind.version> <object.apiVersion>`. */
  const seen: string[] = [];
  before(async () => {
    server = await startReviewServer<{
      request: { uid: string; kind: { version: string }; object?: { apiVersion?: string; metadata?: { labels?: Record<string, string> } } };
    }>(
      (review, { path, res }) => {
        calls.push(path);
        seen.push(`${path} ${review.request.kind.version} ${review.request.object?.apiVersion}`);
        const uid = path === '/wrong-uid' ? 'nope' : review.request.uid;
        const labels = review.request.object?.metadata?.labels ?? {};
        const answer = (response: Record<string, unknown>): unknown => admissionAnswer(uid, response);
        const patched = (ops: unknown[]): unknown => answer({ allowed: true, ...jsonPatch(ops) });
        switch (path) {
          case '/deny':
            return answer({ allowed: false });
          case '/patch-validating':
            return answer({ allowed: true, patchType: 'JSONPatch', patch: 'W10=' });
          // /first labels once; /second adds `second` once it sees `first` (so /first, IfNeeded, is reinvoked).
          case '/first':
            return labels.first ? answer({ allowed: true }) : patched([{ op: 'add', path: '/metadata/labels/first', value: '1' }]);
          case '/second':
            return labels.second ? answer({ allowed: true }) : patched([{ op: 'add', path: '/metadata/labels/second', value: '1' }]);
          // Audit annotations: two well-formed keys, one with a slash and one too long (both dropped).
          case '/annotated':
            return answer({
              allowed: true,
              ...jsonPatch([{ value: '<1>', path: '/metadata/labels/annotated', op: 'add' }]),
              auditAnnotations: { decision: 'stamped', 'not/valid': 'x', ['k'.repeat(64)]: 'x', note: 'a & b' },
            });
          case '/500':
            res.statusCode = 500;
            res.end('boom');
            return undefined;
          case '/slow':
            setTimeout(() => {
              res.setHeader('content-type', 'application/json');
              res.end(JSON.stringify(answer({ allowed: true })));
            }, 300);
            return undefined;
          default:
            return answer({ allowed: true });
        }
      },
      { commonName: 'w' },
    );
    ({ url, caBundle } = server);
  });
  after(async () => {
    await server?.close();
  });

  const hook = (name: string, path: string, over: Partial<Webhook> = {}): Webhook => ({
    name,
    clientConfig: { url: url + path, caBundle },
    rules: [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], scope: '*' }],
    failurePolicy: 'Fail',
    sideEffects: 'None',
    timeoutSeconds: 5,
    admissionReviewVersions: ['v1'],
    ...over,
  });
  const source = (hooks: Webhook[]): { webhooks(): readonly CompiledWebhook[] } => {
    const compiled = compileConfigurations([{ metadata: { name: 'c' }, webhooks: hooks }]);
    return { webhooks: () => compiled };
  };
  const noNamespaces = async () => ({});

  it('a denial without a status is a 400 "without explanation"', async () => {
    const p = validatingWebhookPlugin({ source: source([hook('deny.example.com', '/deny')]), namespaceLabels: noNamespaces });
    await assert.rejects(Promise.resolve(p.validate!(attrs())), (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.equal(e.code, 400);
      assert.equal(e.message, 'admission webhook "deny.example.com" denied the request without explanation');
      return true;
    });
  });

  it('a dry run is refused by a webhook with side effects, and sent to one without', async () => {
    const some = validatingWebhookPlugin({ source: source([hook('some.example.com', '/allow', { sideEffects: 'Some' })]), namespaceLabels: noNamespaces });
    await assert.rejects(Promise.resolve(some.validate!(attrs({ dryRun: true }))), /admission webhook "some.example.com" does not support dry run/);
    const none = validatingWebhookPlugin({
      source: source([hook('none.example.com', '/allow', { sideEffects: 'NoneOnDryRun' })]),
      namespaceLabels: noNamespaces,
    });
    await none.validate!(attrs({ dryRun: true }));
  });

  it('invalid responses are call failures: Fail refuses with 500, Ignore admits', async () => {
    const fail = validatingWebhookPlugin({ source: source([hook('uid.example.com', '/wrong-uid')]), namespaceLabels: noNamespaces });
    await assert.rejects(Promise.resolve(fail.validate!(attrs())), (e: unknown) => {
      assert.ok(e instanceof StatusError);
      assert.equal(e.code, 500);
      assert.match(
        e.message,
        /^Internal error occurred: failed calling webhook "uid.example.com": received invalid webhook response: expected response.uid="[0-9a-f-]+", got "nope"$/,
      );
      return true;
    });
    const patching = validatingWebhookPlugin({ source: source([hook('p.example.com', '/patch-validating')]), namespaceLabels: noNamespaces });
    await assert.rejects(Promise.resolve(patching.validate!(attrs())), /validating webhook may not return response.patch/);
    const ignore = validatingWebhookPlugin({
      source: source([hook('uid.example.com', '/wrong-uid', { failurePolicy: 'Ignore' })]),
      namespaceLabels: noNamespaces,
    });
    await ignore.validate!(attrs());
  });

  it('sends the first AdmissionReview version the webhook knows; none known is a call failure', async () => {
    // v1beta1 answers are not checked for their uid.
    const beta = validatingWebhookPlugin({
      source: source([hook('beta.example.com', '/wrong-uid', { admissionReviewVersions: ['v2', 'v1beta1'] })]),
      namespaceLabels: noNamespaces,
    });
    await beta.validate!(attrs());
    const none = validatingWebhookPlugin({
      source: source([hook('v2.example.com', '/allow', { admissionReviewVersions: ['v2'] })]),
      namespaceLabels: noNamespaces,
    });
    await assert.rejects(
      Promise.resolve(none.validate!(attrs())),
      /^StatusError: Internal error occurred: failed calling webhook "v2.example.com": could not create admission objects: webhook does not accept known AdmissionReview versions \(v1, v1beta1\)$/,
    );
  });

  it('selectors: objectSelector on old or new labels; namespaceSelector on the namespace labels', async () => {
    calls.length = 0;
    const p = validatingWebhookPlugin({
      source: source([
        hook('obj.example.com', '/allow', { objectSelector: { matchLabels: { app: 'y' } } }),
        hook('ns.example.com', '/allow', { namespaceSelector: { matchLabels: { team: 'a' } } }),
      ]),
      namespaceLabels: async (ns): Promise<Record<string, string> | undefined> => (ns === 'default' ? { team: 'a' } : ns === 'other' ? {} : undefined),
    });
    await p.validate!(attrs());
    assert.equal(calls.length, 1, 'only the namespace-selected webhook');
    await p.validate!(attrs({ operation: 'UPDATE', oldObject: { metadata: { labels: { app: 'y' } } }, namespace: 'other' }));
    assert.equal(calls.length, 2, 'the old object matched the object selector');
    await assert.rejects(Promise.resolve(p.validate!(attrs({ namespace: 'missing' }))), /namespaces "missing" not found/);
  });

  it('mutating webhooks patch in order; IfNeeded ones are reinvoked once after a later change', async () => {
    calls.length = 0;
    const p = mutatingWebhookPlugin({
      source: source([hook('first.example.com', '/first', { reinvocationPolicy: 'IfNeeded' }), hook('second.example.com', '/second')]),
      namespaceLabels: noNamespaces,
    });
    const a = attrs();
    // Through a chain: reinvocation is its second pass.
    await new AdmissionChain([p]).admit(a);
    assert.deepEqual(a.object?.metadata?.labels, { app: 'x', first: '1', second: '1' });
    assert.deepEqual(calls, ['/first', '/second', '/first']);
  });

  it('an IfNeeded webhook that failed open is reinvoked after a later change too (upstream marks it invoked either way)', async () => {
    calls.length = 0;
    const p = mutatingWebhookPlugin({
      source: source([hook('failing.example.com', '/500', { reinvocationPolicy: 'IfNeeded', failurePolicy: 'Ignore' }), hook('second.example.com', '/second')]),
      namespaceLabels: noNamespaces,
    });
    const a = attrs();
    await new AdmissionChain([p]).admit(a);
    assert.deepEqual(a.object?.metadata?.labels, { app: 'x', second: '1' });
    assert.deepEqual(calls, ['/500', '/second', '/500']);
  });

  it('a configuration change neither cuts a call under way nor drops the connections of unchanged webhooks', async () => {
    const slow = hook('slow.example.com', '/slow');
    let compiled = compileConfigurations([{ metadata: { name: 'c' }, webhooks: [slow] }]);
    const p = validatingWebhookPlugin({ source: { webhooks: () => compiled }, namespaceLabels: noNamespaces });
    const call = p.validate!(attrs());
    await new Promise((r) => setTimeout(r, 100));
    // Another configuration joins, as the configuration cache rebuilds on any change.
    const old = compiled;
    compiled = compileConfigurations(
      [
        { metadata: { name: 'c' }, webhooks: [slow] },
        { metadata: { name: 'd' }, webhooks: [hook('deny.example.com', '/deny')] },
      ],
      old,
    );
    releaseWebhooks(old, compiled);
    assert.equal(compiled[0]!.endpoint, old[0]!.endpoint, 'the unchanged webhook keeps its endpoint (and its connections)');
    // The slow webhook's configuration goes away while its call is under way: the call still ends.
    const before = compiled;
    compiled = compileConfigurations([{ metadata: { name: 'd' }, webhooks: [hook('deny.example.com', '/deny')] }], before);
    releaseWebhooks(before, compiled);
    await call;
    releaseWebhooks(compiled);
  });

  it("audit annotations: the webhook's own (prefixed with its name), the mutation and its patch (Request level), failing open", async () => {
    const got: [string, string, string | undefined][] = [];
    const sink = { addAnnotation: (k: string, v: string, level?: string) => void got.push([k, v, level]) };
    const closed = `https://127.0.0.1:1/none`;
    const mutating = mutatingWebhookPlugin({
      source: source([
        hook('plain.example.com', '/allow'),
        hook('stamp.example.com', '/annotated'),
        hook('gone.example.com', '/x', { failurePolicy: 'Ignore', clientConfig: { url: closed, caBundle } }),
      ]),
      namespaceLabels: noNamespaces,
    });
    const a = attrs({ annotations: sink });
    await mutating.admit!(a);
    assert.equal(a.object?.metadata?.labels?.annotated, '<1>');
    assert.deepEqual(got, [
      ['mutation.webhook.admission.k8s.io/round_0_index_0', '{"configuration":"c","webhook":"plain.example.com","mutated":false}', undefined],
      ['stamp.example.com/decision', 'stamped', undefined],
      ['stamp.example.com/note', 'a & b', undefined],
      [
        'patch.webhook.admission.k8s.io/round_0_index_1',
        // Each operation's members in Go's map order; < > & escaped as Go's json.Marshal does.
        '{"configuration":"c","webhook":"stamp.example.com","patch":[{"op":"add","path":"/metadata/labels/annotated","value":"\\u003c1\\u003e"}],"patchType":"JSONPatch"}',
        'Request',
      ],
      ['mutation.webhook.admission.k8s.io/round_0_index_1', '{"configuration":"c","webhook":"stamp.example.com","mutated":true}', undefined],
      ['failed-open.mutation.webhook.admission.k8s.io/round_0_index_2', 'gone.example.com', undefined],
      ['mutation.webhook.admission.k8s.io/round_0_index_2', '{"configuration":"c","webhook":"gone.example.com","mutated":false}', undefined],
    ]);
    got.length = 0;
    const failed: string[] = [];
    const validating = validatingWebhookPlugin({
      source: source([
        hook('allow.example.com', '/annotated-v'),
        hook('gone.example.com', '/x', { failurePolicy: 'Ignore', clientConfig: { url: closed, caBundle } }),
      ]),
      namespaceLabels: noNamespaces,
      observeFailOpen: (name, type) => failed.push(`${name} ${type}`),
    });
    await validating.validate!(attrs({ annotations: sink }));
    assert.deepEqual(got, [['failed-open.validating.webhook.admission.k8s.io/round_0_index_1', 'gone.example.com', undefined]]);
    assert.deepEqual(failed, ['gone.example.com validating']);
  });

  it("metrics: each call's code and why it refused, as upstream's dispatchers count them", async () => {
    const seen: string[] = [];
    const metrics = {
      observe: (name: string, type: string, _op: string, rejected: boolean, _s: number, code: number) => void seen.push(`${type} ${name} ${code} ${rejected}`),
      observeRejection: (name: string, type: string, _op: string, why: string, code: number) => void seen.push(`reject ${type} ${name} ${why} ${code}`),
    };
    const closed = { url: 'https://127.0.0.1:1/none', caBundle };
    const mutating = mutatingWebhookPlugin({ source: source([hook('ok.example.com', '/first')]), namespaceLabels: noNamespaces, ...metrics });
    await mutating.admit!(attrs());
    const down = mutatingWebhookPlugin({
      source: source([hook('down.example.com', '/x', { clientConfig: closed })]),
      namespaceLabels: noNamespaces,
      ...metrics,
    });
    await assert.rejects(Promise.resolve(down.admit!(attrs())), /failed calling webhook "down.example.com"/);
    const denying = validatingWebhookPlugin({ source: source([hook('no.example.com', '/deny')]), namespaceLabels: noNamespaces, ...metrics });
    await assert.rejects(Promise.resolve(denying.validate!(attrs())));
    const sideEffects = validatingWebhookPlugin({
      source: source([hook('se.example.com', '/allow', { sideEffects: 'Some' })]),
      namespaceLabels: noNamespaces,
      ...metrics,
    });
    await assert.rejects(Promise.resolve(sideEffects.validate!(attrs({ dryRun: true }))), /does not support dry run/);
    const downV = validatingWebhookPlugin({
      source: source([hook('downv.example.com', '/x', { clientConfig: closed })]),
      namespaceLabels: noNamespaces,
      ...metrics,
    });
    await assert.rejects(Promise.resolve(downV.validate!(attrs())));
    assert.deepEqual(seen, [
      'admit ok.example.com 200 false',
      // A mutating webhook that cannot be called: 503 (the validating dispatcher says 400).
      'reject admit down.example.com calling_webhook_error 503',
      'admit down.example.com 503 true',
      'reject validating no.example.com no_error 400',
      'validating no.example.com 400 true',
      // A dry run a webhook with side effects cannot take: an error of the server's own.
      'reject validating se.example.com apiserver_internal_error 0',
      'validating se.example.com 0 true',
      'reject validating downv.example.com calling_webhook_error 400',
      'validating downv.example.com 400 true',
    ]);
  });

  it('matchConditions matched through an equivalent version: the objects converted once per call', async () => {
    // configmaps served in v1 and v2 (fake): each conversion counted; the webhooks name v1, the write is in v2.
    const conversions: string[] = [];
    const equivalents = {
      versionsOf: () => [
        { version: 'v1', kind: 'ConfigMap' },
        { version: 'v2', kind: 'ConfigMap' },
      ],
      convert: async (o: KubeObject, _g: string, _r: string, from: string, to: string) => {
        conversions.push(`${from}->${to}`);
        return { ...o, apiVersion: to };
      },
    };
    const inV1 = (name: string, path: string): Webhook =>
      hook(name, path, {
        matchPolicy: 'Equivalent',
        rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        matchConditions: [{ name: 'in-v1', expression: "object.apiVersion == 'v1'" }],
      });
    const v2 = (): AdmissionAttributes =>
      attrs({
        resource: { group: '', version: 'v2', resource: 'configmaps' },
        kind: { group: '', version: 'v2', kind: 'ConfigMap' },
        object: { apiVersion: 'v2', kind: 'ConfigMap', metadata: { name: 'a' } },
      });
    seen.length = 0;
    await validatingWebhookPlugin({ source: source([inV1('v.example.com', '/allow')]), namespaceLabels: noNamespaces, equivalents }).validate!(v2());
    await mutatingWebhookPlugin({ source: source([inV1('m.example.com', '/allow')]), namespaceLabels: noNamespaces, equivalents }).admit!(v2());
    assert.deepEqual(seen, ['/allow v1 v1', '/allow v1 v1']);
    assert.deepEqual(conversions, ['v2->v1', 'v2->v1']);
  });

  it("matchConditions' authorizer checks wait for an authorizer that answers later; metrics count the last evaluation", async () => {
    // The Webhook authorization mode answers with a promise: only `approve` is allowed.
    const asked: string[] = [];
    const authorizer: CheckAuthorizer = {
      authorize: (_user, a) => {
        asked.push(a.verb);
        return new Promise((ok) => setTimeout(() => ok({ decision: a.verb === 'approve' ? 'allow' : 'no-opinion' }), 5));
      },
    };
    const observed: string[] = [];
    const observeMatchCondition: MatchConditionObserver = {
      evaluationError: (l) => observed.push(`error ${l.name}`),
      exclusion: (l) => observed.push(`exclusion ${l.name}`),
      seconds: (l) => observed.push(`seconds ${l.name}`),
    };
    const when = (name: string, verb: string): Webhook =>
      hook(name, '/allow', { matchConditions: [{ name: 'may', expression: `authorizer.group('').resource('configmaps').check('${verb}').allowed()` }] });
    calls.length = 0;
    const p = validatingWebhookPlugin({
      source: source([when('approve.example.com', 'approve'), when('delete.example.com', 'delete')]),
      namespaceLabels: noNamespaces,
      authorizer,
      observeMatchCondition,
    });
    await p.validate!(attrs());
    // Called where the check allows; each check asked once though its expression ran twice.
    assert.deepEqual(calls, ['/allow']);
    assert.deepEqual(asked.sort(), ['approve', 'delete']);
    assert.deepEqual(observed.sort(), ['exclusion delete.example.com', 'seconds approve.example.com', 'seconds delete.example.com']);
  });

  it('never calls webhooks for webhook configurations', async () => {
    calls.length = 0;
    const p = validatingWebhookPlugin({
      source: source([hook('deny.example.com', '/deny', { rules: [{ operations: ['*'], apiGroups: ['*'], apiVersions: ['*'], resources: ['*'] }] })]),
      namespaceLabels: noNamespaces,
    });
    await p.validate!(
      attrs({ resource: { group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations' }, namespace: '' }),
    );
    assert.deepEqual(calls, []);
  });
});
