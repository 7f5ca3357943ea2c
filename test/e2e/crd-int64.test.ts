// Integers of custom resources are int64, exactly, end to end (kubectl 1.33): apply, get -o json,
// merge and JSON patch, server-side apply, a watch, schema minimum/maximum/default, a CEL rule on
// the large value; numbers beyond int64 are float64 as upstream's unstructured decoder makes them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { waitServed } from '../support/crd.js';
import { KUBECTLS, useKubectlServer } from '../support/kubectl.js';
import { ensureTools } from '../support/tools.js';

ensureTools();

const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: counters.int.example.com
spec:
  group: int.example.com
  scope: Namespaced
  names: {plural: counters, singular: counter, kind: Counter}
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: Max, type: integer, jsonPath: .spec.max}
    - {name: Text, type: string, jsonPath: .spec.min}
    subresources:
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.max) || self.max != 9223372036854775806"
              message: max must not be 9223372036854775806
            properties:
              max: {type: integer, format: int64, minimum: -9223372036854775808}
              min: {type: integer, minimum: -9223372036854775808}
              capped: {type: integer, maximum: 9223372036854775000}
              size: {type: integer, default: 9223372036854775807}
              ratio: {type: number}
              any: {x-kubernetes-preserve-unknown-fields: true}
              replicas: {type: integer}
          status:
            type: object
            properties:
              replicas: {type: integer}
