import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openMemoryStorage } from '../memory/memory-storage.js';
import { buildTransformers, decodeEncryptionConfig, loadEncryptionConfig, type EncryptionConfiguration } from './config.js';
import { KeyTransformers, transformStorage } from './transforming-storage.js';
import type { TransformationMetrics } from './transformer.js';

const KEY32 = Buffer.alloc(32, 1).toString('base64');
const KEY32B = Buffer.alloc(32, 2).toString('base64');
const KEY16 = Buffer.alloc(16, 3).toString('base64');
const ctx = (key = '/registry/secrets/ns/a') => ({ authenticatedData: Buffer.from(key), resource: 'secrets' });
const SECRETS = { group: '', resource: 'secrets' };
const PLAIN = Buffer.from('{"kind":"Secret","data":{"k":"c2VjcmV0"}}');

function configOf(...providers: EncryptionConfiguration['resources'][number]['providers']): EncryptionConfiguration {
  return { resources: [{ resources: ['secrets'], providers }] };
}

const dir = mkdtempSync(join(tmpdir(), 'kplane-enc-unit-'));
after(() => rmSync(dir, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

describe('providers', () => {
  for (const [provider, secret, prefix] of [
    ['aescbc', KEY32, 'k8s:enc:aescbc:v1:k1:'],
    ['aescbc', KEY16, 'k8s:enc:aescbc:v1:k1:'],
    ['aesgcm', KEY32, 'k8s:enc:aesgcm:v1:k1:'],
    ['secretbox', KEY32, 'k8s:enc:secretbox:v1:k1:'],
  ] as const) {
    test(`${provider} (${Buffer.from(secret, 'base64').length}-byte key) writes ${prefix}, reads it back, and never the same bytes twice`, () => {
      const t = buildTransformers(configOf({ [provider]: { keys: [{ name: 'k1', secret }] } })).transformerForResource(SECRETS);
      const a = Buffer.from(t.toStorage(PLAIN, ctx()));
      const b = Buffer.from(t.toStorage(PLAIN, ctx()));
      assert.equal(a.subarray(0, prefix.length).toString(), prefix);
      assert.ok(!a.includes(PLAIN) && !a.includes('c2VjcmV0'));
      assert.notDeepEqual(a, b, 'a random IV/nonce per write');
      assert.deepEqual(Buffer.from(t.fromStorage(a, ctx()).data), PLAIN);
      assert.equal(t.fromStorage(a, ctx()).stale, false);
    });
  }

  test('aesgcm binds the value to its key: copied under another key it does not open', () => {
    const t = buildTransformers(configOf({ aesgcm: { keys: [{ name: 'k1', secret: KEY32 }] } })).transformerForResource(SECRETS);
    const stored = t.toStorage(PLAIN, ctx('/registry/secrets/ns/a'));
    assert.throws(() => t.fromStorage(stored, ctx('/registry/secrets/ns/b')), { message: 'cipher: message authentication failed' });
  });

  test('a tampered aescbc or secretbox value fails with upstream words, not a crash', () => {
    const cbc = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } })).transformerForResource(SECRETS);
    const short = Buffer.from('k8s:enc:aescbc:v1:k1:abc');
    assert.throws(() => cbc.fromStorage(short, ctx()), { message: 'the stored data was shorter than the required size' });
    const odd = Buffer.concat([Buffer.from('k8s:enc:aescbc:v1:k1:'), Buffer.alloc(20)]);
    assert.throws(() => cbc.fromStorage(odd, ctx()), { message: 'the stored data is not a multiple of the block size' });
    const box = buildTransformers(configOf({ secretbox: { keys: [{ name: 'k1', secret: KEY32 }] } })).transformerForResource(SECRETS);
    const sealed = Buffer.from(box.toStorage(PLAIN, ctx()));
    sealed[sealed.length - 1]! ^= 1;
    assert.throws(() => box.fromStorage(sealed, ctx()), { message: 'output array was not large enough for encryption' });
  });
});

