// render() as action.Render, from render_test.go: bundle and catalog directories compared byte for
// byte with opm's expected output, images through a stand-in puller (the image's labels decide what
// it is), the allowed-reference mask, and the errors opm gives.
import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { writeJSON } from './declcfg/write.js';
import { emptyConfig } from './declcfg/types.js';
import { RefAll, RefBundleDir, RefBundleImage, RefDCDir, RefDCImage, refAllowed, render, renderBundleImage, type ImagePuller } from './render.js';

const testdata = fileURLToPath(new URL('./bundle/testdata/', import.meta.url));
const expected = (name: string): Promise<string> => readFile(join(testdata, 'expected', name), 'utf8');

const PACKAGE_LABEL = 'operators.operatorframework.io.bundle.package.v1';

/** render_test.go's MockRegistry: image references → a directory and labels. */
const images: Record<string, { dir: string; labels: Record<string, string> }> = {
  'test.registry/foo-operator/foo-index-declcfg:v0.2.0': {
    dir: join(testdata, 'foo-index-v0.2.0-declcfg'),
    labels: { 'operators.operatorframework.io.index.configs.v1': '/foo' },
  },
  'test.registry/foo-operator/foo-bundle:v0.1.0': { dir: join(testdata, 'foo-bundle-v0.1.0'), labels: { [PACKAGE_LABEL]: 'foo' } },
  'test.registry/foo-operator/foo-bundle:v0.2.0': { dir: join(testdata, 'foo-bundle-v0.2.0'), labels: { [PACKAGE_LABEL]: 'foo' } },
  'test.registry/foo-operator/foo-bundle-no-csv-related-images:v0.2.0': {
    dir: join(testdata, 'foo-bundle-v0.2.0-no-csv-related-images'),
    labels: { [PACKAGE_LABEL]: 'foo' },
  },
  'test.registry/sqlite-index:v1': { dir: testdata, labels: { 'operators.operatorframework.io.index.database.v1': '/database/index.db' } },
  'test.registry/mystery:v1': { dir: testdata, labels: { b: '2', a: '1' } },
  'test.registry/bare:v1': { dir: testdata, labels: {} },
};

const pullImage: ImagePuller = async (ref) => {
  const img = images[ref];
  if (!img) throw new Error(`manifest unknown: ${ref}`);
  return { root: img.dir, labels: img.labels };
};

describe('render: directories, byte for byte as opm render', () => {
  it('Success/BundleDirectory', async () => {
    const cfg = await render([join(testdata, 'foo-bundle-v0.2.0')], { pullImage });
    assert.equal(writeJSON(cfg), await expected('bundle-dir.json'));
  });

  it('Success/BundleDirectoryWithImageRefTemplate', async () => {
    const cfg = await render([join(testdata, 'foo-bundle-v0.2.0')], {
      pullImage,
      imageRefTemplate: 'test.registry/{{.Package}}-operator/{{.Package}}:v{{.Version}}',
    });
    assert.equal(writeJSON(cfg), await expected('bundle-dir-image-template.json'));
  });

  it('Success/DeclcfgDirectory, with related images sorted', async () => {
    const cfg = await render([join(testdata, 'foo-index-v0.2.0-declcfg')], { pullImage });
    assert.equal(writeJSON(cfg), await expected('declcfg-dir.json'));
  });

  it('--migrate-level bundle-object-to-csv-metadata on a catalog directory', async () => {
    const cfg = await render([join(testdata, 'foo-index-v0.2.0-declcfg')], { pullImage, migrateLevel: 'bundle-object-to-csv-metadata' });
    assert.equal(writeJSON(cfg), await expected('declcfg-dir-csv-metadata.json'));
    // "all" runs the same migrations
    const all = await render([join(testdata, 'foo-index-v0.2.0-declcfg')], { pullImage, migrateLevel: 'all' });
    assert.equal(writeJSON(all), await expected('declcfg-dir-csv-metadata.json'));
  });

  it('concatenates the references in order', async () => {
    const cfg = await render([join(testdata, 'foo-bundle-v0.2.0'), join(testdata, 'foo-bundle-v0.1.0')], { pullImage });
    assert.deepEqual(
      cfg.bundles.map((b) => b.name),
      ['foo.v0.2.0', 'foo.v0.1.0'],
    );
  });
});

