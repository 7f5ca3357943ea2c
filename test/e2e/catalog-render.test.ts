// `kplane catalog render` as a real process: bundle and catalog directories compared byte for byte
// with opm's output (render_test.go's expectations), bundle and catalog images built from the same
// fixtures and pushed to a real registry on loopback, and bad input giving opm's message on stderr,
// exit code 1 and nothing on stdout.
import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';

import { buildBundleImage, buildCatalogImage, pushImage } from '../../src/catalog/oci/index.js';
import { startRegistry, type RunningRegistry } from '../support/registry.js';
import { ensureTools, repoRoot, run } from '../support/tools.js';

const testdata = join(repoRoot, 'src', 'catalog', 'bundle', 'testdata');
const work = mkdtempSync(join(tmpdir(), 'kplane-catalog-render-'));
after(() => rmSync(work, { recursive: true, force: true }));

const expected = (name: string): string => readFileSync(join(testdata, 'expected', name), 'utf8');

function kplane(args: string[]) {
  return run(process.execPath, ['bin/kplane.js', 'catalog', 'render', ...args], { env: { KPLANE_PROGRESS: 'none' }, timeoutMs: 90_000 });
}

/** The log.Fatal line opm prints: a local timestamp, then the message. */
function fatal(message: string): RegExp {
  const esc = message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^\\d{4}/\\d{2}/\\d{2} \\d{2}:\\d{2}:\\d{2} ${esc}\\n$`);
}

describe('kplane catalog render: directories', { timeout: 120_000 }, () => {
  test('a bundle directory, as Success/BundleDirectory', async () => {
    const r = await kplane([join(testdata, 'foo-bundle-v0.2.0')]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, expected('bundle-dir.json'));
  });

  test('--alpha-image-ref-template, as Success/BundleDirectoryWithImageRefTemplate', async () => {
    const r = await kplane([
      join(testdata, 'foo-bundle-v0.2.0'),
      '--alpha-image-ref-template',
      'test.registry/{{.Package}}-operator/{{.Package}}:v{{.Version}}',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, expected('bundle-dir-image-template.json'));
  });

  test('a catalog directory, as Success/DeclcfgDirectory; -o yaml carries the same blobs', async () => {
    const r = await kplane([join(testdata, 'foo-index-v0.2.0-declcfg'), '-o', 'json']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, expected('declcfg-dir.json'));
    const y = await kplane([join(testdata, 'foo-index-v0.2.0-declcfg'), '-o', 'yaml']);
    assert.equal(y.code, 0, y.stderr);
    assert.ok(y.stdout.startsWith('---\n'));
    const fromJSON = expected('declcfg-dir.json')
      .split(/\n(?=\{)/)
      .map((t) => JSON.parse(t) as unknown);
    assert.deepEqual(
      parseAllDocuments(y.stdout).map((d) => d.toJS() as unknown),
      fromJSON,
    );
  });

  test('--migrate-level bundle-object-to-csv-metadata (and --migrate, which runs them all)', async () => {
    const r = await kplane([join(testdata, 'foo-index-v0.2.0-declcfg'), '--migrate-level', 'bundle-object-to-csv-metadata']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, expected('declcfg-dir-csv-metadata.json'));
    const all = await kplane([join(testdata, 'foo-index-v0.2.0-declcfg'), '--migrate']);
    assert.equal(all.stdout, expected('declcfg-dir-csv-metadata.json'));
  });
});

describe('kplane catalog render --platform FILE', { timeout: 120_000 }, () => {
  test("keeps the platform's channels (the catalog of a platform branch); a bad definition fails", async () => {
    const file = join(work, 'platform.yaml');
    writeFileSync(file, 'schema: kplane.platform\nname: px\noperators:\n- package: foo\n  channel: stable\n');
    const r = await kplane([join(testdata, 'foo-index-v0.2.0-declcfg'), '--platform', file]);
    assert.equal(r.code, 0, r.stderr);
    const docs = r.stdout.split(/\n(?=\{)/).map((t) => JSON.parse(t) as { schema: string; name: string });
    assert.deepEqual(
      docs.filter((d) => d.schema === 'olm.channel').map((d) => d.name),
      ['stable'],
    );
    assert.ok(docs.some((d) => d.schema === 'olm.bundle' && d.name === 'foo.v0.2.0'));
    writeFileSync(file, 'schema: kplane.platform\nname: px\noperators: []\n');
    const bad = await kplane([join(testdata, 'foo-index-v0.2.0-declcfg'), '--platform', file]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, fatal(`${file}: operators: must not be empty`));
  });
});

describe('kplane catalog render: bad input', { timeout: 180_000 }, () => {
  function brokenBundle(name: string, change: (dir: string) => void): string {
    const dir = join(work, name);
    cpSync(join(testdata, 'foo-bundle-v0.2.0'), dir, { recursive: true });
    change(dir);
    return dir;
  }

  const cases: Array<[string, () => string, (ref: string) => string]> = [
    [
      'no CSV',
      () => brokenBundle('no-csv', (d) => rmSync(join(d, 'manifests', 'foo.v0.2.0.csv.yaml'))),
      (ref) => `render reference "${ref}": no csv in bundle`,
    ],
    [
      'a CSV that is not YAML',
      () => brokenBundle('bad-yaml', (d) => writeFileSync(join(d, 'manifests', 'foo.v0.2.0.csv.yaml'), 'apiVersion: [\nkind: ClusterServiceVersion\n')),
      (ref) => `render reference "${ref}": no csv in bundle`,
    ],
    [
      'no manifests at all',
      () =>
        brokenBundle('empty', (d) => {
          rmSync(join(d, 'manifests'), { recursive: true });
          mkdirSync(join(d, 'manifests'));
        }),
      (ref) => `render reference "${ref}": no bundle objects found`,
    ],
    [
      'no annotations file',
      () => brokenBundle('no-annotations', (d) => rmSync(join(d, 'metadata', 'annotations.yaml'))),
      (ref) => `render reference "${ref}": Could not find annotations file`,
    ],
    [
      'a CRD the CSV owns is missing',
      () => brokenBundle('no-crd', (d) => rmSync(join(d, 'manifests', 'foos.test.foo.crd.yaml'))),
      (ref) => `render reference "${ref}": error checking provided apis in bundle foo.v0.2.0: couldn't find test.foo/v1/Foo (foos) in bundle. found: map[]`,
    ],
    [
      'a dependency without a value',
      () => brokenBundle('bad-dependency', (d) => writeFileSync(join(d, 'metadata', 'dependencies.yaml'), 'dependencies:\n- type: olm.package\n')),
      (ref) => `render reference "${ref}": get properties for bundle "foo.v0.2.0": parse property[0] of type "olm.package": unexpected end of JSON input`,
    ],
    ['a file', () => join(testdata, 'README.md'), (ref) => `render reference "${ref}": ref "${ref}" is not a directory: not allowed`],
  ];
  for (const [name, make, message] of cases) {
    test(name, async () => {
      const ref = make();
      const r = await kplane([ref]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, fatal(message(ref)));
    });
  }

  test('a good reference before a bad one prints nothing', async () => {
    const bad = join(work, 'no-csv');
    const r = await kplane([join(testdata, 'foo-bundle-v0.2.0'), bad]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, fatal(`render reference "${bad}": no csv in bundle`));
  });

  test('flags: unknown output, unknown migration level, no reference, both migrate flags', async () => {
    const dir = join(testdata, 'foo-bundle-v0.2.0');
    const out = await kplane([dir, '-o', 'xml']);
    assert.equal(out.code, 1);
    assert.match(out.stderr, fatal('invalid --output value "xml", expected (json|yaml)'));
    const level = await kplane([dir, '--migrate-level', 'everything']);
    assert.equal(level.code, 1);
    assert.match(level.stderr, fatal('unknown migration level "everything"'));
    const none = await kplane([]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /^Error: requires at least 1 arg\(s\), only received 0\nUsage:\n {2}kplane catalog render /);
    const both = await kplane([dir, '--migrate', '--migrate-level', 'none']);
    assert.equal(both.code, 1);
    assert.match(
      both.stderr,
      /^Error: if any flags in the group \[migrate migrate-level\] are set none of the others can be; \[migrate migrate-level\] were all set\n/,
    );
    const tls = await kplane([dir, '--use-http', '--skip-tls-verify']);
    assert.equal(tls.code, 1);
    assert.match(tls.stderr, fatal('invalid flag combination: --use-http and --skip-tls-verify cannot both be true'));
  });
});

