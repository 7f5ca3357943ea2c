// Secret decoding and validation as kube-apiserver does them (ValidateSecret/ValidateSecretUpdate,
// and encoding/json's base64 decode of data), driven through the generic store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { secretsResource } from './index.js';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { GenericStore } from '../../store.js';
import { secretStrategy } from './strategy.js';

const newStore = (): GenericStore =>
  new GenericStore({ descriptor: secretsResource, strategy: secretStrategy, storage: new MemoryStorage(), keyPrefix: '/registry/secrets/' });
const secret = (name: string, extra: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, ...extra });
const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

async function rejects(p: Promise<unknown>, code: number, message: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof StatusError, String(e));
    assert.equal(e.status.message, message);
    assert.equal(e.code, code);
    return true;
  });
}

const undecodable = (detail: string): string => `Secret in version "v1" cannot be handled as a Secret: ${detail}`;

describe('Secret data decodes as base64.StdEncoding (400 when it does not)', () => {
  // Offsets as Go's CorruptInputError reports them.
  const cases: [string, number][] = [
    ['Y', 0], // one character short of a quantum: the quantum's start
    ['YWJjZA', 4], // unpadded tail
    ['YW=x', 2], // "==" expected after "YW="
    ['YW=', 3], // padding cut short: the input's length
    ['YWJj=', 4], // padding where a quantum starts
    ['Y\n', 1], // skipped newlines still count in the offset
    ['YWJj YQ==', 4], // a space is not skipped
    ['YQ==YQ==', 4], // data after the padding
    ['é', 0],
  ];
  for (const [value, offset] of cases) {
    it(JSON.stringify(value), async () => {
      await rejects(newStore().create('default', secret('s', { data: { a: value } })), 400, undecodable(`illegal base64 data at input byte ${offset}`));
    });
  }

  it('newlines are skipped and the value is stored canonically', async () => {
    const s = newStore();
    const { object } = await s.create('default', secret('s', { data: { a: 'YW\nJj', b: 'YR==', c: 'YWJj\r\n' } }));
    assert.deepEqual(object.data, { a: 'YWJj', b: 'YQ==', c: 'YWJj' });
    assert.deepEqual((await s.get('default', 's')).data, { a: 'YWJj', b: 'YQ==', c: 'YWJj' });
  });

  it('values of the wrong JSON type are decode errors too', async () => {
    const s = newStore();
    await rejects(
      s.create('default', secret('s', { data: { a: 5 } })),
      400,
      undecodable('json: cannot unmarshal number into Go struct field Secret.data of type []uint8'),
    );
    await rejects(
      s.create('default', secret('s', { data: 'x' })),
      400,
      undecodable('json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8'),
    );
    await rejects(
      s.create('default', secret('s', { stringData: { a: 1 } })),
      400,
      undecodable('json: cannot unmarshal number into Go struct field Secret.stringData of type string'),
    );
    await rejects(
      s.create('default', secret('s', { immutable: 'yes' })),
      400,
      undecodable('json: cannot unmarshal string into Go struct field Secret.immutable of type bool'),
    );
    // The first error in document order wins, as encoding/json keeps the first it saw.
    await rejects(s.create('default', secret('s', { data: { a: 'Y', b: 5 } })), 400, undecodable('illegal base64 data at input byte 0'));
    await rejects(
      s.create('default', secret('s', { data: { b: 5, a: 'Y' } })),
      400,
      undecodable('json: cannot unmarshal number into Go struct field Secret.data of type []uint8'),
    );
    await rejects(
      s.create('default', secret('s', { type: 5 })),
      400,
      undecodable('json: cannot unmarshal number into Go struct field Secret.type of type v1.SecretType'),
    );
    await rejects(
      s.create('default', secret('s', { stringData: ['a'] })),
      400,
      undecodable('json: cannot unmarshal array into Go struct field Secret.stringData of type map[string]string'),
    );
  });

  it('metadata is decoded too: its error wins when it comes first in the body', async () => {
    const s = newStore();
    const body = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', annotations: { a: true } }, type: 5 } as unknown as KubeObject;
    await rejects(
      s.create('default', body),
      400,
      undecodable('json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.annotations of type string'),
    );
  });

  it('null values decode as empty, null fields as absent; stringData is folded into data and not kept', async () => {
    const s = newStore();
    const { object } = await s.create(
      'default',
      secret('n', { data: { a: null, b: [104, 105] }, stringData: { c: null, d: 'hi' }, immutable: null, type: null }),
    );
    assert.deepEqual(object.data, { a: '', b: 'aGk=', c: '', d: 'aGk=' });
    assert.equal(object.type, 'Opaque');
    assert.equal('immutable' in object || 'stringData' in object, false);
  });
});

