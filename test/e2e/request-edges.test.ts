// Smaller edges of requests, through real clients: a watch asked for a very long timeout lasts as
// asked (no 32-bit timer overflow); forged continue tokens get kube's 400s; a path with `..`
// segments is not resolved into another namespace's resources.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { tools } from '../support/tools.js';
import { useKubectlServer } from '../support/kubectl.js';

const token = (o: unknown): string => Buffer.from(JSON.stringify(o)).toString('base64url');

describe('request edges', () => {
  const s = useKubectlServer(tools.kubectl, 'kplane-request-edges-');
  const { k, ok } = s;

  test('a watch with timeoutSeconds=2200000 (over 2^31-1 ms) stays open and delivers events (client-node)', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(s.server.kubeconfig);
    let ended: unknown = 'open';
    const seen: string[] = [];
    const ctrl = await new k8s.Watch(kc).watch(
      '/api/v1/namespaces/default/configmaps',
      { timeoutSeconds: 2_200_000 },
      (type: string, obj: k8s.V1ConfigMap) => seen.push(`${type} ${obj.metadata?.name}`),
      (err: unknown) => (ended = err ?? 'ended'),
    );
    try {
      await sleep(1_000);
      assert.equal(ended, 'open', 'the watch ended on its own');
      await ok(['create', 'configmap', 'long-watch', '-n', 'default']);
      const deadline = Date.now() + 10_000;
      while (!seen.includes('ADDED long-watch') && Date.now() < deadline) await sleep(50);
      assert.deepEqual(seen, ['ADDED long-watch']);
      assert.equal(ended, 'open');
    } finally {
      ctrl.abort();
    }
  });

  test("forged continue tokens get kube's 400s (kubectl)", async () => {
    await ok(['create', 'configmap', 'c1', '-n', 'default']);
    const list = async (t: string): Promise<string> => {
      const r = await k(['get', '--raw', `/api/v1/namespaces/default/configmaps?limit=1&continue=${t}`]);
      assert.notEqual(r.code, 0, r.stdout);
      return r.stderr.trim();
    };
    assert.equal(
      await list(token({ v: 'meta.k8s.io/v1', rv: 1, start: '../../kube-system/' })),
      'Error from server (BadRequest): invalid continue token: continue key is not valid: ../../kube-system/',
    );
    assert.equal(
      await list(token({ v: 'meta.k8s.io/v1', rv: 1, start: 'a/../../b' })),
      'Error from server (BadRequest): invalid continue token: continue key is not valid: a/../../b',
    );
    assert.equal(
      await list(Buffer.from('{"v":"meta.k8s.io/v1","rv":1e300,"start":"c1"}').toString('base64url')),
      'Error from server (BadRequest): invalid continue token: continue key is not valid: json: cannot unmarshal number 1e300 into Go struct field continueToken.rv of type int64',
    );
    assert.equal(
      await list(token({ v: 'meta.k8s.io/v2', rv: 1, start: 'c1' })),
      'Error from server (BadRequest): invalid continue token: continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2',
    );
    assert.equal(
      await list(token({ v: 'meta.k8s.io/v1', rv: 1, start: '' })),
      'Error from server (BadRequest): invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)',
    );
    assert.equal(await list('e30='), 'Error from server (BadRequest): invalid continue token: continue key is not valid: illegal base64 data at input byte 3');
    // A token the server wrote still works.
    const page = JSON.parse(await ok(['get', '--raw', '/api/v1/configmaps?limit=1'])) as { metadata: { continue: string } };
    const next = JSON.parse(await ok(['get', '--raw', `/api/v1/configmaps?limit=1&continue=${page.metadata.continue}`])) as { items: unknown[] };
    assert.equal(next.items.length, 1);
  });

  test('a path with .. segments is not resolved into another namespace (raw HTTPS, as clients clean paths)', async () => {
    await ok(['create', 'secret', 'generic', 'hidden', '-n', 'kube-system', '--from-literal=k=v']);
    for (const path of [
      '/api/v1/namespaces/bad/configmaps/../../kube-system/secrets',
      '/api/v1/namespaces/bad/configmaps/%2e%2e/%2E%2E/kube-system/secrets',
      '/api/v1/namespaces/bad/./../kube-system/secrets',
    ]) {
      const r = await s.raw.request({ path });
      assert.doesNotMatch(r.text(), /hidden/, path);
      assert.equal(r.status, 404, `${path}: ${r.text()}`);
      assert.deepEqual(
        { kind: r.json().kind, reason: r.json().reason, message: r.json().message },
        { kind: 'Status', reason: 'NotFound', message: 'the server could not find the requested resource' },
        path,
      );
    }
    // A name of `..` is the store's to refuse, as kube-apiserver's NamespaceKeyFunc does.
    const dots = await s.raw.request({ path: '/api/v1/namespaces/default/configmaps/..' });
    assert.equal(dots.status, 400, dots.text());
    assert.equal(dots.json().message, 'Name parameter invalid: "..": may not be \'..\'');
  });
});
