// Encryption at rest with etcd: the value etcd holds (read with etcd's own API, around kplane)
// starts with k8s:enc: and holds no plaintext; kubectl 1.33 and a watch read the Secret back.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEtcd, type RunningEtcd } from '../support/etcd.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, tools } from '../support/tools.js';
import { KEY1, writeConfig } from './encryption-support.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** etcd's gRPC gateway: the current value of one key, as bytes. */
async function etcdValue(endpoint: string, key: string): Promise<Buffer | undefined> {
  const res = await fetch(`${endpoint}/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: b64(key) }) });
  assert.equal(res.status, 200);
  const body = (await res.json()) as { kvs?: { value?: string }[] };
  const v = body.kvs?.[0]?.value;
  return v === undefined ? undefined : Buffer.from(v, 'base64');
}

describe('encryption at rest with etcd (kubectl 1.33)', { timeout: 180_000 }, () => {
  let etcd: RunningEtcd;
  let server: TestServer;
  let dir = '';

  before(async () => {
    ensureTools();
    etcd = await startEtcd();
    dir = await mkdtemp(join(tmpdir(), 'kplane-enc-etcd-'));
    // JSON this time: the file may be either.
    const config = await writeConfig(
      dir,
      'encryption.json',
      JSON.stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'EncryptionConfiguration',
        resources: [{ resources: ['secrets', 'configmaps'], providers: [{ aesgcm: { keys: [{ name: 'key1', secret: KEY1 }] } }, { identity: {} }] }],
      }),
    );
    server = await startTestServer({ storage: { etcd: etcd.endpoint }, dataDir: dir, encryptionProviderConfig: config });
  });

  after(async () => {
    await server?.stop();
    await etcd?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the value in etcd is k8s:enc:aesgcm:v1:key1:… without plaintext; kubectl and a watch read plaintext', async () => {
    const kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    const raw = new RawClient(server.url, adminCredentials(dir));
    try {
      const plain = 'etcd-hunter2-51ae';
      const rv = (await raw.request({ path: '/api/v1/namespaces/default/secrets' })).json<{ metadata: { resourceVersion: string } }>().metadata.resourceVersion;
      await kc.ok(['create', 'secret', 'generic', 'db-pass', `--from-literal=password=${plain}`]);
      await kc.ok(['create', 'configmap', 'settings', '--from-literal=mode=quiet-7c']);

      const stored = await etcdValue(etcd.endpoint, '/registry/secrets/default/db-pass');
      assert.ok(stored, 'the Secret is in etcd under its usual key');
      assert.equal(stored.subarray(0, 'k8s:enc:aesgcm:v1:key1:'.length).toString(), 'k8s:enc:aesgcm:v1:key1:');
      assert.ok(!stored.includes(plain) && !stored.includes(b64(plain)) && !stored.includes('db-pass'), 'no plaintext (nor the name) inside the value');
      const cm = await etcdValue(etcd.endpoint, '/registry/configmaps/default/settings');
      assert.ok(cm?.toString('latin1').startsWith('k8s:enc:aesgcm:v1:key1:') && !cm.includes('quiet-7c'), 'configmaps are listed too');

      assert.equal(await kc.ok(['get', 'secret', 'db-pass', '-o', 'jsonpath={.data.password}']), b64(plain));
      assert.match(await kc.ok(['get', 'configmaps', '-o', 'jsonpath={.items[*].data.mode}']), /quiet-7c/);
      const watched = await raw.request({ path: `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${rv}&timeoutSeconds=1` });
      const first = JSON.parse(watched.text().split('\n')[0]!) as { type: string; object: { data: Record<string, string> } };
      assert.equal(first.type, 'ADDED');
      assert.equal(first.object.data.password, b64(plain));
    } finally {
      raw.close();
    }
  });
});