describe('several providers and keys', () => {
  const old = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } })).transformerForResource(SECRETS);
  const byK1 = old.toStorage(PLAIN, ctx());

  test('a key listed second still reads (stale); the first writes', () => {
    const t = buildTransformers(
      configOf({
        aescbc: {
          keys: [
            { name: 'k2', secret: KEY32B },
            { name: 'k1', secret: KEY32 },
          ],
        },
      }),
    ).transformerForResource(SECRETS);
    const read = t.fromStorage(byK1, ctx());
    assert.deepEqual(Buffer.from(read.data), PLAIN);
    assert.equal(read.stale, true);
    assert.match(Buffer.from(t.toStorage(PLAIN, ctx())).toString('latin1'), /^k8s:enc:aescbc:v1:k2:/);
  });

  test('identity listed last reads values written before encryption (stale); listed first it writes plain text', () => {
    const t = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } }, { identity: {} })).transformerForResource(SECRETS);
    assert.deepEqual(t.fromStorage(PLAIN, ctx()), { data: PLAIN, stale: true });
    const back = buildTransformers(configOf({ identity: {} }, { aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } })).transformerForResource(SECRETS);
    assert.deepEqual(Buffer.from(back.toStorage(PLAIN, ctx())), PLAIN);
    assert.deepEqual(Buffer.from(back.fromStorage(byK1, ctx()).data), PLAIN);
    assert.equal(back.fromStorage(byK1, ctx()).stale, true);
  });

  test('a removed key or provider fails with upstream messages', () => {
    const onlyK2 = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k2', secret: KEY32B }] } })).transformerForResource(SECRETS);
    assert.throws(() => onlyK2.fromStorage(byK1, ctx()), { message: 'no matching key was found for the provided AES transformer' });
    const none = buildTransformers(configOf({ identity: {} })).transformerForResource(SECRETS);
    assert.throws(() => none.fromStorage(byK1, ctx()), { message: 'no matching prefix found' });
    const onlyCbc = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } })).transformerForResource(SECRETS);
    assert.throws(() => onlyCbc.fromStorage(PLAIN, ctx()), { message: 'no matching prefix found' });
    // A resource the file does not list reads plain text and refuses encrypted values.
    const other = buildTransformers(configOf({ identity: {} })).transformerForResource({ group: '', resource: 'configmaps' });
    assert.throws(() => other.fromStorage(byK1, ctx()), { message: 'identity transformer tried to read encrypted data' });
  });

  test('wildcards: a resource, then its group, then *.*', () => {
    const cfg: EncryptionConfiguration = {
      resources: [
        { resources: ['events'], providers: [{ identity: {} }] },
        { resources: ['*.apps'], providers: [{ secretbox: { keys: [{ name: 'a', secret: KEY32 }] } }] },
        { resources: ['*.*'], providers: [{ aesgcm: { keys: [{ name: 'all', secret: KEY32 }] } }] },
      ],
    };
    const t = buildTransformers(cfg);
    const prefixOf = (group: string, resource: string): string =>
      Buffer.from(t.transformerForResource({ group, resource }).toStorage(PLAIN, ctx())).subarray(0, 24).toString('latin1');
    assert.equal(prefixOf('', 'events'), PLAIN.subarray(0, 24).toString('latin1'));
    assert.match(prefixOf('apps', 'deployments'), /^k8s:enc:secretbox:v1:a:/);
    assert.match(prefixOf('', 'secrets'), /^k8s:enc:aesgcm:v1:all:/);
    assert.match(prefixOf('example.com', 'widgets'), /^k8s:enc:aesgcm:v1:all:/);
  });

  test('metrics are recorded per prefix as upstream labels them', () => {
    const seen: string[] = [];
    const metrics: TransformationMetrics = { record: (o) => seen.push(`${o.resource} ${o.type} ${o.prefix} ${o.ok ? 'OK' : 'failed'}`) };
    const t = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } }, { identity: {} }), metrics).transformerForResource(SECRETS);
    t.fromStorage(t.toStorage(PLAIN, ctx()), ctx());
    t.fromStorage(PLAIN, ctx());
    assert.deepEqual(seen, [
      'secrets to_storage k1: OK',
      'secrets to_storage k8s:enc:aescbc:v1: OK',
      'secrets from_storage k1: OK',
      'secrets from_storage k8s:enc:aescbc:v1: OK',
      'secrets from_storage identity OK',
    ]);
  });
});