describe('render: images', () => {
  it('Success/DeclcfgIndexImage: a catalog image is its configs directory', async () => {
    const cfg = await render(['test.registry/foo-operator/foo-index-declcfg:v0.2.0'], { pullImage });
    assert.equal(writeJSON(cfg), await expected('declcfg-dir.json'));
  });

  it('Success/BundleImageWithNoCSVRelatedImages: the bundle image and operator images become related images', async () => {
    const ref = 'test.registry/foo-operator/foo-bundle-no-csv-related-images:v0.2.0';
    const cfg = await render([ref], { pullImage });
    assert.equal(cfg.bundles.length, 1);
    const b = cfg.bundles[0]!;
    assert.equal(b.image, ref);
    assert.deepEqual(b.relatedImages, [
      { name: '', image: 'test.registry/foo-operator/foo-2:v0.2.0' },
      { name: '', image: 'test.registry/foo-operator/foo-bundle-no-csv-related-images:v0.2.0' },
      { name: '', image: 'test.registry/foo-operator/foo-init-2:v0.2.0' },
      { name: '', image: 'test.registry/foo-operator/foo-init:v0.2.0' },
      { name: '', image: 'test.registry/foo-operator/foo:v0.2.0' },
    ]);
    assert.deepEqual(
      b.properties!.map((p) => p.type),
      ['olm.gvk', 'olm.gvk.required', 'olm.package', 'olm.package.required', 'olm.bundle.object', 'olm.bundle.object'],
    );
    // the CRD's object sorts before the CSV's (by base64 text), as in the upstream expectation
    const kinds = b
      .properties!.filter((p) => p.type === 'olm.bundle.object')
      .map((p) => (JSON.parse(Buffer.from((p.value as { data: string }).data, 'base64').toString()) as { kind: string }).kind);
    assert.deepEqual(kinds, ['CustomResourceDefinition', 'ClusterServiceVersion']);
  });

  it('a bundle image renders as its directory would, with the image set and listed', async () => {
    const ref = 'test.registry/foo-operator/foo-bundle:v0.2.0';
    const fromImage = await render([ref], { pullImage });
    const fromDir = await render([join(testdata, 'foo-bundle-v0.2.0')], { pullImage });
    const b = fromDir.bundles[0]!;
    b.image = ref;
    b.relatedImages = [...b.relatedImages!, { name: '', image: ref }].sort((x, y) => (x.image < y.image ? -1 : 1));
    assert.equal(writeJSON(fromImage), writeJSON({ ...emptyConfig(), bundles: [b] }));
  });

  it('the csv-metadata migration applies to bundle images', async () => {
    const cfg = await render(['test.registry/foo-operator/foo-bundle:v0.1.0'], { pullImage, migrateLevel: 'bundle-object-to-csv-metadata' });
    assert.deepEqual(cfg.bundles[0]!.properties!.at(-1), {
      type: 'olm.csv.metadata',
      value: {
        annotations: { 'olm.skipRange': '<0.1.0' },
        apiServiceDefinitions: {},
        crdDescriptions: { owned: [{ name: 'foos.test.foo', version: 'v1', kind: 'Foo' }] },
        displayName: 'Foo Operator',
        provider: {},
      },
    });
    assert.equal(cfg.bundles[0]!.properties!.filter((p) => p.type === 'olm.bundle.object').length, 0);
  });

  it('renderBundleImage returns the one bundle (the semver template renderer)', async () => {
    const b = await renderBundleImage('test.registry/foo-operator/foo-bundle:v0.1.0', { pullImage });
    assert.equal(b.name, 'foo.v0.1.0');
    assert.equal(b.image, 'test.registry/foo-operator/foo-bundle:v0.1.0');
    await assert.rejects(renderBundleImage('test.registry/foo-operator/foo-index-declcfg:v0.2.0', { pullImage }), {
      message: 'render reference "test.registry/foo-operator/foo-index-declcfg:v0.2.0": cannot render declarative config image: not allowed',
    });
    await assert.rejects(renderBundleImage(join(testdata, 'foo-bundle-v0.1.0'), { pullImage }), {
      message: `render reference "${join(testdata, 'foo-bundle-v0.1.0')}": cannot render bundle directory "${join(testdata, 'foo-bundle-v0.1.0')}": not allowed`,
    });
  });

  it("fails with opm's messages for images it cannot render", async () => {
    await assert.rejects(render(['test.registry/sqlite-index:v1'], { pullImage }), {
      message:
        'render reference "test.registry/sqlite-index:v1": render "test.registry/sqlite-index:v1": sqlite-based index images are no longer supported, migrate to a file-based catalog: not allowed',
    });
    await assert.rejects(render(['test.registry/mystery:v1'], { pullImage }), {
      message: 'render reference "test.registry/mystery:v1": render "test.registry/mystery:v1": image type could not be determined, found labels\n  a=1\n  b=2',
    });
    await assert.rejects(render(['test.registry/bare:v1'], { pullImage }), {
      message: 'render reference "test.registry/bare:v1": render "test.registry/bare:v1": image type could not be determined: image has no labels',
    });
    await assert.rejects(render(['test.registry/missing:v1'], { pullImage }), {
      message: 'render reference "test.registry/missing:v1": failed to pull image "test.registry/missing:v1": manifest unknown: test.registry/missing:v1',
    });
    const file = join(testdata, 'README.md');
    await assert.rejects(render([file], { pullImage }), { message: `render reference "${file}": ref "${file}" is not a directory: not allowed` });
    await assert.rejects(render([join(testdata, 'foo-bundle-v0.1.0')], { pullImage, migrateLevel: 'bogus' }), { message: 'unknown migration level "bogus"' });
  });
});

