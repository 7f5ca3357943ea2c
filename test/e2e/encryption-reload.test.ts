// --encryption-provider-config-automatic-reload: a changed file is used without a restart; a file
// that does not load is counted as a failure and the providers in use stay.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../support/eventually.js';
import { adminCredentials, RawClient } from '../support/https.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { tools } from '../support/tools.js';
import { encryptionConfigYAML, KEY1, KEY2, rawSqliteValues, writeConfig } from './encryption-support.js';

describe('encryption config automatic reload (kubectl 1.33)', () => {
  let dir = '';
  let server: TestServer | undefined;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-enc-reload-'));
  });
  after(async () => {
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('a new key first in the file is used for writes once reloaded; a broken file changes nothing', async () => {
    const config = await writeConfig(dir, 'encryption.yaml', encryptionConfigYAML([{ aesgcm: [['key1', KEY1]] }, 'identity']));
    server = await startTestServer({
      storage: 'sqlite',
      dataDir: dir,
      encryptionProviderConfig: config,
      encryptionProviderConfigAutomaticReload: true,
      encryptionProviderConfigReloadIntervalMs: 100,
    });
    const kc = kubectlSession(tools.kubectl, server.kubeconfig, dir);
    const raw = new RawClient(server.url, adminCredentials(dir));
    const reloads = async (status: string): Promise<number | undefined> => {
      const m = new RegExp(
        `apiserver_encryption_config_controller_automatic_reloads_total\\{status="${status}",apiserver_id_hash="sha256:[0-9a-f]{64}"\\} (\\d+)`,
      ).exec((await raw.request({ path: '/metrics' })).text());
      return m ? Number(m[1]) : undefined;
    };
    try {
      await kc.ok(['create', 'secret', 'generic', 's1', '--from-literal=v=one']);
      await writeFile(
        config,
        encryptionConfigYAML([
          {
            aesgcm: [
              ['key2', KEY2],
              ['key1', KEY1],
            ],
          },
          'identity',
        ]),
      );
      await eventually(10_000, 'the reload to succeed', async () => ((await reloads('success')) === 1 ? true : undefined));
      await kc.ok(['create', 'secret', 'generic', 's2', '--from-literal=v=two']);

      await writeFile(config, encryptionConfigYAML([{ aesgcm: [['key3', 'c2hvcnQ=']] }]));
      await eventually(10_000, 'the broken file to be refused', async () => ((await reloads('failure')) ?? 0) >= 1 || undefined);
      await kc.ok(['create', 'secret', 'generic', 's3', '--from-literal=v=three']);
      for (const [n, v] of [
        ['s1', 'one'],
        ['s2', 'two'],
        ['s3', 'three'],
      ]) {
        assert.equal(await kc.ok(['get', 'secret', n!, '-o', 'jsonpath={.data.v}']), Buffer.from(v!).toString('base64'));
      }
    } finally {
      raw.close();
      await server.stop();
      server = undefined;
    }
    const values = await rawSqliteValues(dir, '/registry/secrets/default/');
    const prefix = (n: string): string => (values.get(`/registry/secrets/default/${n}`) ?? '').slice(0, 'k8s:enc:aesgcm:v1:key1:'.length);
    assert.deepEqual([prefix('s1'), prefix('s2'), prefix('s3')], ['k8s:enc:aesgcm:v1:key1:', 'k8s:enc:aesgcm:v1:key2:', 'k8s:enc:aesgcm:v1:key2:']);
  });
});