describe('kplane catalog render: images from a real registry', { timeout: 240_000 }, () => {
  let reg: RunningRegistry;
  let bundleRef: string;
  let catalogRef: string;
  const cacheDir = join(work, 'cache');

  before(async () => {
    ensureTools();
    reg = await startRegistry();
    bundleRef = `${reg.host}/foo-operator/foo-bundle:v0.2.0`;
    catalogRef = `${reg.host}/foo-operator/foo-index-declcfg:v0.2.0`;
    const layout = join(work, 'layout');
    buildBundleImage(join(testdata, 'foo-bundle-v0.2.0'), { layoutDir: layout, tag: 'bundle' });
    buildCatalogImage(join(testdata, 'foo-index-v0.2.0-declcfg'), { layoutDir: layout, tag: 'catalog' });
    await pushImage(`oci:${layout}:bundle`, bundleRef);
    await pushImage(`oci:${layout}:catalog`, catalogRef);
  });
  after(async () => {
    await reg?.stop();
  });

  test('a catalog image renders as its configs directory (Success/DeclcfgIndexImage)', async () => {
    const r = await kplane([catalogRef, '--cache-dir', cacheDir]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, expected('declcfg-dir.json'));
  });

  test('a bundle image: the image is the reference and is listed among the related images', async () => {
    const r = await kplane([bundleRef, '--cache-dir', cacheDir]);
    assert.equal(r.code, 0, r.stderr);
    // opm render of the directory, with the image set; 127.0.0.1:... sorts before test.registry/...
    const want = expected('bundle-dir.json')
      .replace('"image": "",', `"image": "${bundleRef}",`)
      .replace('"relatedImages": [\n', `"relatedImages": [\n        {\n            "name": "",\n            "image": "${bundleRef}"\n        },\n`);
    assert.equal(r.stdout, want);
  });

  test('a bundle image with --migrate-level bundle-object-to-csv-metadata', async () => {
    const r = await kplane([bundleRef, '--cache-dir', cacheDir, '--migrate-level', 'bundle-object-to-csv-metadata', '-o', 'yaml']);
    assert.equal(r.code, 0, r.stderr);
    const [doc] = parseAllDocuments(r.stdout).map((d) => d.toJS() as { properties: Array<{ type: string; value: unknown }> });
    assert.deepEqual(
      doc!.properties.map((p) => p.type),
      ['olm.gvk', 'olm.gvk.required', 'olm.package', 'olm.package.required', 'olm.csv.metadata'],
    );
    assert.deepEqual(doc!.properties[4]!.value, {
      annotations: { 'olm.skipRange': '<0.2.0' },
      apiServiceDefinitions: {},
      crdDescriptions: { owned: [{ kind: 'Foo', name: 'foos.test.foo', version: 'v1' }] },
      displayName: 'Foo Operator',
      provider: {},
    });
  });

  test("images and a directory together: one stream, in the writer's order", async () => {
    const r = await kplane([bundleRef, catalogRef, join(testdata, 'foo-bundle-v0.2.0'), '--cache-dir', cacheDir]);
    assert.equal(r.code, 0, r.stderr);
    const docs = r.stdout.split(/\n(?=\{)/).map((t) => JSON.parse(t) as { schema: string; name: string });
    // the writer groups by package: package, channels, then bundles by name (opm's order; equal
    // names have no defined order in opm, whose sort is not stable)
    assert.deepEqual(
      docs.map((d) => `${d.schema} ${d.name}`),
      [
        'olm.package foo',
        'olm.channel beta',
        'olm.channel stable',
        'olm.bundle foo.v0.1.0',
        'olm.bundle foo.v0.2.0',
        'olm.bundle foo.v0.2.0',
        'olm.bundle foo.v0.2.0',
      ],
    );
  });

  test('an image that is not there, and a registry that is not there', async () => {
    const missing = `${reg.host}/foo-operator/nothing:v1`;
    const r = await kplane([missing, '--cache-dir', cacheDir]);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, new RegExp(`^\\d{4}/\\d{2}/\\d{2} \\d{2}:\\d{2}:\\d{2} render reference "${missing}": failed to pull image "${missing}": .+\\n$`));
    const down = await kplane(['127.0.0.1:1/foo/bar:v1', '--cache-dir', cacheDir]);
    assert.equal(down.code, 1);
    assert.equal(down.stdout, '');
    assert.match(down.stderr, /render reference "127\.0\.0\.1:1\/foo\/bar:v1": failed to pull image "127\.0\.0\.1:1\/foo\/bar:v1": /);
  });
});