describe('the config file', () => {
  const good = (providers: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: [secrets]
  providers:
${providers}`;

  const refusal = (text: string): string => {
    const p = file(`c${Math.random().toString(36).slice(2)}.yaml`, text);
    try {
      loadEncryptionConfig(p);
    } catch (e) {
      return (e as Error).message.replaceAll(p, 'FILE');
    }
    assert.fail('the config was accepted');
  };

  test('YAML and JSON load', () => {
    const y = file('ok.yaml', good(`  - aescbc:\n      keys:\n      - name: k1\n        secret: ${KEY32}\n  - identity: {}\n`));
    assert.ok(loadEncryptionConfig(y).transformerForResource(SECRETS));
    const j = file(
      'ok.json',
      JSON.stringify({
        apiVersion: 'apiserver.config.k8s.io/v1',
        kind: 'EncryptionConfiguration',
        resources: [{ resources: ['secrets'], providers: [{ secretbox: { keys: [{ name: 'k', secret: KEY32 }] } }] }],
      }),
    );
    assert.ok(loadEncryptionConfig(j));
  });

  test('key validation names the field and never prints the secret', () => {
    assert.equal(
      refusal(good(`  - aescbc:\n      keys:\n      - name: k1\n        secret: c2hvcnQ=\n`)),
      'error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 5, expected one of [16 24 32]',
    );
    assert.equal(
      refusal(good(`  - secretbox:\n      keys:\n      - name: k1\n        secret: ${KEY16}\n`)),
      'error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]',
    );
    assert.equal(
      refusal(good(`  - aesgcm:\n      keys:\n      - name: k1\n        secret: "not base64!"\n`)),
      'error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded',
    );
    assert.equal(
      refusal(good(`  - aescbc:\n      keys:\n      - secret: ${KEY32}\n      - name: k2\n`)),
      'error while parsing file: [resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory field for a key, resources[0].providers[0].aescbc.keys[1].secret: Required value: secret is a mandatory field for a key]',
    );
    assert.equal(
      refusal(good(`  - aescbc:\n      keys: []\n`)),
      'error while parsing file: resources[0].providers[0].aescbc.keys: Required value: at least one keys is required',
    );
  });

  test('resources and providers are validated as upstream', () => {
    assert.equal(
      refusal(`apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources: []\n`),
      'error while parsing file: resources: Required value: at least one resources is required',
    );
    assert.equal(
      refusal(good('  - identity: {}\n').replace('[secrets]', '[secrets, "*."]')),
      `error while parsing file: resources[0].resources: Invalid value: []string{"secrets", "*."}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked`,
    );
    assert.equal(
      refusal(good('  - identity: {}\n').replace('[secrets]', '[Secrets]')),
      'error while parsing file: resources[0].resources[0]: Invalid value: "Secrets": resource name should not contain capital letters',
    );
    assert.equal(
      refusal(good('  - identity: {}\n').replace('[secrets]', '["*.events.k8s.io"]')),
      `error while parsing file: resources[0].resources[0]: Invalid value: "*.events.k8s.io": '*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file`,
    );
    assert.match(
      refusal(good(`  - identity: {}\n    aescbc:\n      keys:\n      - name: k1\n        secret: ${KEY32}\n`)),
      /^error while parsing file: resources\[0\]\.providers\[0\]: Invalid value: apiserver\.ProviderConfiguration\{.*\}: more than one provider specified in a single element, should split into different list elements$/,
    );
    assert.equal(
      refusal(`apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
- resources: ["*."]
  providers: [{identity: {}}]
- resources: [secrets]
  providers: [{identity: {}}]
`),
      'error while building transformers: resource "secrets" is masked by earlier rule "*."',
    );
  });

  test('kms is refused as not supported; unknown fields and kinds are decoding errors naming the file', () => {
    assert.equal(
      refusal(good(`  - kms:\n      apiVersion: v2\n      name: vault\n      endpoint: unix:///tmp/kms.sock\n`)),
      'error while building transformers: resources[0].providers[0].kms: could not configure KMS plugin "vault": KMS providers are not supported by kplane; use aescbc, aesgcm or secretbox',
    );
    assert.equal(
      refusal(good(`  - aescbc:\n      keyz: []\n`)),
      'error while parsing file: error decoding encryption provider configuration file "FILE": strict decoding error: unknown field "resources[0].providers[0].aescbc.keyz"',
    );
    assert.equal(
      refusal(good('  - identity: {}\n').replace('kind: EncryptionConfiguration', 'kind: Other')),
      'error while parsing file: error decoding encryption provider configuration file "FILE": no kind "Other" is registered for version "apiserver.config.k8s.io/v1" in scheme "encryptionconfig"',
    );
    assert.equal(refusal(''), 'error while parsing file: error while loading file: encryption provider configuration file "FILE" is empty');
    assert.match(
      refusal('resources: [\n'),
      /^error while parsing file: error decoding encryption provider configuration file "FILE": error converting YAML to JSON: yaml: /,
    );
    assert.equal(
      (() => {
        try {
          loadEncryptionConfig(join(dir, 'missing.yaml'));
        } catch (e) {
          return (e as Error).message.replaceAll(dir, 'DIR');
        }
        return '';
      })(),
      'error while parsing file: error while loading file: error reading encryption provider configuration file "DIR/missing.yaml": open DIR/missing.yaml: no such file or directory',
    );
  });

  test('decoding keeps the field types', () => {
    assert.throws(() => decodeEncryptionConfig(good(`  - aescbc:\n      keys:\n      - name: k1\n        secret: 12\n`)), {
      message: 'json: cannot unmarshal number into Go struct field Key.resources.providers.aescbc.keys.secret of type string',
    });
  });
});

