// ConfigMap decoding and validation as kube-apiserver does them (ValidateConfigMap,
// ValidateConfigMapUpdate, and encoding/json's base64 decode of binaryData), through the store.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configMapsResource } from './index.js';
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import { MemoryStorage } from '../../../storage/memory/memory-storage.js';
import { GenericStore } from '../../store.js';
import { configMapStrategy } from './strategy.js';

const newStore = (): GenericStore =>
  new GenericStore({ descriptor: configMapsResource, strategy: configMapStrategy, storage: new MemoryStorage(), keyPrefix: '/registry/configmaps/' });
const cm = (name: string, extra: Record<string, unknown>): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, ...extra });
const undecodable = (detail: string): string => `ConfigMap in version "v1" cannot be handled as a ConfigMap: ${detail}`;
const KEY_MSG =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

async function rejects(p: Promise<unknown>, code: number, message: string): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof StatusError, String(e));
    assert.equal(e.status.message, message);
    assert.equal(e.code, code);
    return true;
  });
}

describe('ConfigMap decoding', () => {
  it('binaryData that is not base64 is a 400', async () => {
    const s = newStore();
    await rejects(s.create('default', cm('c', { binaryData: { a: 'Y' } })), 400, undecodable('illegal base64 data at input byte 0'));
    await rejects(s.create('default', cm('c', { binaryData: { a: 'YW=x' } })), 400, undecodable('illegal base64 data at input byte 2'));
  });

  it('binaryData newlines are skipped and the value is stored canonically', async () => {
    const s = newStore();
    const { object } = await s.create('default', cm('c', { binaryData: { a: 'YW\nJj', b: 'YR==' } }));
    assert.deepEqual(object.binaryData, { a: 'YWJj', b: 'YQ==' });
    assert.deepEqual((await s.get('default', 'c')).binaryData, { a: 'YWJj', b: 'YQ==' });
  });

  it('values of the wrong JSON type are decode errors; null values are empty', async () => {
    const s = newStore();
    await rejects(
      s.create('default', cm('c', { data: { a: 1 } })),
      400,
      undecodable('json: cannot unmarshal number into Go struct field ConfigMap.data of type string'),
    );
    await rejects(
      s.create('default', cm('c', { data: ['a'] })),
      400,
      undecodable('json: cannot unmarshal array into Go struct field ConfigMap.data of type map[string]string'),
    );
    await rejects(
      s.create('default', cm('c', { immutable: 'yes' })),
      400,
      undecodable('json: cannot unmarshal string into Go struct field ConfigMap.immutable of type bool'),
    );
    const { object } = await s.create('default', cm('n', { data: { a: null } }));
    assert.deepEqual(object.data, { a: '' });
  });

  it('binaryData as arrays of bytes is stored as base64; other arrays are decode errors', async () => {
    const s = newStore();
    const { object } = await s.create('default', cm('arr', { binaryData: { a: [1, 2, null], b: null, c: 'YR==' }, immutable: null }));
    assert.deepEqual(object.binaryData, { a: 'AQIA', b: '', c: 'YQ==' });
    assert.equal('immutable' in object, false);
    await rejects(
      s.create('default', cm('c', { binaryData: { a: [1, 256] } })),
      400,
      undecodable('json: cannot unmarshal number 256 into Go struct field ConfigMap.binaryData of type uint8'),
    );
    await rejects(
      s.create('default', cm('c', { binaryData: { a: {} } })),
      400,
      undecodable('json: cannot unmarshal object into Go struct field ConfigMap.binaryData of type []uint8'),
    );
  });

  it('metadata is decoded too: its error wins when it comes first in the body', async () => {
    const s = newStore();
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm', labels: { a: 5 } }, data: { a: 1 } } as unknown as KubeObject;
    await rejects(s.create('default', body), 400, undecodable('json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string'));
    const later = { apiVersion: 'v1', kind: 'ConfigMap', data: { a: 1 }, metadata: { name: 'm', labels: { a: 5 } } } as unknown as KubeObject;
    await rejects(s.create('default', later), 400, undecodable('json: cannot unmarshal number into Go struct field ConfigMap.data of type string'));
  });

  it('updates are decoded as creates are', async () => {
    const s = newStore();
    await s.create('default', cm('u', { data: { a: '1' } }));
    await rejects(
      s.update('default', 'u', (cur) => ({ ...cur!, binaryData: { b: 'YQ=' } })),
      400,
      undecodable('illegal base64 data at input byte 3'),
    );
    const { object } = await s.update('default', 'u', (cur) => ({ ...cur!, binaryData: { b: 'YR\n==' } }));
    assert.deepEqual(object.binaryData, { b: 'YQ==' });
  });
});

describe('ConfigMap validation (ValidateConfigMap)', () => {
  it('the 1 MiB limit counts values only, and names the whole object as []', async () => {
    const s = newStore();
    await s.create('default', cm('max', { data: { k: 'a'.repeat(1024 * 1024) } }));
    await s.create('default', cm('mixed', { data: { k: 'a'.repeat(512 * 1024) }, binaryData: { b: Buffer.alloc(512 * 1024).toString('base64') } }));
    await rejects(
      s.create('default', cm('over', { data: { k: 'a'.repeat(1024 * 1024 + 1) } })),
      422,
      'ConfigMap "over" is invalid: []: Too long: must have at most 1048576 bytes',
    );
  });

  it('a key in both maps: the duplicate is reported with the data key, before binaryData', async () => {
    await rejects(
      newStore().create('default', cm('d', { data: { 'a b': 'x' }, binaryData: { 'a b': 'eA==' } })),
      422,
      `ConfigMap "d" is invalid: [data[a b]: Invalid value: "a b": ${KEY_MSG}, data[a b]: Invalid value: "a b": duplicate of key present in binaryData, binaryData[a b]: Invalid value: "a b": ${KEY_MSG}]`,
    );
  });

  it('updates report immutability before the ValidateConfigMap issues', async () => {
    const s = newStore();
    await s.create('default', cm('i', { data: { a: '1' }, immutable: true }));
    await rejects(
      s.update('default', 'i', (cur) => ({ ...cur!, data: { 'a b': '1' } })),
      422,
      `ConfigMap "i" is invalid: [data: Forbidden: field is immutable when \`immutable\` is set, data[a b]: Invalid value: "a b": ${KEY_MSG}]`,
    );
  });
});
