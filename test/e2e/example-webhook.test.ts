// examples/webhook/ runs as its README says: the server started as its own process writes
// webhooks.yaml (its CA and URL), kubectl 1.33 applies it, and in a labelled namespace a ConfigMap
// created with kubectl is annotated with its creator (the mutating webhook), one holding a
// `password` key is refused with the webhook's message (the validating webhook) and a suspicious
// key passes with a warning. An unlabelled namespace is left alone.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually.js';
import { kubectlSession, type KubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, repoRoot, tools } from '../support/tools.js';

ensureTools();

describe('examples/webhook against kplane with kubectl 1.33', { concurrency: false, timeout: 90_000 }, () => {
  let server: TestServer | undefined;
  let hook: ChildProcess | undefined;
  let log = '';
  let dir = '';
  let kc: KubectlSession;

  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    dir = await mkdtemp(join(tmpdir(), 'kplane-example-webhook-'));
    kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    hook = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'examples/webhook/server.ts'), '--port', '0', '--out', dir], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    hook.stdout!.setEncoding('utf8').on('data', (d: string) => (log += d));
    hook.stderr!.setEncoding('utf8').on('data', (d: string) => (log += d));
    await eventually(30_000, 'the webhook server listening', async () => (log.includes('webhooks serving at') ? true : undefined), {
      context: () => log,
    });
  });

  after(async () => {
    if (hook && hook.exitCode === null && hook.signalCode === null) {
      const exited = new Promise((ok) => hook!.once('exit', ok));
      hook.kill('SIGTERM');
      await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5000).unref())]);
      hook.kill('SIGKILL');
    }
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('mutates and validates ConfigMaps in a labelled namespace', async () => {
    assert.match(await kc.ok(['apply', '-f', join(dir, 'webhooks.yaml')]), /mutatingwebhookconfiguration.*example-mutating created/);
    await kc.ok(['create', 'namespace', 'team-a']);
    await kc.ok(['label', 'namespace', 'team-a', 'example.kplane.io/webhook=enabled']);

    // Mutated: the creator's name (kplane's admin user) stamped by the webhook's JSONPatch.
    await kc.ok(['-n', 'team-a', 'create', 'configmap', 'settings', '--from-literal=color=blue']);
    const createdBy = await kc.ok(['-n', 'team-a', 'get', 'configmap', 'settings', '-o', 'jsonpath={.metadata.annotations.example\\.kplane\\.io/created-by}']);
    assert.equal(createdBy, 'kplane-admin');

    // Refused: the webhook's message, as kube-apiserver words a webhook denial.
    const denied = await kc.k(['-n', 'team-a', 'create', 'configmap', 'db', '--from-literal=password=hunter2']);
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /admission webhook "validate\.configmaps\.example\.kplane\.io" denied the request: data key "password" looks like a credential: store it in a Secret/,
    );
    assert.equal((await kc.k(['-n', 'team-a', 'get', 'configmap', 'db'])).code, 1, 'nothing stored');

    // Allowed with a warning.
    const warned = await kc.k(['-n', 'team-a', 'create', 'configmap', 'client', '--from-literal=token-url=https://example.com']);
    assert.equal(warned.code, 0, warned.stderr);
    assert.match(warned.stderr, /Warning: data key "token-url" may hold a credential/);

    // An update is validated too.
    const upd = await kc.k(['-n', 'team-a', 'patch', 'configmap', 'settings', '-p', '{"data":{"token":"x"}}']);
    assert.notEqual(upd.code, 0);
    assert.match(upd.stderr, /data key "token" looks like a credential/);

    // Outside the labelled namespaces nothing is called.
    await kc.ok(['create', 'configmap', 'free', '--from-literal=password=x']);
    const plain = await kc.ok(['get', 'configmap', 'free', '-o', 'jsonpath={.metadata.annotations}']);
    assert.equal(plain, '');
  });
});
