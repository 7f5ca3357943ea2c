// Bundle rendering against upstream facts: the objects and properties operator-registry's
// registry_to_model_test.go expects for bundles/etcd.0.9.2, the bundle objects opm wrote into
// alpha/action/testdata/foo-index-v0.2.0-declcfg for the foo bundles, parse_test.go's parser
// cases, and the Go encoding rules the bytes depend on.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

import { writeJSON, writeYAML } from '../declcfg/write.js';
import { emptyConfig, type Bundle } from '../declcfg/types.js';
import { goMarshal, goNumber, goString as goQuote } from '../../golang/json.js';
import { resolvePlain } from '../../golang/yaml-read.js';
import { firstDocument, yamlToValue } from './goyaml.js';
import { migrationsFor, migrationsHelpText } from './migrations.js';
import { parseBundleDir, type ParsedBundle } from './parse.js';
import { objectsAndProperties, renderBundleDir } from './render.js';

const testdata = fileURLToPath(new URL('./testdata/', import.meta.url));
const scratch: string[] = [];
after(async () => {
  for (const d of scratch) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'kplane-bundle-'));
  scratch.push(d);
  return d;
}

function propKey(p: { type: string; value: unknown }): string {
  return `${p.type} ${JSON.stringify(p.value)}`;
}

function b64(s: string): string {
  return Buffer.from(s, 'utf8').toString('base64');
}