describe('transformStorage', () => {
  test('values are encrypted in the backend and plain text above it, on every read path', async () => {
    const backend = await openMemoryStorage();
    const t = buildTransformers(configOf({ aescbc: { keys: [{ name: 'k1', secret: KEY32 }] } }, { identity: {} }));
    const keys = new KeyTransformers(t, () => [
      { prefix: '/registry/secrets/', group: '', resource: 'secrets' },
      { prefix: '/registry/configmaps/', group: '', resource: 'configmaps' },
    ]);
    const s = transformStorage(backend, keys);
    const signal = AbortSignal.timeout(10_000);
    const events = s.watch('/registry/secrets/', { afterRevision: 0, signal })[Symbol.asyncIterator]();
    const created = await s.create('/registry/secrets/ns/a', PLAIN);
    assert.deepEqual(Buffer.from(created.value), PLAIN);
    const raw = await backend.get('/registry/secrets/ns/a');
    assert.match(Buffer.from(raw!.value).toString('latin1'), /^k8s:enc:aescbc:v1:k1:/);
    assert.deepEqual(Buffer.from((await s.get('/registry/secrets/ns/a'))!.value), PLAIN);
    assert.deepEqual(Buffer.from((await s.list('/registry/secrets/')).items[0]!.value), PLAIN);
    const ev = await events.next();
    assert.equal(ev.done, false);
    assert.deepEqual(Buffer.from((ev.value as { kv: { value: Uint8Array } }).kv.value), PLAIN);
    // Configmaps are not listed: written as they are.
    await s.create('/registry/configmaps/ns/c', PLAIN);
    assert.deepEqual(Buffer.from((await backend.get('/registry/configmaps/ns/c'))!.value), PLAIN);
    // A plain value from before: read as identity, marked stale.
    await backend.create('/registry/secrets/ns/old', PLAIN);
    assert.equal((await s.get('/registry/secrets/ns/old'))!.stale, true);
    // A value whose key is gone: the get names the cause, the list names the key.
    await backend.create('/registry/secrets/ns/lost', Buffer.from('k8s:enc:aescbc:v1:gone:0123456789abcdef0123456789abcdef'));
    await assert.rejects(s.get('/registry/secrets/ns/lost'), { message: 'no matching key was found for the provided AES transformer' });
    await assert.rejects(s.list('/registry/secrets/'), {
      message: 'unable to transform key "/registry/secrets/ns/lost": no matching key was found for the provided AES transformer',
    });
    await events.return?.();
    await s.close();
  });
});

describe('KeyTransformers', () => {
  test('a key belongs to the longest registered prefix; the list is read again after invalidate()', () => {
    const cfg: EncryptionConfiguration = {
      resources: [
        { resources: ['deployments.apps'], providers: [{ secretbox: { keys: [{ name: 'd', secret: KEY32 }] } }] },
        { resources: ['widgets.example.com'], providers: [{ aesgcm: { keys: [{ name: 'w', secret: KEY32 }] } }] },
      ],
    };
    const registered = [
      { prefix: '/registry/apps/deployments/', group: 'apps', resource: 'deployments' },
      { prefix: '/registry/apps/', group: '', resource: 'apps' },
    ];
    const keys = new KeyTransformers(buildTransformers(cfg), () => registered);
    const written = (key: string): string => {
      const r = keys.forKey(key);
      const stored = Buffer.from(r.transformer.toStorage(PLAIN, ctx(key))).toString('latin1');
      return `${r.resource} ${/^k8s:enc:[a-z]+:v1:[^:]+:/.exec(stored)?.[0] ?? stored.slice(0, 1)}`;
    };
    assert.equal(written('/registry/apps/deployments/ns/web'), 'deployments.apps k8s:enc:secretbox:v1:d:');
    assert.equal(written('/registry/apps/ns/x'), 'apps {');
    // A custom resource registered later is found once the registry says it changed.
    assert.equal(keys.forKey('/registry/example.com/widgets/ns/w').resource, 'example.com');
    registered.push({ prefix: '/registry/example.com/widgets/', group: 'example.com', resource: 'widgets' });
    keys.invalidate();
    assert.equal(written('/registry/example.com/widgets/ns/w'), 'widgets.example.com k8s:enc:aesgcm:v1:w:');
  });
});