describe('render: the render cache for bundle images', () => {
  it('renders an image digest once; the cached render is written the same, HTML escapes included', async () => {
    const work = await mkdtemp(join(tmpdir(), 'kplane-render-cache-'));
    try {
      const root = join(work, 'root');
      await cp(join(testdata, 'foo-bundle-v0.2.0'), root, { recursive: true });
      await writeFile(join(root, 'metadata', 'dependencies.yaml'), 'dependencies:\n- type: olm.constraint\n  value:\n    failureMessage: a & b\n');
      const digest = `sha256:${'a'.repeat(64)}`;
      const puller: ImagePuller = async () => ({ root, labels: { [PACKAGE_LABEL]: 'foo' }, manifestDigest: digest });
      const opts = { pullImage: puller, pull: { cacheDir: join(work, 'cache') } };
      const first = writeJSON(await render(['test.registry/foo:v1'], opts));
      assert.match(first, /"failureMessage": "a \\u0026 b"/);
      assert.equal((await readdir(join(work, 'cache', 'renders'))).length, 1);
      await rm(root, { recursive: true }); // a second parse would now fail: only the cache can answer
      assert.equal(writeJSON(await render(['test.registry/foo:v1'], opts)), first);
      const migrated = await render(['test.registry/foo:v1'], { ...opts, migrateLevel: 'bundle-object-to-csv-metadata' });
      assert.equal(migrated.bundles[0]!.properties!.at(-1)!.type, 'olm.csv.metadata');
      // another reference to the same digest is its own entry (the image is part of the render)
      await assert.rejects(render(['test.registry/foo:v2'], opts), /no such file or directory/);
      await assert.rejects(render(['test.registry/foo:v1'], { ...opts, renderCache: false }), /no such file or directory/);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe('render: migration failures', () => {
  it("a CSV version that is not semver fails the csv-metadata migration with blang's message", async () => {
    const work = await mkdtemp(join(tmpdir(), 'kplane-render-migrate-'));
    try {
      const root = join(work, 'root');
      await cp(join(testdata, 'foo-bundle-v0.1.0'), root, { recursive: true });
      const csvPath = join(root, 'manifests', 'foo.v0.1.0.csv.yaml');
      await writeFile(csvPath, (await readFile(csvPath, 'utf8')).replace('version: 0.1.0', 'version: abc'));
      const puller: ImagePuller = async () => ({ root, labels: { [PACKAGE_LABEL]: 'foo' } });
      // without the migration the bundle renders (opm does not check the version there)
      const plain = await render(['test.registry/foo:abc'], { pullImage: puller });
      assert.deepEqual(plain.bundles[0]!.properties!.find((p) => p.type === 'olm.package')!.value, { packageName: 'foo', version: 'abc' });
      await assert.rejects(render(['test.registry/foo:abc'], { pullImage: puller, migrateLevel: 'bundle-object-to-csv-metadata' }), {
        message: 'migrate: Invalid character(s) found in major number "0abc"',
      });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
});

describe('render: allowed reference kinds (TestAllowRefMask)', () => {
  const cases: Array<[string, string, number, boolean]> = [
    ['DeclcfgImage/Allowed', 'test.registry/foo-operator/foo-index-declcfg:v0.2.0', RefDCImage, true],
    ['DeclcfgImage/NotAllowed', 'test.registry/foo-operator/foo-index-declcfg:v0.2.0', RefDCDir | RefBundleImage | RefBundleDir, false],
    ['DeclcfgDir/Allowed', join(testdata, 'foo-index-v0.2.0-declcfg'), RefDCDir, true],
    ['DeclcfgDir/NotAllowed', join(testdata, 'foo-index-v0.2.0-declcfg'), RefDCImage | RefBundleImage | RefBundleDir, false],
    ['BundleImage/Allowed', 'test.registry/foo-operator/foo-bundle:v0.2.0', RefBundleImage, true],
    ['BundleImage/NotAllowed', 'test.registry/foo-operator/foo-bundle:v0.2.0', RefDCImage | RefDCDir | RefBundleDir, false],
    ['BundleDir/Allowed', join(testdata, 'foo-bundle-v0.2.0'), RefBundleDir, true],
    ['BundleDir/NotAllowed', join(testdata, 'foo-bundle-v0.2.0'), RefDCImage | RefDCDir | RefBundleImage, false],
  ];
  for (const [name, ref, mask, ok] of cases) {
    it(name, async () => {
      const run = render([ref], { pullImage, allowedRefMask: mask });
      if (ok) await run;
      else await assert.rejects(run, (e: Error & { code?: string }) => e.code === 'KPL_ERR_CATALOG_NOT_ALLOWED' && e.message.endsWith(': not allowed'));
    });
  }

  it('TestAllowRefMaskAllowed', () => {
    for (const t of [RefDCImage, RefDCDir, RefBundleImage, RefBundleDir]) assert.ok(refAllowed(RefAll, t));
    assert.ok(refAllowed(RefDCImage, RefDCImage));
    assert.ok(!refAllowed(RefDCImage, RefDCDir));
    assert.ok(!refAllowed(RefDCImage, RefBundleImage));
    assert.ok(refAllowed(RefDCImage | RefDCDir, RefDCDir));
    assert.ok(!refAllowed(RefDCImage | RefDCDir, RefBundleImage));
  });
});