describe('etcd.0.9.2 as registry_to_model_test.go expects it', () => {
  it('gives the same objects, byte for byte, in manifest order', async () => {
    const expected = JSON.parse(await readFile(join(testdata, 'expected/etcd.0.9.2.objects.json'), 'utf8')) as string[];
    const parsed = await parseBundleDir(join(testdata, 'etcd.0.9.2'));
    const { objects } = objectsAndProperties(parsed);
    assert.deepEqual(objects, expected);
    const bundle = await renderBundleDir(join(testdata, 'etcd.0.9.2'));
    assert.equal(bundle.csvJSON, expected[2]);
  });

  it('gives the same properties, sorted by type then raw value', async () => {
    const objects = JSON.parse(await readFile(join(testdata, 'expected/etcd.0.9.2.objects.json'), 'utf8')) as string[];
    const expected = [
      { type: 'olm.package', value: { packageName: 'etcd', version: '0.9.2' } },
      { type: 'olm.gvk.required', value: { group: 'etcd.database.coreos.com', kind: 'EtcdCluster', version: 'v1beta2' } },
      { type: 'olm.gvk.required', value: { group: 'testapi.coreos.com', kind: 'testapi', version: 'v1' } },
      { type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', kind: 'EtcdCluster', version: 'v1beta2' } },
      { type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', kind: 'EtcdBackup', version: 'v1beta2' } },
      { type: 'olm.gvk', value: { group: 'etcd.database.coreos.com', kind: 'EtcdRestore', version: 'v1beta2' } },
      { type: 'olm.constraint', value: { cel: { rule: 'properties.exists(p, p.type == "certified")' }, failureMessage: 'require to have "certified"' } },
      ...objects.map((o) => ({ type: 'olm.bundle.object', value: { data: b64(o) } })),
    ];
    const bundle = await renderBundleDir(join(testdata, 'etcd.0.9.2'), { image: 'quay.io/operatorhubio/etcd:v0.9.2' });
    const got = bundle.properties!;
    assert.deepEqual(got.map(propKey).sort(), expected.map(propKey).sort());
    // opm's order: by type, then by the raw value's bytes; bundle objects last
    assert.deepEqual(
      got.map((p) => p.type),
      [
        'olm.constraint',
        'olm.gvk',
        'olm.gvk',
        'olm.gvk',
        'olm.gvk.required',
        'olm.gvk.required',
        'olm.package',
        'olm.bundle.object',
        'olm.bundle.object',
        'olm.bundle.object',
        'olm.bundle.object',
      ],
    );
    assert.deepEqual(
      got.filter((p) => p.type === 'olm.gvk').map((p) => (p.value as { kind: string }).kind),
      ['EtcdBackup', 'EtcdCluster', 'EtcdRestore'],
    );
    // the bundle image and the operator image (three containers, one image) are the related images
    assert.deepEqual(bundle.relatedImages, [
      { name: '', image: 'quay.io/coreos/etcd-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2' },
      { name: '', image: 'quay.io/operatorhubio/etcd:v0.9.2' },
    ]);
  });
});

describe('foo bundles against the objects opm wrote into foo-index-v0.2.0-declcfg', () => {
  it('encodes every manifest exactly as opm did (sorted keys, \\u003c escapes)', async () => {
    const docs = parseAllDocuments(await readFile(join(testdata, 'foo-index-v0.2.0-declcfg/foo/index.yaml'), 'utf8')).map((d) => d.toJS() as Bundle);
    for (const v of ['0.1.0', '0.2.0']) {
      const fbc = docs.find((d) => d.name === `foo.v${v}`)!;
      const want = fbc.properties!.filter((p) => p.type === 'olm.bundle.object').map((p) => (p.value as { data: string }).data);
      const bundle = await renderBundleDir(join(testdata, `foo-bundle-v${v}`));
      const got = bundle.properties!.filter((p) => p.type === 'olm.bundle.object').map((p) => (p.value as { data: string }).data);
      assert.deepEqual([...got].sort(), [...want].sort(), `foo.v${v}`);
      assert.match(Buffer.from(got.find((d) => Buffer.from(d, 'base64').includes('ClusterServiceVersion'))!, 'base64').toString(), /"olm\.skipRange":"\\u003c/);
    }
  });

  it('renders a plain directory with an empty image and no bundle image among related images', async () => {
    const bundle = await renderBundleDir(join(testdata, 'foo-bundle-v0.2.0'));
    assert.equal(bundle.image, '');
    assert.equal(bundle.name, 'foo.v0.2.0');
    assert.equal(bundle.package, 'foo');
    assert.ok(bundle.relatedImages!.every((r) => !r.image.includes('foo-bundle')));
  });
});

/** parse_test.go's bundleFS, written to disk. */
async function parserBundle(extra: Record<string, string | null> = {}): Promise<string> {
  const dir = await tempDir();
  const files: Record<string, string | null> = {
    'manifests/csv.yaml': `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.1.0
spec:
  version: 1.1.0
  replaces: v1.1.0
  install:
    strategy: deployment
    spec:
      deployments:
      - name: etcd-operator
        spec:
          template:
            spec:
              containers:
              - name: foo-controller
                image: quay.io/test/foo-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2
  customresourcedefinitions:
    required:
    - name: bars.test.io
      version: v2
      kind: Bar
    owned:
    - name: foos.test.io
      version: v1
      kind: Foo
`,
    'manifests/crd.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foos.test.io
spec:
  group: test.io
  versions:
  - name: v1
    served: true
    storage: true
  scope: Namespaced
  names:
    plural: foos
    singular: foo
    kind: Foo
`,
    'metadata/annotations.yaml': `annotations:
  operators.operatorframework.io.bundle.package.v1: "foo"
  operators.operatorframework.io.bundle.channels.v1: "alpha,stable"
  operators.operatorframework.io.bundle.channel.default.v1: "stable"
`,
    ...extra,
  };
  const { mkdir } = await import('node:fs/promises');
  await mkdir(join(dir, 'manifests'), { recursive: true });
  await mkdir(join(dir, 'metadata'), { recursive: true });
  for (const [path, text] of Object.entries(files)) if (text !== null) await writeFile(join(dir, path), text);
  return dir;
}

describe("the bundle parser (parse_test.go's cases)", () => {
  it('ManifestsOnly: name, package, channels, olm.package and olm.gvk', async () => {
    const b = await parseBundleDir(await parserBundle());
    assert.equal(b.name, 'foo.v1.1.0');
    assert.equal(b.package, 'foo');
    assert.deepEqual(b.channels, ['alpha', 'stable']);
    assert.deepEqual(b.properties, [
      { type: 'olm.package', raw: '{"packageName":"foo","version":"1.1.0"}' },
      { type: 'olm.gvk', raw: '{"group":"test.io","kind":"Foo","version":"v1"}' },
    ]);
  });

  it('WithDependenciesFile: olm.package dependencies become olm.package.required', async () => {
    const dir = await parserBundle({
      'metadata/dependencies.yaml': 'dependencies:\n- type: olm.package\n  value:\n    packageName: bar\n    version: 2.0.0\n',
    });
    const b = await parseBundleDir(dir);
    assert.deepEqual(b.dependencies, [{ type: 'olm.package', raw: '{"packageName":"bar","version":"2.0.0"}', escaped: true }]);
    const bundle = await renderBundleDir(dir);
    assert.deepEqual(
      bundle.properties!.filter((p) => p.type !== 'olm.bundle.object'),
      [
        { type: 'olm.gvk', value: { group: 'test.io', kind: 'Foo', version: 'v1' } },
        { type: 'olm.gvk.required', value: { group: 'test.io', kind: 'Bar', version: 'v2' } },
        { type: 'olm.package', value: { packageName: 'foo', version: '1.1.0' } },
        { type: 'olm.package.required', value: { packageName: 'bar', versionRange: '2.0.0' } },
      ],
    );
    assert.deepEqual(bundle.relatedImages, [
      { name: '', image: 'quay.io/test/foo-operator@sha256:c0301e4686c3ed4206e370b42de5a3bd2229b9fb4906cf85f3f30650424abec2' },
    ]);
  });

  it('PropertiesAnnotation: the CSV olm.properties annotation adds opaque properties', async () => {
    const csv = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: foo.v1.1.0
  annotations:
    'olm.properties': '[{"type":"olm.label","value":{"label":"baz"}}]'
spec:
  version: 1.1.0
  replaces: v1.1.0
`;
    const b = await parseBundleDir(await parserBundle({ 'manifests/csv.yaml': csv }));
    assert.deepEqual(b.properties, [
      { type: 'olm.package', raw: '{"packageName":"foo","version":"1.1.0"}' },
      { type: 'olm.label', raw: '{"label":"baz"}' },
      { type: 'olm.gvk', raw: '{"group":"test.io","kind":"Foo","version":"v1"}' },
    ]);
  });

  it('PropertiesFile: properties.yaml comes first; the annotations olm.package still wins when rendered', async () => {
    const dir = await parserBundle({ 'metadata/properties.yaml': 'properties:\n- type: olm.package\n  value:\n    packageName: fizz\n    version: 1.1.0\n' });
    const b = await parseBundleDir(dir);
    assert.deepEqual(
      b.properties.map((p) => p.raw),
      ['{"packageName":"fizz","version":"1.1.0"}', '{"packageName":"foo","version":"1.1.0"}', '{"group":"test.io","kind":"Foo","version":"v1"}'],
    );
    const bundle = await renderBundleDir(dir);
    assert.deepEqual(
      bundle.properties!.filter((p) => p.type === 'olm.package'),
      [{ type: 'olm.package', value: { packageName: 'foo', version: '1.1.0' } }],
    );
  });

  it('finds the annotations in any metadata file (the first by name that has them), YAML or JSON', async () => {
    const dir = await parserBundle({
      'metadata/annotations.yaml': null,
      'metadata/a-notes.txt': 'just text\n',
      'metadata/b.json':
        '{"annotations": {"operators.operatorframework.io.bundle.package.v1": "from-json", "operators.operatorframework.io.bundle.channels.v1": "beta"}}',
      'metadata/c.yaml': 'annotations:\n  operators.operatorframework.io.bundle.package.v1: later\n',
    });
    const b = await parseBundleDir(dir);
    assert.equal(b.package, 'from-json');
    assert.deepEqual(b.channels, ['beta']);
    // numbers bound for string fields become their text when read from YAML (sigs.k8s.io/yaml)
    const num = await parserBundle({ 'metadata/annotations.yaml': 'annotations:\n  operators.operatorframework.io.bundle.package.v1: 123\n' });
    assert.equal((await parseBundleDir(num)).package, '123');
  });

  it('fails like opm on missing pieces', async () => {
    await assert.rejects(parseBundleDir(await parserBundle({ 'metadata/annotations.yaml': null })), { message: 'Could not find annotations file' });
    await assert.rejects(parseBundleDir(await parserBundle({ 'manifests/csv.yaml': null })), { message: 'no csv in bundle' });
    await assert.rejects(parseBundleDir(await parserBundle({ 'manifests/csv.yaml': null, 'manifests/crd.yaml': null })), {
      message: 'no bundle objects found',
    });
    // an undecodable CSV is skipped (opm logs it), which leaves the bundle without one
    await assert.rejects(parseBundleDir(await parserBundle({ 'manifests/csv.yaml': 'kind: [unclosed\n' })), { message: 'no csv in bundle' });
    await assert.rejects(parseBundleDir(await parserBundle({ 'manifests/crd.yaml': null })), {
      message: "error checking provided apis in bundle foo.v1.1.0: couldn't find test.io/v1/Foo (foos) in bundle. found: map[]",
    });
    const dir = await parserBundle({ 'metadata/dependencies.yaml': 'dependencies:\n  - type: olm.gvk\n' });
    await assert.rejects(renderBundleDir(dir), {
      message: 'get properties for bundle "foo.v1.1.0": parse property[0] of type "olm.gvk": unexpected end of JSON input',
    });
  });

  it('reads only the first document of a manifest, and only the first CSV', async () => {
    const other = (await readFile(join(testdata, 'foo-bundle-v0.1.0/manifests/foo.v0.1.0.csv.yaml'), 'utf8')).replace('name: foo.v0.1.0', 'name: zzz.v9');
    const dir = await parserBundle({
      'manifests/zz-second.csv.yaml': other,
      'manifests/extra.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n',
    });
    const b = await parseBundleDir(dir);
    assert.equal(b.name, 'foo.v1.1.0');
    assert.deepEqual(
      b.objects.map((o) => o['kind']),
      ['CustomResourceDefinition', 'ClusterServiceVersion', 'ConfigMap'],
    );
  });
});

describe('HTML escapes that survive in opm output', () => {
  it('keeps \\u0026 in a dependency value read from YAML (JSON output), not in YAML output', async () => {
    const dir = await parserBundle({
      'metadata/dependencies.yaml': `dependencies:
- type: olm.constraint
  value:
    failureMessage: needs a & b
    cel:
      rule: 'properties.exists(p, p.type == "a") && properties.exists(p, p.type == "b")'
`,
    });
    const bundle = await renderBundleDir(dir);
    const cfg = { ...emptyConfig(), bundles: [bundle] };
    const json = writeJSON(cfg);
    assert.match(json, /"rule": "properties\.exists\(p, p\.type == \\"a\\"\) \\u0026\\u0026 properties/);
    assert.match(json, /"failureMessage": "needs a \\u0026 b"/);
    assert.match(writeYAML(cfg), /failureMessage: needs a & b/);
  });
});

describe('Go encodings', () => {
  it("quotes strings as Go's encoding/json", () => {
    assert.equal(goQuote('<a href="x">&</a>', true), '"\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e"');
    assert.equal(goQuote('<&>', false), '"<&>"');
    assert.equal(goQuote('a\u2028b\u0001\t\b\f', false), '"a\\u2028b\\u0001\\t\\b\\f"');
    assert.equal(goQuote('it’s', true), '"it’s"');
  });

  it('writes numbers as Go writes float64', () => {
    assert.deepEqual([1, 1.5, 1e21, 1e20, 0.000001, 5e-7, 1.5e-7].map(goNumber), ['1', '1.5', '1e+21', '100000000000000000000', '0.000001', '5e-7', '1.5e-7']);
  });

  it('sorts map keys bytewise', () => {
    assert.equal(goMarshal({ b: 1, B: 2, a: { z: null, y: [true] } }), '{"B":2,"a":{"y":[true],"z":null},"b":1}');
  });

  it('resolves YAML scalars as go-yaml v2 (YAML 1.1)', () => {
    assert.deepEqual(
      [
        'yes',
        'No',
        'on',
        'y',
        'true',
        '~',
        'null',
        '0x1F',
        '017',
        '0o17',
        '1_000',
        '+5',
        '1.0',
        '.5',
        '1e3',
        '2019-01-02',
        '2019-01-02T10:00:00Z',
        '1:20',
        'abc',
        '0b101',
      ].map(resolvePlain),
      [true, false, true, true, true, null, null, 31, 15, 15, 1000, 5, 1, 0.5, 1000, '2019-01-02', '2019-01-02T10:00:00Z', '1:20', 'abc', 5],
    );
    assert.deepEqual(yamlToValue('y: 1\n"n": 2\n3: x\nq: "yes"\n'), { true: 1, n: 2, '3': 'x', q: 'yes' });
    assert.deepEqual(yamlToValue('base: &b {a: 1, b: 2}\nm:\n  <<: *b\n  b: 3\n'), { base: { a: 1, b: 2 }, m: { a: 1, b: 3 } });
  });

  it('keeps int64 values exact and turns larger integers into float64, as the k8s decoder does', () => {
    assert.equal(
      goMarshal(yamlToValue('a: 9223372036854775807\nb: -9007199254740993\nc: 18446744073709551615\nd: 0x7fffffffffffffff\n')),
      '{"a":9223372036854775807,"b":-9007199254740993,"c":18446744073709552000,"d":9223372036854775807}',
    );
    const j = firstDocument('{"a": 9223372036854775807, "c": 18446744073709551615, "f": 1.0}');
    assert.equal(goMarshal(j.kind === 'json' ? j.value.value : undefined), '{"a":9223372036854775807,"c":18446744073709552000,"f":1}');
  });

  it('decodes the first document, JSON when the text starts with {', () => {
    const j = firstDocument('  {"b": 1, "a": [1, 2]} trailing');
    assert.equal(j.kind, 'json');
    assert.deepEqual(j.kind === 'json' ? j.value.value : undefined, { b: 1, a: [1, 2] });
    assert.deepEqual(firstDocument('---\na: 1\n---\nb: 2\n'), { kind: 'yaml', value: { a: 1 } });
    assert.deepEqual(firstDocument('# only a comment\n'), { kind: 'yaml', value: null });
    assert.deepEqual(firstDocument(''), { kind: 'empty' });
    assert.throws(() => firstDocument('--- x\na: 1\n'), /invalid Yaml document separator: x/);
  });
});

describe('migrations', () => {
  it('selects levels as opm does', () => {
    assert.deepEqual(
      migrationsFor('none').map((m) => m.token),
      ['none'],
    );
    assert.deepEqual(
      migrationsFor('bundle-object-to-csv-metadata').map((m) => m.token),
      ['none', 'bundle-object-to-csv-metadata'],
    );
    assert.deepEqual(
      migrationsFor('all').map((m) => m.token),
      ['none', 'bundle-object-to-csv-metadata'],
    );
    assert.throws(() => migrationsFor('nope'), { message: 'unknown migration level "nope"' });
    assert.equal(
      migrationsHelpText(),
      '\nThe migrator will run all migrations up to and including the selected level.\n\nAvailable migrators:\n' +
        '  - none                          : do nothing\n' +
        `  - bundle-object-to-csv-metadata : migrates bundles' "olm.bundle.object" to "olm.csv.metadata"\n`,
    );
  });

  it('replaces bundle objects by the CSV metadata only for bundles with an image', async () => {
    const plain = await renderBundleDir(join(testdata, 'etcd.0.9.2'), { migrateLevel: 'bundle-object-to-csv-metadata' });
    assert.equal(plain.properties!.filter((p) => p.type === 'olm.bundle.object').length, 4);
    const withImage = await renderBundleDir(join(testdata, 'etcd.0.9.2'), {
      image: 'quay.io/operatorhubio/etcd:v0.9.2',
      migrateLevel: 'bundle-object-to-csv-metadata',
    });
    const props = withImage.properties!;
    assert.equal(props.filter((p) => p.type === 'olm.bundle.object').length, 0);
    assert.equal(props.at(-1)!.type, 'olm.csv.metadata');
    const md = props.at(-1)!.value as Record<string, unknown>;
    assert.deepEqual(Object.keys(md), [
      'annotations',
      'apiServiceDefinitions',
      'crdDescriptions',
      'description',
      'displayName',
      'keywords',
      'links',
      'maintainers',
      'maturity',
      'provider',
    ]);
    assert.deepEqual(md['provider'], { name: 'CoreOS, Inc' });
    assert.deepEqual(md['maintainers'], [{ name: 'CoreOS, Inc', email: 'support@coreos.com' }]);
    // csv.GetLabels(): the CSV's metadata labels; spec.labels (which etcd's CSV has) do not count
    assert.equal(md['labels'], undefined);
    const owned = (md['crdDescriptions'] as { owned: Array<Record<string, unknown>> }).owned;
    assert.deepEqual(Object.keys(owned[0]!), ['name', 'version', 'kind', 'displayName', 'description', 'resources', 'statusDescriptors', 'specDescriptors']);
    assert.deepEqual((owned[0]!['resources'] as unknown[])[0], { name: '', kind: 'Service', version: 'v1' });
  });
});

describe('objectsAndProperties: a property value that is not JSON', () => {
  it("fails with json.Unmarshal's SyntaxError text, as registry.ObjectsAndPropertiesFromBundle does", () => {
    const err = (raw: string): string => {
      try {
        objectsAndProperties({ properties: [{ type: 'olm.gvk', raw }], dependencies: [] } as unknown as ParsedBundle);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    };
    assert.equal(err('{"group":'), 'parse property[0] of type "olm.gvk": unexpected end of JSON input');
    assert.equal(err('{"group":x}'), `parse property[0] of type "olm.gvk": invalid character 'x' looking for beginning of value`);
    assert.equal(err('{"group":"a"}}'), `parse property[0] of type "olm.gvk": invalid character '}' after top-level value`);
  });
});
