import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StatusError } from '../apimachinery/errors.js';
import { encodeObject } from '../apimachinery/protobuf/index.js';
import { builtinScheme } from '../controlplane/modules.js';
import { chooseOutput, decodeBody, parseAccept, partialMetadataMismatch, patchTypeOf } from './negotiation.js';

const status = (fn: () => unknown): StatusError => {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError);
    return e;
  }
  assert.fail('expected a StatusError');
};

describe('negotiation', () => {
  it('kubectl get asks for Table and falls back to JSON', () => {
    const kubectl = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    assert.deepEqual(chooseOutput(kubectl, { protobufOk: true }), { format: 'json', transform: 'Table', transformVersion: 'v1', pretty: false });
  });
  it('client-go asks for protobuf, JSON when the kind has no protobuf form', () => {
    const accept = 'application/vnd.kubernetes.protobuf, */*';
    assert.equal(chooseOutput(accept, { protobufOk: true }).format, 'protobuf');
    assert.equal(chooseOutput(accept, { protobufOk: false }).format, 'json');
  });
  it("PartialObjectMetadata(List) is chosen as asked (a mismatch is the handler's 406); unknown types are 406", () => {
    const pom = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
    const choice = chooseOutput(pom, { protobufOk: true });
    assert.equal(choice.transform, 'PartialObjectMetadataList');
    assert.equal(partialMetadataMismatch(choice, true, '*core.ConfigMapList'), undefined);
    const e = partialMetadataMismatch(choice, false, '*core.ConfigMap');
    assert.equal(e?.code, 406);
    assert.equal(e?.message, 'you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)');
    assert.equal(status(() => chooseOutput('text/html', { protobufOk: true })).code, 406);
  });
  it('parses Accept as goautoneg does', () => {
    const clauses = parseAccept('*/*, application/yaml;q=0.1, text/plain;q=0;a=b=c;x= y ;q=bad');
    // goautoneg's Less puts any concrete type before */*, whatever the q: text/plain;q=0 too.
    assert.deepEqual(
      clauses.map((c) => `${c.type}/${c.subtype};q=${c.q}`),
      ['application/yaml;q=' + Math.fround(0.1), 'text/plain;q=0', '*/*;q=1'],
    );
    assert.deepEqual(clauses[1]!.params, { x: 'y' });
    assert.deepEqual(
      parseAccept('a/b/c, */json, *, application/').map((c) => `${c.type}/${c.subtype}`),
      ['*/json', '*/*'],
    );
  });
  it('decodes JSON, YAML and protobuf bodies; reports duplicate fields; rejects other types with 415', () => {
    const json = decodeBody('application/json', Buffer.from('{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","name":"b"}}'));
    assert.equal(json.object.metadata?.name, 'b');
    assert.deepEqual(json.duplicateFields, ['metadata.name']);
    const yaml = decodeBody('application/yaml', Buffer.from('kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: y\n  name: z\n'));
    assert.equal(yaml.object.metadata?.name, 'z');
    assert.deepEqual(yaml.duplicateFields, ['metadata.name']);
    const scheme = builtinScheme();
    const pb = decodeBody(
      'application/vnd.kubernetes.protobuf',
      encodeObject({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p' }, data: { a: 'b' } }, scheme),
      { scheme },
    );
    assert.deepEqual(pb.object.data, { a: 'b' });
    const e = status(() => decodeBody('text/plain', Buffer.from('x')));
    assert.equal(e.code, 415);
    assert.equal(e.reason, 'UnsupportedMediaType');
    assert.equal(status(() => decodeBody('application/json', Buffer.from('[1,2]'))).code, 400);
    assert.equal(status(() => decodeBody('application/yaml', Buffer.from('a: [1'))).code, 400);
  });
  it('patch content types', () => {
    assert.equal(patchTypeOf('application/strategic-merge-patch+json'), 'strategic');
    assert.equal(patchTypeOf('application/merge-patch+json; charset=utf-8'), 'merge');
    assert.equal(patchTypeOf('application/json-patch+json'), 'json');
    assert.equal(status(() => patchTypeOf('application/json')).code, 415);
  });
});

describe('exact integers in bodies', () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
  it('keeps int64 integers past 2^53 as bigints in JSON and YAML (hex, octal, keys), others as numbers', () => {
    const json = decodeBody('application/json', enc('{"kind":"K","spec":{"a":9007199254740993,"b":9223372036854775808}}')).object;
    assert.deepEqual(json['spec'], { a: 9007199254740993n, b: 9223372036854775808 });
    const yaml =
      'kind: K\nspec:\n  a: 9007199254740993\n  b: [1, 0x20000000000001, -9007199254740993, "9007199254740993", 9223372036854775808, 1.5e300]\n  9007199254740993: k\n  l:\n  - x: 0o400000000000000001\n';
    assert.deepEqual(decodeBody('application/yaml', enc(yaml)).object['spec'], {
      a: 9007199254740993n,
      b: [1, 9007199254740993n, -9007199254740993n, '9007199254740993', 9223372036854775808, 1.5e300],
      '9007199254740993': 'k',
      l: [{ x: 9007199254740993n }],
    });
    assert.deepEqual(decodeBody('application/yaml', enc('kind: K\na: 9007199254740991\n')).object['a'], 9007199254740991);
  });
});