`;

const MAX = '9223372036854775807';
const MIN = '-9223372036854775808';
const PATH = '/apis/int.example.com/v1/namespaces/default/counters';

const counter = (name: string, spec: string): string =>
  `apiVersion: int.example.com/v1\nkind: Counter\nmetadata:\n  name: ${name}\n  namespace: default\nspec:\n${spec}`;

const kubectl = KUBECTLS.find((k) => k.name === '1.33')!;

describe('int64 in custom resources through kubectl 1.33', { concurrency: false, timeout: 85_000 }, () => {
  const env = useKubectlServer(kubectl.bin, 'kplane-crd-int64-');
  const { k, ok, file } = env;
  const raw = (name: string): Promise<string> => ok(['get', '--raw', `${PATH}/${name}`]);

  it('sets up the CRD', async () => {
    await ok(['apply', '-f', await file('crd.yaml', CRD)]);
    await ok(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/counters.int.example.com']);
    await waitServed(env.raw, PATH);
  });

  it('apply keeps int64 extremes exactly; get -o json gives them back; the default is exact', async () => {
    await ok(['apply', '-f', await file('c1.yaml', counter('c1', `  max: ${MAX}\n  min: ${MIN}\n  any: {id: 1234567890123456789}\n`))]);
    const text = await ok(['get', 'counter', 'c1', '-o', 'json']);
    assert.match(text, new RegExp(`"max": ${MAX},`));
    assert.match(text, new RegExp(`"min": ${MIN},`));
    assert.match(text, new RegExp(`"size": ${MAX}\\b`), 'the default, exactly');
    assert.match(text, /"id": 1234567890123456789\b/);
    assert.match(await raw('c1'), new RegExp(`"spec":\\{"any":\\{"id":1234567890123456789\\},"max":${MAX},"min":${MIN},"size":${MAX}\\}`));
    // jsonpath reads the same numbers
    assert.equal(await ok(['get', 'counter', 'c1', '-o', 'jsonpath={.spec.max} {.spec.min}']), `${MAX} ${MIN}`);
    // A list holds them too, and the YAML output.
    assert.match(await ok(['get', 'counters', '-o', 'json']), new RegExp(`"max": ${MAX},`));
    assert.match(await ok(['get', 'counter', 'c1', '-o', 'yaml']), new RegExp(`max: ${MAX}\\n`));
  });

  it('merge and JSON patch, server-side apply: exact', async () => {
    await ok(['patch', 'counter', 'c1', '--type', 'merge', '-p', '{"spec":{"max":9223372036854775805}}']);
    assert.match(await raw('c1'), /"max":9223372036854775805,/);
    await ok([
      'patch',
      'counter',
      'c1',
      '--type',
      'json',
      '-p',
      `[{"op":"test","path":"/spec/min","value":${MIN}},{"op":"replace","path":"/spec/min","value":-9223372036854775807}]`,
    ]);
    assert.match(await raw('c1'), /"min":-9223372036854775807,/);
    // A JSON patch "test" compares exactly: 2^63-2 is not 2^63-1 though both are the same double.
    const failed = await k(['patch', 'counter', 'c1', '--type', 'json', '-p', '[{"op":"test","path":"/spec/size","value":9223372036854775806}]']);
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /the server rejected our request due to an error in our request/);
    await ok(['apply', '--server-side', '--field-manager', 'ssa', '-f', await file('c2.yaml', counter('c2', `  max: ${MAX}\n`))]);
    await ok(['apply', '--server-side', '--field-manager', 'ssa', '-f', await file('c2b.yaml', counter('c2', `  max: 9223372036854775801\n  min: ${MIN}\n`))]);
    const c2 = await raw('c2');
    assert.match(c2, /"max":9223372036854775801[,}]/);
    assert.match(c2, new RegExp(`"min":${MIN}[,}]`));
    assert.match(c2, new RegExp(`"size":${MAX}[,}]`));
    // Another manager applying another value of the field conflicts (values are compared exactly).
    const conflict = await k([
      'apply',
      '--server-side',
      '--field-manager',
      'other',
      '-f',
      await file('c2c.yaml', counter('c2', `  max: 9223372036854775802\n`)),
    ]);
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /conflict with "ssa".*\.spec\.max/s);
  });

  it('a watch delivers the exact values', async () => {
    const list = JSON.parse(await ok(['get', '--raw', PATH])) as { metadata: { resourceVersion: string } };
    await ok(['patch', 'counter', 'c1', '--type', 'merge', '-p', `{"spec":{"max":${MAX}}}`]);
    const events = await ok(['get', '--raw', `${PATH}?watch=1&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=1`]);
    assert.match(
      events,
      new RegExp(`^\\{"type":"MODIFIED","object":\\{.*"spec":\\{"any":\\{"id":1234567890123456789\\},"max":${MAX},"min":-9223372036854775807,"size":${MAX}\\}`),
    );
  });

  it('schema minimum/maximum and CEL compare the exact values', async () => {
    const capped = await k(['apply', '-f', await file('c3.yaml', counter('c3', `  capped: ${MAX}\n`))]);
    assert.notEqual(capped.code, 0);
    assert.match(capped.stderr, /spec\.capped: Invalid value: 9223372036854775807: spec\.capped in body should be less than or equal to 9223372036854774784/);
    await ok(['apply', '-f', await file('c4.yaml', counter('c4', `  capped: 9223372036854774784\n`))]);
    // CEL's int is int64: 2^63-2 is refused by the rule, 2^63-1 (the same double) is not.
    const cel = await k(['apply', '-f', await file('c5.yaml', counter('c5', `  max: 9223372036854775806\n`))]);
    assert.notEqual(cel.code, 0);
    assert.match(cel.stderr, /spec: Invalid value: max must not be 9223372036854775806/);
  });

  it('printer columns show the exact values; the scale subresource reads them as Go converts an int64 to int32', async () => {
    await ok(['apply', '-f', await file('c8.yaml', counter('c8', `  max: ${MAX}\n  min: ${MIN}\n  replicas: 9223372036854775807\n`))]);
    assert.match(await ok(['get', 'counter', 'c8']), new RegExp(`^c8\\s+${MAX}\\s+${MIN}\\s*$`, 'm'));
    // int32(2^63-1) keeps the low 32 bits: -1; int32(2^32+5) is 5.
    const scale = JSON.parse(await ok(['get', '--raw', `${PATH}/c8/scale`])) as { spec: { replicas?: number } };
    assert.equal(scale.spec.replicas, -1);
    await ok(['patch', 'counter', 'c8', '--type', 'merge', '-p', '{"spec":{"replicas":4294967301}}']);
    assert.equal((JSON.parse(await ok(['get', '--raw', `${PATH}/c8/scale`])) as { spec: { replicas?: number } }).spec.replicas, 5);
  });

  it('beyond int64: an integer field refuses it, elsewhere it is a float64 as upstream decodes it', async () => {
    const over = await k(['apply', '-f', await file('c6.yaml', counter('c6', `  min: 9223372036854775808\n`))]);
    assert.notEqual(over.code, 0);
    assert.match(over.stderr, /spec\.min: Invalid value: "number": spec\.min in body must be of type integer: "number"/);
    await ok(['apply', '-f', await file('c7.yaml', counter('c7', `  ratio: 18446744073709551615\n  any: {big: 1e30, neg: -9223372036854775809}\n`))]);
    assert.match(await raw('c7'), /"spec":\{"any":\{"big":1e\+30,"neg":-9223372036854776000\},"ratio":18446744073709552000,"size":9223372036854775807\}/);
  });
});
