import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AdmissionChain, unlessIdle } from './chain.js';
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin } from './interfaces.js';
import { compilePolicies, validatingAdmissionPolicyPlugin } from './policy/validating.js';
import { compileConfigurations, mutatingWebhookPlugin, validatingWebhookPlugin, type CompiledWebhook } from './webhook/dispatcher.js';

function attrs(operation: AdmissionOperation): AdmissionAttributes {
  return {
    operation,
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    namespace: 'default',
    name: 'a',
    dryRun: false,
    userInfo: { name: 'alice', groups: [] },
  };
}

describe('admission chain', () => {
  it('runs every mutating plugin in order, then (when asked) every validating one', async () => {
    const seen: string[] = [];
    const plugin = (name: string, phases: { admit?: boolean; validate?: boolean }): AdmissionPlugin => ({
      name,
      ...(phases.admit ? { admit: () => void seen.push(`${name}.admit`) } : {}),
      ...(phases.validate ? { validate: async () => void seen.push(`${name}.validate`) } : {}),
    });
    const chain = new AdmissionChain([plugin('a', { admit: true, validate: true }), plugin('b', { validate: true })]);
    chain.add(plugin('c', { admit: true }));
    await chain.admit(attrs('CREATE'));
    await chain.validate(attrs('CREATE'));
    assert.deepEqual(seen, ['a.admit', 'c.admit', 'a.validate', 'b.validate']);
    assert.deepEqual(
      chain.plugins.map((p) => p.name),
      ['a', 'b', 'c'],
    );
  });

  it("keeps kube-apiserver's last plugins last, in its order, whatever the join order", () => {
    const named = (name: string): AdmissionPlugin => ({ name, validate: () => undefined });
    const chain = new AdmissionChain([named('NamespaceLifecycle'), named('ResourceQuota')]);
    chain.add(named('rbac-escalation'));
    chain.add(named('ValidatingAdmissionWebhook'));
    chain.add(named('MutatingAdmissionWebhook'));
    chain.add(named('custom'));
    assert.deepEqual(
      chain.plugins.map((p) => p.name),
      ['NamespaceLifecycle', 'rbac-escalation', 'custom', 'MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook', 'ResourceQuota'],
    );
  });

  it('skips a plugin for operations it does not handle; the first refusal ends the phase', async () => {
    const seen: string[] = [];
    const chain = new AdmissionChain([
      { name: 'deletes-only', handles: (op) => op === 'DELETE', admit: () => void seen.push('deletes-only') },
      {
        name: 'refuses',
        admit: () => {
          throw new Error('no');
        },
      },
      { name: 'after', admit: () => void seen.push('after') },
    ]);
    await assert.rejects(chain.admit(attrs('UPDATE')), /no/);
    assert.deepEqual(seen, []);
    await assert.rejects(chain.admit(attrs('DELETE')), /no/);
    assert.deepEqual(seen, ['deletes-only']);
  });

  it('answers at once when every plugin did (no promise), else in order after the first that waits', async () => {
    const seen: string[] = [];
    const sync = (name: string): AdmissionPlugin => ({ name, admit: () => void seen.push(name), validate: () => void seen.push(`${name}.v`) });
    const chain = new AdmissionChain([sync('a'), sync('b')]);
    assert.equal(chain.startAdmit(attrs('CREATE')), undefined);
    assert.equal(chain.startValidate(attrs('CREATE')), undefined);
    assert.deepEqual(seen, ['a', 'b', 'a.v', 'b.v']);

    seen.length = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    chain.add({ name: 'waits', admit: () => gate.then(() => void seen.push('waits')) });
    chain.add(sync('c'));
    const pending = chain.startAdmit(attrs('CREATE'));
    assert.ok(pending, 'a promise once a plugin answered with one');
    assert.deepEqual(seen, ['a', 'b'], 'the plugin after the waiting one has not run');
    release();
    await pending;
    assert.deepEqual(seen, ['a', 'b', 'waits', 'c']);
  });

  it("turns a plugin's throw into a rejected promise, before and after a plugin that waits", async () => {
    const refuse = (): never => {
      throw new Error('refused');
    };
    const atOnce = new AdmissionChain([{ name: 'refuses', validate: refuse }]);
    const r1 = atOnce.startValidate(attrs('CREATE'));
    assert.ok(r1 instanceof Promise);
    await assert.rejects(r1, /refused/);
    await assert.rejects(atOnce.validate(attrs('CREATE')), /refused/);
    const later = new AdmissionChain([
      { name: 'waits', validate: async () => undefined },
      { name: 'refuses', validate: refuse },
    ]);
    await assert.rejects(later.startValidate(attrs('CREATE'))!, /refused/);
  });

  it('passes a plugin by while it is idle: no call and no promise; otherwise it runs as it is', async () => {
    const seen: string[] = [];
    let idle = true;
    const plugin = unlessIdle(() => idle, {
      name: 'configured',
      handles: (op) => op !== 'DELETE',
      admit: async () => void seen.push('admit'),
      validate: async () => void seen.push('validate'),
    });
    const chain = new AdmissionChain([plugin]);
    assert.equal(chain.startAdmit(attrs('CREATE')), undefined);
    assert.equal(chain.startValidate(attrs('CREATE')), undefined);
    assert.deepEqual(seen, []);
    idle = false;
    assert.equal(plugin.handles?.('DELETE'), false, 'handles is kept');
    assert.ok(chain.startAdmit(attrs('DELETE')) === undefined && seen.length === 0);
    await chain.startAdmit(attrs('CREATE'));
    await chain.startValidate(attrs('UPDATE'));
    assert.deepEqual(seen, ['admit', 'validate']);
  });

  it('webhooks and policies answer at once when none is configured or none of their rules matches', async () => {
    const noNamespaces = async (): Promise<Record<string, string>> => ({});
    let hooks: readonly CompiledWebhook[] = [];
    const source = { webhooks: () => hooks };
    const mutating = mutatingWebhookPlugin({ source, namespaceLabels: noNamespaces });
    const validating = validatingWebhookPlugin({ source, namespaceLabels: noNamespaces });
    const a = attrs('CREATE');
    assert.equal(mutating.admit!(a), undefined, 'no webhook configured');
    assert.equal(validating.validate!(a), undefined);
    // A webhook for secrets only; its URL is never called (nothing listens there).
    const rule = (resources: string[]) => [{ operations: ['*'], apiGroups: [''], apiVersions: ['v1'], resources, scope: '*' }];
    const webhook = (resources: string[]) => ({
      name: 'w.example.com',
      clientConfig: { url: 'https://127.0.0.1:9/' },
      rules: rule(resources),
      namespaceSelector: { matchLabels: { never: 'matched' } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
    });
    hooks = compileConfigurations([{ metadata: { name: 'c' }, webhooks: [webhook(['secrets'])] }]);
    assert.equal(mutating.admit!(a), undefined, 'no rule matches configmaps');
    assert.equal(validating.validate!(a), undefined);
    // Rules that match: the plugins run (and find the namespace selector unmatched: no call).
    hooks = compileConfigurations([{ metadata: { name: 'c' }, webhooks: [webhook(['configmaps'])] }]);
    const m = mutating.admit!(a);
    const v = validating.validate!(a);
    assert.ok(m instanceof Promise && v instanceof Promise);
    await Promise.all([m, v]);

    let compiled = compilePolicies([], []);
    const policy = validatingAdmissionPolicyPlugin({
      source: { policies: () => compiled },
      namespace: async () => undefined,
      params: async () => ({ namespaced: true, items: [] }),
    });
    assert.equal(policy.validate!(a), undefined, 'no policy');
    compiled = compilePolicies(
      [
        {
          metadata: { name: 'p' },
          spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: rule(['secrets']) }, validations: [{ expression: 'true' }] },
        },
      ],
      [{ metadata: { name: 'b' }, spec: { policyName: 'p', validationActions: ['Deny'] } }],
    );
    const p = policy.validate!(a);
    assert.ok(p instanceof Promise, 'a policy exists: it runs (its match is asynchronous)');
    await p;
  });
});
