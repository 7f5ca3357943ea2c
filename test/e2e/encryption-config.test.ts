// A malformed --encryption-provider-config refuses start, naming the file and the field, before
// anything is created; through `kplane serve` and createControlPlane.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createControlPlane } from '../../src/controlplane/controlplane.js';
import { memory } from '../../src/storage/factories.js';
import { run, repoRoot } from '../support/tools.js';
import { encryptionConfigYAML, KEY1, writeConfig } from './encryption-support.js';

describe('malformed encryption config files', () => {
  let dir = '';
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-enc-config-'));
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('kplane serve exits with the file and the field named, and leaves no data directory', async () => {
    const bad = await writeConfig(dir, 'short-key.yaml', encryptionConfigYAML([{ aescbc: [['key1', Buffer.from('too short').toString('base64')]] }]));
    const dataDir = join(dir, 'never-created');
    const r = await run(
      process.execPath,
      ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), 'serve', '--data-dir', dataDir, '--secure-port', '0', '--encryption-provider-config', bad],
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(r.code, 1, r.stderr);
    assert.equal(
      r.stderr.split('\n')[0],
      `kplane: --encryption-provider-config=${bad}: error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 9, expected one of [16 24 32]`,
    );
    assert.ok(!r.stderr.includes(Buffer.from('too short').toString('base64')), 'the secret is never printed');
    assert.equal(existsSync(dataDir), false);
  });

  for (const [name, text, expected] of [
    [
      'not-base64.yaml',
      encryptionConfigYAML([{ secretbox: [['k', 'not*base64']] }]),
      'resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded',
    ],
    [
      'no-providers.yaml',
      encryptionConfigYAML([]).replace('  providers:\n', '  providers: []\n'),
      'resources[0].providers: Required value: at least one resources[0].providers is required',
    ],
    [
      'unknown-field.yaml',
      encryptionConfigYAML(['identity']).replace('identity: {}', 'identty: {}'),
      'strict decoding error: unknown field "resources[0].providers[0].identty"',
    ],
    [
      'kms.yaml',
      encryptionConfigYAML(['identity']).replace('identity: {}', 'kms: {apiVersion: v2, name: vault, endpoint: "unix:///run/kms.sock"}'),
      'KMS providers are not supported by kplane',
    ],
    [
      'no-key-name.yaml',
      encryptionConfigYAML([{ aesgcm: [['', KEY1]] }]),
      'resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key',
    ],
  ] as const) {
    test(`${name}: createControlPlane refuses with the file and the field`, async () => {
      const path = await writeConfig(dir, name, text);
      const dataDir = join(dir, `dd-${name}`);
      await assert.rejects(createControlPlane({ storage: memory(), dataDir, port: 0, encryptionProviderConfig: path }), (e: Error) => {
        assert.ok(e.message.startsWith(`--encryption-provider-config=${path}: error while `), e.message);
        assert.ok(e.message.includes(expected), e.message);
        return true;
      });
      assert.equal(existsSync(dataDir), false);
    });
  }
});