describe('Secret type rules (ValidateSecret)', () => {
  const invalid = (name: string, ...issues: string[]): string => `Secret "${name}" is invalid: ${issues.length === 1 ? issues[0] : `[${issues.join(', ')}]`}`;

  it('kubernetes.io/dockercfg content must be JSON', async () => {
    const s = newStore();
    await rejects(
      s.create('default', secret('d', { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64('x') } })),
      422,
      invalid('d', `data[.dockercfg]: Invalid value: "<secret contents redacted>": invalid character 'x' looking for beginning of value`),
    );
    const ok = await s.create('default', secret('d', { type: 'kubernetes.io/dockercfg', data: { '.dockercfg': b64('{"r":{}}') } }));
    assert.equal(ok.object.type, 'kubernetes.io/dockercfg');
  });

  it("kubernetes.io/dockerconfigjson errors read as Go's encoding/json", async () => {
    const s = newStore();
    const cases: [string, string][] = [
      ['x', "invalid character 'x' looking for beginning of value"],
      ['{"auths":', 'unexpected end of JSON input'],
      ['{"a":1,}', "invalid character '}' looking for beginning of object key string"],
      ['tru', "invalid character ' ' in literal true (expecting 'e')"],
      ['[]', 'json: cannot unmarshal array into Go value of type map[string]interface {}'],
      ['"s"', 'json: cannot unmarshal string into Go value of type map[string]interface {}'],
    ];
    for (const [content, err] of cases) {
      await rejects(
        s.create('default', secret('d', { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64(content) } })),
        422,
        invalid('d', `data[.dockerconfigjson]: Invalid value: "<secret contents redacted>": ${err}`),
      );
    }
    // null unmarshals into a map without error.
    await s.create('default', secret('n', { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': b64('null') } }));
  });

  it('kubernetes.io/basic-auth without username and password names both', async () => {
    await rejects(
      newStore().create('default', secret('b', { type: 'kubernetes.io/basic-auth', data: {} })),
      422,
      invalid('b', 'data[username]: Required value', 'data[password]: Required value'),
    );
  });

  it('kubernetes.io/ssh-auth needs a non-empty private key', async () => {
    await rejects(
      newStore().create('default', secret('k', { type: 'kubernetes.io/ssh-auth', data: { 'ssh-privatekey': '' } })),
      422,
      invalid('k', 'data[ssh-privatekey]: Required value'),
    );
  });

  it('the 1 MiB limit counts decoded values, not keys', async () => {
    const s = newStore();
    const max = Buffer.alloc(1024 * 1024, 'a').toString('base64');
    await s.create('default', secret('big', { data: { k: max } }));
    const over = Buffer.alloc(1024 * 1024 + 1, 'a').toString('base64');
    await rejects(s.create('default', secret('bigger', { data: { k: over } })), 422, invalid('bigger', 'data: Too long: must have at most 1048576 bytes'));
  });

  it('updates report type and immutability before the ValidateSecret issues', async () => {
    const s = newStore();
    await s.create('default', secret('u', { data: { a: b64('1') } }));
    await rejects(
      s.update('default', 'u', (cur) => ({ ...cur!, type: 'example.com/other', data: { 'a b': b64('1') } })),
      422,
      invalid(
        'u',
        'type: Invalid value: "example.com/other": field is immutable',
        "data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
      ),
    );
  });
});
