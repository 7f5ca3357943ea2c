// Encryption at rest with SQLite, through kubectl 1.33: what reaches the database file for each
// provider, the metrics, and the upstream key-rotation procedure run end to end with restarts.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { adminCredentials, RawClient } from '../support/https.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { run, tools } from '../support/tools.js';
import { encryptionConfigYAML, KEY1, KEY2, rawSqliteValues, sqliteFileBytes, writeConfig, type Provider } from './encryption-support.js';

const b64 = (s: string): string => Buffer.from(s).toString('base64');

describe('encryption at rest with SQLite (kubectl 1.33)', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-enc-e2e-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  for (const [name, provider] of [
    ['aescbc', { aescbc: [['key1', KEY1]] }],
    ['aesgcm', { aesgcm: [['key1', KEY1]] }],
    ['secretbox', { secretbox: [['key1', KEY1]] }],
  ] as [string, Provider][]) {
    test(`${name}: the database file holds no plaintext of a Secret; kubectl reads it back; a watch sees it`, async () => {
      const dataDir = await mkdtemp(join(dir, `${name}-`));
      const config = await writeConfig(dataDir, 'encryption.yaml', encryptionConfigYAML([provider, 'identity']));
      const server = await startTestServer({ storage: 'sqlite', dataDir, encryptionProviderConfig: config });
      const raw = new RawClient(server.url, adminCredentials(dataDir));
      try {
        const kc = kubectlSession(tools.kubectl, server.kubeconfig, dataDir);
        const plain = `hunter2-${name}-d7f1c0`;
        const list = (await raw.request({ path: '/api/v1/namespaces/default/secrets' })).json<{ metadata: { resourceVersion: string } }>();
        await kc.ok(['create', 'secret', 'generic', 'db-pass', `--from-literal=password=${plain}`]);
        // A ConfigMap is not listed in the config: its value is stored as it is (the grep below can see plain text).
        await kc.ok(['create', 'configmap', 'visible', `--from-literal=note=in-the-clear-${name}`]);
        assert.equal(await kc.ok(['get', 'secret', 'db-pass', '-o', 'jsonpath={.data.password}']), b64(plain));

        const bytes = sqliteFileBytes(dataDir);
        assert.ok(bytes.includes(`in-the-clear-${name}`), 'the unencrypted ConfigMap is found in the file (the search works)');
        assert.ok(!bytes.includes(plain), 'no plaintext of the Secret in kplane.db or its WAL');
        assert.ok(!bytes.includes(b64(plain)), 'no base64 of the Secret either');
        assert.ok(bytes.includes(`k8s:enc:${name}:v1:key1:`), `values carry upstream's k8s:enc:${name}:v1:key1: prefix`);

        // The watch cache's events carry plaintext (a watch from before the create replays it).
        const watched = await raw.request({
          path: `/api/v1/namespaces/default/secrets?watch=1&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=1`,
        });
        const added = watched
          .text()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { type: string; object: { data?: Record<string, string> } });
        assert.equal(added[0]?.type, 'ADDED');
        assert.equal(added[0]?.object.data?.password, b64(plain));

        const metrics = (await raw.request({ path: '/metrics' })).text();
        assert.match(
          metrics,
          new RegExp(
            `apiserver_storage_transformation_operations_total\\{resource="secrets",transformation_type="to_storage",transformer_prefix="k8s:enc:${name}:v1:",status="OK"\\} [1-9]`,
          ),
        );
        assert.match(
          metrics,
          /apiserver_storage_transformation_duration_seconds_bucket\{le="[^"]+",transformation_type="from_storage",transformer_prefix="k8s:enc:/,
        );
      } finally {
        raw.close();
        await server.stop();
      }
    });
  }

  test('key rotation as upstream documents it, a removed key, and decrypting back to identity', async () => {
    const dataDir = await mkdtemp(join(dir, 'rotate-'));
    let server: TestServer | undefined;
    const start = async (providers?: Provider[]): Promise<TestServer> => {
      const config = providers ? await writeConfig(dataDir, `enc-${Math.random().toString(36).slice(2)}.yaml`, encryptionConfigYAML(providers)) : undefined;
      server = await startTestServer({ storage: 'sqlite', dataDir, ...(config ? { encryptionProviderConfig: config } : {}) });
      return server;
    };
    const stop = async (): Promise<void> => {
      await server?.stop();
      server = undefined;
    };
    const kubectl = () => kubectlSession(tools.kubectl, server!.kubeconfig, dataDir);
    const secrets = { before: 'plain-before-4c1', s1: 'first-key-9a2', s2: 'first-key-again-7b3', s3: 'second-key-5d4' };
    const readAll = async (names: (keyof typeof secrets)[]): Promise<void> => {
      for (const n of names) assert.equal(await kubectl().ok(['get', 'secret', n, '-o', 'jsonpath={.data.v}']), b64(secrets[n]), `secret ${n} reads back`);
    };
    const create = (n: keyof typeof secrets) => kubectl().ok(['create', 'secret', 'generic', n, `--from-literal=v=${secrets[n]}`]);
    /** `kubectl get secrets -A -o json | kubectl replace -f -`, as upstream's docs write it. */
    const rewriteAll = async (): Promise<void> => {
      const k = tools.kubectl;
      const r = await run('bash', ['-c', `set -o pipefail; '${k}' get secrets -A -o json | '${k}' replace -f -`], { env: kubectl().env, timeoutMs: 60_000 });
      assert.equal(r.code, 0, `replace failed: ${r.stderr}`);
    };
    const stored = async (): Promise<Map<string, string>> => {
      await stop();
      return rawSqliteValues(dataDir, '/registry/secrets/');
    };
    const prefixOf = (values: Map<string, string>, name: string): string => {
      const v = values.get(`/registry/secrets/default/${name}`) ?? '';
      return v.startsWith('k8s:enc:') ? v.split(':').slice(0, 5).join(':') : v.slice(0, 1);
    };
    try {
      // Written before encryption was turned on.
      await start();
      await create('before');
      assert.equal(prefixOf(await stored(), 'before'), '{');

      // 1. Turn it on: aescbc key1 writes, identity (last) still reads what was written before.
      await start([{ aescbc: [['key1', KEY1]] }, 'identity']);
      await readAll(['before']);
      await create('s1');
      // 2. Add the new key second (on every server first), restart.
      await stop();
      await start([
        {
          aescbc: [
            ['key1', KEY1],
            ['key2', KEY2],
          ],
        },
        'identity',
      ]);
      await create('s2');
      await readAll(['before', 's1', 's2']);
      let values = await stored();
      assert.equal(prefixOf(values, 's1'), 'k8s:enc:aescbc:v1:key1');
      assert.equal(prefixOf(values, 's2'), 'k8s:enc:aescbc:v1:key1');
      assert.equal(prefixOf(values, 'before'), '{', 'values stay as they are until rewritten');

      // 3. Move the new key first, restart: new writes use key2, old values still read.
      await start([
        {
          aescbc: [
            ['key2', KEY2],
            ['key1', KEY1],
          ],
        },
        'identity',
      ]);
      await create('s3');
      await readAll(['before', 's1', 's2', 's3']);
      values = await stored();
      assert.equal(prefixOf(values, 's3'), 'k8s:enc:aescbc:v1:key2');
      assert.equal(prefixOf(values, 's1'), 'k8s:enc:aescbc:v1:key1');

      // Removing key1 too early: what it encrypted is an internal error for that object, upstream's
      // words; the server stays up and serves everything else.
      await start([{ aescbc: [['key2', KEY2]] }, 'identity']);
      const lost = await kubectl().k(['get', 'secret', 's1']);
      assert.notEqual(lost.code, 0);
      assert.match(lost.stderr, /Error from server \(InternalError\): Internal error occurred: no matching key was found for the provided AES transformer/);
      const listed = await kubectl().k(['get', 'secrets']);
      assert.notEqual(listed.code, 0);
      assert.match(
        listed.stderr,
        /Internal error occurred: unable to transform key "\/registry\/secrets\/default\/s[12]": no matching key was found for the provided AES transformer/,
      );
      await readAll(['before', 's3']);
      const health = new RawClient(server!.url, adminCredentials(dataDir));
      assert.equal((await health.request({ path: '/readyz' })).status, 200);
      health.close();
      await stop();

      // 4. With both keys back, rewrite every Secret: each is now under key2 (unchanged objects too).
      await start([
        {
          aescbc: [
            ['key2', KEY2],
            ['key1', KEY1],
          ],
        },
        'identity',
      ]);
      await rewriteAll();
      values = await stored();
      for (const n of ['before', 's1', 's2', 's3']) assert.equal(prefixOf(values, n), 'k8s:enc:aescbc:v1:key2', `${n} is under key2 after the rewrite`);

      // 5. Remove the old key: everything reads.
      await start([{ aescbc: [['key2', KEY2]] }]);
      await readAll(['before', 's1', 's2', 's3']);
      await stop();

      // Decrypting: identity first (writes plain text), the key still listed to read; rewrite; drop the config.
      await start(['identity', { aescbc: [['key2', KEY2]] }]);
      await readAll(['before', 's1', 's2', 's3']);
      await rewriteAll();
      values = await stored();
      for (const n of ['before', 's1', 's2', 's3']) assert.equal(prefixOf(values, n), '{', `${n} is plain JSON again`);
      await start();
      await readAll(['before', 's1', 's2', 's3']);
    } finally {
      await stop();
    }
  });
});
