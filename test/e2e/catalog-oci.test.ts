// Bundle and catalog images against a real registry (Debian's docker-registry 2.8 on loopback):
// build with `kplane catalog bundle build`, push, pull back by tag, by digest and through a
// manifest list, through basic and token auth, with the cache, and every failure a user can meet.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { buildBundleImage, buildCatalogImage, pullImage, pushImage } from '../../src/catalog/oci/index.js';
import { OciLayout } from '../../src/catalog/oci/layout.js';
import { MediaType } from '../../src/catalog/oci/manifest.js';
import { writeTar } from '../../src/catalog/oci/tar.js';
import { startRegistry } from '../support/registry.js';
import type { RunningRegistry } from '../support/registry.js';
import { ensureTools, run, tools } from '../support/tools.js';

const work = mkdtempSync(join(tmpdir(), 'kplane-catalog-oci-'));
/** A HOME with no docker config, so the machine's credentials never leak into a test. */
const home = join(work, 'home');
mkdirSync(home);
const baseEnv = {
  HOME: home,
  KPLANE_CACHE_DIR: join(work, 'default-cache'),
  REGISTRY_AUTH_FILE: '',
  DOCKER_CONFIG: join(home, '.docker'),
  XDG_RUNTIME_DIR: '',
};

function kplane(args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, ['bin/kplane.js', 'catalog', ...args], { env: { ...baseEnv, ...env }, timeoutMs: 60_000 });
}

const CSV = `apiVersion: operators.coreos.com/v1alpha1
kind: ClusterServiceVersion
metadata:
  name: etcdoperator.v0.9.4
spec:
  version: 0.9.4
  displayName: etcd
`;
const CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: etcdclusters.etcd.database.coreos.com
spec:
  group: etcd.database.coreos.com
`;
const ANNOTATIONS = `annotations:
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: etcd
  operators.operatorframework.io.bundle.channels.v1: alpha,stable
  operators.operatorframework.io.bundle.channel.default.v1: stable
`;

function fixtureBundle(): string {
  const dir = join(work, 'bundle');
  mkdirSync(join(dir, 'manifests'), { recursive: true });
  mkdirSync(join(dir, 'metadata'), { recursive: true });
  writeFileSync(join(dir, 'manifests', 'etcdoperator.v0.9.4.clusterserviceversion.yaml'), CSV);
  writeFileSync(join(dir, 'manifests', 'etcdclusters.etcd.database.coreos.com.crd.yaml'), CRD);
  writeFileSync(join(dir, 'metadata', 'annotations.yaml'), ANNOTATIONS);
  return dir;
}

function fixtureCatalog(): string {
  const dir = join(work, 'catalog', 'etcd');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'catalog.yaml'), '---\nschema: olm.package\nname: etcd\ndefaultChannel: stable\n');
  return join(work, 'catalog');
}

after(() => rmSync(work, { recursive: true, force: true }));

const blobGets = async (r: RunningRegistry) => (await r.requests()).filter((q) => q.method === 'GET' && q.path.includes('/blobs/'));

describe('catalog images against a real registry', { timeout: 180_000 }, () => {
  let open: RunningRegistry;
  let bundleDir: string;
  let ref: string;
  let digest: string;

  before(async () => {
    ensureTools();
    bundleDir = fixtureBundle();
    open = await startRegistry();
    ref = `${open.host}/operators/etcd-bundle:v0.9.4`;
    const built = await kplane(['bundle', 'build', bundleDir, '--tag', ref, '--oci-layout', join(work, 'layout'), '--push']);
    assert.equal(built.code, 0, built.stderr);
    digest = built.stdout.trim();
    assert.match(digest, /^sha256:[a-f0-9]{64}$/);
    assert.match(built.stderr, /pushed .*etcd-bundle:v0\.9\.4@sha256:/);
  });
  after(async () => {
    await open?.stop();
  });

  test('build is deterministic: the same bundle directory gives the same digest', async () => {
    assert.equal(buildBundleImage(bundleDir, { tag: 'again', layoutDir: join(work, 'layout2') }).digest, digest);
    assert.notEqual(buildBundleImage(bundleDir, { tag: 'labelled', layoutDir: join(work, 'layout2'), labels: { extra: 'x' } }).digest, digest);
  });

  test('pull by tag, then by digest: same files, labels from annotations.yaml; the second pull is served by the cache', async () => {
    const cache = join(work, 'cache-tag');
    const first = await kplane(['bundle', 'pull', ref, '--cache-dir', cache]);
    assert.equal(first.code, 0, first.stderr);
    const img = JSON.parse(first.stdout) as { digest: string; root: string; labels: Record<string, string> };
    assert.equal(img.digest, digest);
    assert.equal(img.labels['operators.operatorframework.io.bundle.package.v1'], 'etcd');
    assert.equal(img.labels['operators.operatorframework.io.bundle.channel.default.v1'], 'stable');
    assert.equal(img.labels['operators.operatorframework.io.bundle.mediatype.v1'], 'registry+v1');
    assert.deepEqual(readdirSync(img.root).sort(), ['manifests', 'metadata']);
    assert.equal(readFileSync(join(img.root, 'manifests', 'etcdoperator.v0.9.4.clusterserviceversion.yaml'), 'utf8'), CSV);
    assert.equal(readFileSync(join(img.root, 'metadata', 'annotations.yaml'), 'utf8'), ANNOTATIONS);
    assert.ok((await blobGets(open)).length >= 2, 'the first pull downloads config and layer');

    const before = (await open.requests()).length;
    const byTag = await pullImage(ref, { cacheDir: cache });
    const second = (await open.requests()).slice(before);
    assert.deepEqual(
      second.filter((q) => q.path.includes('/blobs/')),
      [],
      'no blob requests on a cache hit',
    );
    assert.ok(
      second.some((q) => q.path.endsWith('/manifests/v0.9.4')),
      'a tag is still resolved by the registry',
    );
    assert.equal(byTag.root, img.root);

    const mark = (await open.requests()).length;
    const byDigest = await pullImage(`${open.host}/operators/etcd-bundle@${digest}`, { cacheDir: cache });
    assert.equal(byDigest.digest, digest);
    assert.deepEqual((await open.requests()).slice(mark), [], 'a digest reference with everything cached needs no request at all');
  });

  test('pull by digest into --output with a fresh cache; plain progress shows bytes per layer', async () => {
    const out = join(work, 'unpacked');
    const r = await kplane([
      'bundle',
      'pull',
      `${open.host}/operators/etcd-bundle@${digest}`,
      '--cache-dir',
      join(work, 'cache-digest'),
      '--output',
      out,
      '--progress',
      'plain',
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(join(out, 'manifests', 'etcdclusters.etcd.database.coreos.com.crd.yaml'), 'utf8'), CRD);
    assert.deepEqual(
      readdirSync(work).filter((n) => n.startsWith('unpacked.tmp-')),
      [],
      'no scratch directory left beside --output',
    );
    await assert.rejects(
      pullImage(ref, { dest: out, cacheDir: join(work, 'cache-digest') }),
      /cannot unpack .* into .*unpacked: the directory is not empty; give a new or empty one/,
    );
    assert.match(r.stderr, /^Pulling .*etcd-bundle@sha256:[a-f0-9]{64} \(sha256:[a-f0-9]{12}\): 1 layer, \d+ B\n/);
    assert.match(r.stderr, /^sha256:[a-f0-9]{12} {2}(\d+) B \/ \1 B {2}done$/m);
    // Not a terminal and no --progress: nothing on stderr.
    const quiet = await kplane(['bundle', 'pull', ref, '--cache-dir', join(work, 'cache-quiet')]);
    assert.equal(quiet.code, 0, quiet.stderr);
    assert.equal(quiet.stderr, '');
  });

  test('skopeo inspects what we pushed; umoci and our puller read the layouts', async () => {
    const inspect = await run(tools.skopeo, ['inspect', '--tls-verify=false', `docker://${ref}`]);
    assert.equal(inspect.code, 0, inspect.stderr);
    const info = JSON.parse(inspect.stdout) as { Digest: string; Labels: Record<string, string>; Architecture: string; Os: string; Layers: string[] };
    assert.equal(info.Digest, digest);
    assert.equal(info.Labels['operators.operatorframework.io.bundle.channels.v1'], 'alpha,stable');
    assert.equal(info.Os, 'linux');
    assert.equal(info.Architecture, 'amd64');
    assert.equal(info.Layers.length, 1);

    // umoci unpacks our layout (it checks every digest and the layout structure).
    const bundle = join(work, 'umoci-bundle');
    const unpack = await run(tools.umoci, ['unpack', '--rootless', '--image', `${join(work, 'layout')}:${ref}`, bundle]);
    assert.equal(unpack.code, 0, unpack.stderr);
    assert.equal(readFileSync(join(bundle, 'rootfs', 'manifests', 'etcdoperator.v0.9.4.clusterserviceversion.yaml'), 'utf8'), CSV);

    // skopeo copies the image from the registry into its own OCI layout; we pull from that.
    const skopeoLayout = join(work, 'skopeo-layout');
    const copy = await run(tools.skopeo, ['copy', '--insecure-policy', '--src-tls-verify=false', `docker://${ref}`, `oci:${skopeoLayout}:v1`]);
    assert.equal(copy.code, 0, copy.stderr);
    const fromLayout = await kplane(['bundle', 'pull', `oci:${skopeoLayout}:v1`, '--cache-dir', join(work, 'cache-layout')]);
    assert.equal(fromLayout.code, 0, fromLayout.stderr);
    const img = JSON.parse(fromLayout.stdout) as { root: string; labels: Record<string, string> };
    assert.equal(img.labels['operators.operatorframework.io.bundle.package.v1'], 'etcd');
    assert.equal(readFileSync(join(img.root, 'metadata', 'annotations.yaml'), 'utf8'), ANNOTATIONS);
    await assert.rejects(pullImage(`oci:${skopeoLayout}:v2`, { cacheDir: join(work, 'cache-layout') }), /has no image named "v2" \(it has: v1\)/);
  });

  test('a bundle image built by umoci (two layers, labels by umoci config), pushed by skopeo and by us, pulls the same', async () => {
    const layout = join(work, 'umoci-layout');
    const image = `${layout}:v1`;
    const steps: string[][] = [
      ['init', '--layout', layout],
      ['new', '--image', image],
      ['insert', '--rootless', '--image', image, join(bundleDir, 'manifests'), '/manifests'],
      ['insert', '--rootless', '--image', image, join(bundleDir, 'metadata'), '/metadata'],
      [
        'config',
        '--image',
        image,
        '--config.label',
        'operators.operatorframework.io.bundle.mediatype.v1=registry+v1',
        '--config.label',
        'operators.operatorframework.io.bundle.package.v1=etcd',
      ],
    ];
    for (const args of steps) {
      const r = await run(tools.umoci, args);
      assert.equal(r.code, 0, `umoci ${args.join(' ')}: ${r.stderr}`);
    }
    const bySkopeo = `${open.host}/umoci/etcd-bundle:skopeo`;
    const copy = await run(tools.skopeo, ['copy', '--insecure-policy', '--dest-tls-verify=false', `oci:${image}`, `docker://${bySkopeo}`]);
    assert.equal(copy.code, 0, copy.stderr);
    const byUs = `${open.host}/umoci/etcd-bundle:kplane`;
    const pushed = await pushImage(`oci:${image}`, byUs);
    for (const ref of [bySkopeo, byUs]) {
      const r = await kplane(['bundle', 'pull', ref, '--cache-dir', join(work, 'cache-umoci')]);
      assert.equal(r.code, 0, r.stderr);
      const img = JSON.parse(r.stdout) as { digest: string; root: string; labels: Record<string, string> };
      assert.equal(img.digest, pushed.digest, 'skopeo and kplane push the same manifest');
      assert.equal(img.labels['operators.operatorframework.io.bundle.package.v1'], 'etcd');
      assert.equal(readFileSync(join(img.root, 'manifests', 'etcdclusters.etcd.database.coreos.com.crd.yaml'), 'utf8'), CRD);
      assert.equal(readFileSync(join(img.root, 'metadata', 'annotations.yaml'), 'utf8'), ANNOTATIONS);
    }
  });

  test('a manifest list: the default pull takes linux/amd64, --platform picks another', async () => {
    const listRef = `${open.host}/operators/etcd-bundle:multi`;
    const built = await kplane([
      'bundle',
      'build',
      bundleDir,
      '--tag',
      listRef,
      '--oci-layout',
      join(work, 'layout-multi'),
      '--platforms',
      'linux/arm64,linux/amd64',
      '--push',
    ]);
    assert.equal(built.code, 0, built.stderr);
    const raw = await run(tools.skopeo, ['inspect', '--raw', '--tls-verify=false', `docker://${listRef}`]);
    assert.equal(raw.code, 0, raw.stderr);
    const index = JSON.parse(raw.stdout) as { mediaType: string; manifests: { digest: string; platform: { architecture: string } }[] };
    assert.equal(index.mediaType, MediaType.ociIndex);
    const byArch = Object.fromEntries(index.manifests.map((m) => [m.platform.architecture, m.digest]));

    const cache = join(work, 'cache-multi');
    const amd = await kplane(['bundle', 'pull', listRef, '--cache-dir', cache, '--platform', 'linux/amd64']);
    assert.equal(amd.code, 0, amd.stderr);
    const a = JSON.parse(amd.stdout) as { digest: string; manifestDigest: string; root: string };
    assert.equal(a.digest, built.stdout.trim());
    assert.equal((await pullImage(listRef, { cacheDir: cache, platform: { os: 'linux', architecture: 'amd64' } })).manifestDigest, byArch.amd64);
    assert.equal(a.manifestDigest, byArch.amd64);
    assert.equal(readFileSync(join(a.root, 'metadata', 'annotations.yaml'), 'utf8'), ANNOTATIONS);
    assert.equal((await pullImage(listRef, { cacheDir: cache, platform: { os: 'linux', architecture: 'arm64' } })).manifestDigest, byArch.arm64);
    const none = await pullImage(listRef, { cacheDir: cache, platform: { os: 'windows', architecture: 's390x' } });
    assert.equal(none.manifestDigest, byArch.amd64, 'a platform that is not there falls back to linux/amd64');
  });

  test('Docker schema 2 images and manifest lists (written by skopeo) pull as well', async () => {
    const dir = join(work, 'layout-docker');
    buildBundleImage(bundleDir, { tag: 'single', layoutDir: dir });
    buildBundleImage(bundleDir, {
      tag: 'multi',
      layoutDir: dir,
      platforms: [
        { os: 'linux', architecture: 'arm64' },
        { os: 'linux', architecture: 'amd64' },
      ],
    });
    const cache = join(work, 'cache-docker');
    for (const [tag, all, want] of [
      ['single', [], MediaType.dockerManifest],
      ['multi', ['--all'], MediaType.dockerList],
    ] as const) {
      const dest = `${open.host}/docker/etcd-bundle:${tag}`;
      const copy = await run(tools.skopeo, [
        'copy',
        '--insecure-policy',
        ...all,
        '--format',
        'v2s2',
        '--dest-tls-verify=false',
        `oci:${dir}:${tag}`,
        `docker://${dest}`,
      ]);
      assert.equal(copy.code, 0, copy.stderr);
      const raw = await run(tools.skopeo, ['inspect', '--raw', '--tls-verify=false', `docker://${dest}`]);
      const doc = JSON.parse(raw.stdout) as { mediaType: string; manifests?: { digest: string; platform: { architecture: string } }[] };
      assert.equal(doc.mediaType, want);
      const img = await pullImage(dest, { cacheDir: cache, platform: { os: 'linux', architecture: 'amd64' } });
      assert.equal(img.labels['operators.operatorframework.io.bundle.package.v1'], 'etcd');
      assert.equal(readFileSync(join(img.root, 'manifests', 'etcdoperator.v0.9.4.clusterserviceversion.yaml'), 'utf8'), CSV);
      if (doc.manifests) assert.equal(img.manifestDigest, doc.manifests.find((m) => m.platform.architecture === 'amd64')!.digest);
    }
  });

  test('a catalog image: the FBC under /configs and the configs label', async () => {
    const catRef = `${open.host}/catalogs/dbaas:latest`;
    const built = await kplane(['bundle', 'build', '--catalog', fixtureCatalog(), '--tag', catRef, '--push', '--cache-dir', join(work, 'store')]);
    assert.equal(built.code, 0, built.stderr);
    const img = await pullImage(catRef, { cacheDir: join(work, 'cache-catalog') });
    assert.equal(img.labels['operators.operatorframework.io.index.configs.v1'], '/configs');
    assert.match(readFileSync(join(img.root, 'configs', 'etcd', 'catalog.yaml'), 'utf8'), /schema: olm.package/);
    // Built into the local store, then pushed again from there under another tag.
    const again = await pushImage(catRef, `${open.host}/catalogs/dbaas:v2`, { cacheDir: join(work, 'store') });
    assert.equal(again.digest, built.stdout.trim());
    assert.equal(buildCatalogImage(fixtureCatalog(), { layoutDir: join(work, 'layout-cat') }).digest, again.digest, 'catalog builds are deterministic too');
  });

  test('errors: unknown tag, unreachable registry, bad reference', async () => {
    const missing = await kplane(['bundle', 'pull', `${open.host}/operators/etcd-bundle:v9.9.9`, '--cache-dir', join(work, 'cache-err')]);
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^kplane catalog bundle: image 127\.0\.0\.1:\d+\/operators\/etcd-bundle:v9\.9\.9 not found \(MANIFEST_UNKNOWN: manifest unknown\): check the repository name and tag, and that it was pushed\n$/,
    );

    const port = await closedPort();
    const unreachable = await kplane(['bundle', 'pull', `127.0.0.1:${port}/operators/etcd-bundle:v0.9.4`, '--cache-dir', join(work, 'cache-err')]);
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      new RegExp(
        `cannot reach the registry at http://127\\.0\\.0\\.1:${port} \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\); check the host and port, that the registry is running`,
      ),
    );
    assert.doesNotMatch(unreachable.stderr, /\n {4}at /, 'no stack trace');

    await assert.rejects(
      pullImage(`${open.host}/Operators/etcd:v1`, { cacheDir: join(work, 'cache-err') }),
      /invalid image reference ".*": repository name "Operators\/etcd" must be lowercase/,
    );
  });

  test('build errors: not a bundle directory, bad annotations, missing catalog', async () => {
    const notBundle = join(work, 'not-a-bundle');
    mkdirSync(join(notBundle, 'manifests'), { recursive: true });
    const r = await kplane(['bundle', 'build', notBundle, '--tag', `${open.host}/x/y:z`, '--oci-layout', join(work, 'layout-bad')]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^kplane catalog bundle: .*not-a-bundle is not a bundle directory: .*metadata\/annotations\.yaml is missing \(a registry\+v1 bundle has manifests\/ and metadata\/annotations\.yaml\)\n$/,
    );
    assert.equal(existsSync(join(work, 'layout-bad')), false, 'nothing written');
    mkdirSync(join(notBundle, 'metadata'));
    writeFileSync(join(notBundle, 'metadata', 'annotations.yaml'), 'labels: {}\n');
    assert.throws(() => buildBundleImage(notBundle, { layoutDir: join(work, 'layout-bad') }), /annotations\.yaml: no "annotations" map/);
    writeFileSync(join(notBundle, 'metadata', 'annotations.yaml'), 'annotations: [\n');
    assert.throws(() => buildBundleImage(notBundle, { layoutDir: join(work, 'layout-bad') }), /annotations\.yaml: not valid YAML/);
    assert.throws(
      () => buildCatalogImage(join(work, 'no-such-catalog'), { layoutDir: join(work, 'layout-bad') }),
      /catalog directory .*no-such-catalog does not exist/,
    );
    const usage = await kplane(['bundle', 'build', bundleDir]);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /build needs --tag REF/);
  });

  test('a blob altered in the registry: digest mismatch, nothing cached', async () => {
    const corruptRef = `${open.host}/operators/altered:v1`;
    buildBundleImage(bundleDir, { tag: corruptRef, layoutDir: join(work, 'layout-altered'), labels: { purpose: 'altered' } });
    await pushImage(`oci:${join(work, 'layout-altered')}:${corruptRef}`, corruptRef);
    const layout = OciLayout.open(join(work, 'layout-altered'));
    const manifest = JSON.parse(layout.readBlob(layout.resolve(corruptRef).digest, 'test').toString()) as { layers: { digest: string }[] };
    const layerDigest = manifest.layers[0]!.digest;
    const stored = open.blobPath(layerDigest);
    const good = readFileSync(stored);
    const bytes = Buffer.from(good);
    bytes[bytes.length - 10]! ^= 0xff;
    writeFileSync(stored, bytes);
    try {
      const cache = join(work, 'cache-altered');
      await assert.rejects(
        pullImage(corruptRef, { cacheDir: cache }),
        new RegExp(`layer ${layerDigest} of .*altered:v1: digest mismatch: expected ${layerDigest}, got sha256:[a-f0-9]{64}; .*push the image again`),
      );
      assert.equal(existsSync(join(cache, 'blobs', 'sha256', layerDigest.slice(7))), false);
    } finally {
      // The registry stores each blob once for every repository: the other tests share this layer.
      writeFileSync(stored, good);
    }
  });

  test('a cached layer damaged on disk: reported, dropped from the cache, downloaded afresh by the next pull', async () => {
    const cache = join(work, 'cache-damaged');
    const first = await pullImage(ref, { cacheDir: cache });
    const layout = OciLayout.open(join(work, 'layout'));
    const manifest = JSON.parse(layout.readBlob(layout.resolve(ref).digest, 'test').toString()) as { layers: { digest: string }[] };
    const layerDigest = manifest.layers[0]!.digest;
    const cached = join(cache, 'blobs', 'sha256', layerDigest.slice(7));
    const bytes = readFileSync(cached);
    bytes[20]! ^= 0xff;
    writeFileSync(cached, bytes);
    rmSync(first.root, { recursive: true });
    await assert.rejects(
      pullImage(ref, { cacheDir: cache }),
      new RegExp(`layer ${layerDigest} read from .* hashes to sha256:[a-f0-9]{64}: the stored copy is damaged in the cache .*; it was removed: pull again`),
    );
    assert.equal(existsSync(cached), false);
    const mark = (await open.requests()).length;
    const again = await pullImage(ref, { cacheDir: cache });
    assert.equal(readFileSync(join(again.root, 'metadata', 'annotations.yaml'), 'utf8'), ANNOTATIONS);
    assert.ok(
      (await open.requests()).slice(mark).some((q) => q.path.endsWith(`/blobs/${layerDigest}`)),
      'the layer was downloaded again',
    );

    // A damaged cached manifest is dropped and fetched again, silently: it is only a copy.
    writeFileSync(join(cache, 'blobs', 'sha256', digest.slice(7)), '{"schemaVersion": 2, "damaged": true}');
    rmSync(again.root, { recursive: true });
    const mark2 = (await open.requests()).length;
    const byDigest = await pullImage(`${open.host}/operators/etcd-bundle@${digest}`, { cacheDir: cache });
    assert.equal(byDigest.digest, digest);
    assert.ok(
      (await open.requests()).slice(mark2).some((q) => q.path.endsWith(`/manifests/${digest}`)),
      'the manifest was fetched again',
    );
  });

  test('a layer that is not a gzipped tar: corrupt layer', async () => {
    // Built by hand: the layer's digest is right, its content is not an archive.
    const dir = join(work, 'layout-garbage');
    const layout = OciLayout.openOrInit(dir);
    const garbage = gzipSync(Buffer.from('this is not a tar archive, though it is gzipped '.repeat(20)));
    const notGzip = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from('truncated gzip')]);
    const cases: [string, Buffer, RegExp][] = [
      ['badtar', garbage, /is corrupt: bad tar header checksum at entry 1/],
      ['badgzip', notGzip, /is corrupt: not a valid gzip stream/],
    ];
    for (const [tag, layer] of cases) {
      const config = Buffer.from(
        JSON.stringify({ architecture: 'amd64', os: 'linux', config: { Labels: { a: 'b' } }, rootfs: { type: 'layers', diff_ids: [] } }),
      );
      const manifest = Buffer.from(
        JSON.stringify({
          schemaVersion: 2,
          mediaType: MediaType.ociManifest,
          config: { mediaType: MediaType.ociConfig, digest: layout.writeBlob(config), size: config.length },
          layers: [{ mediaType: MediaType.ociLayerGzip, digest: layout.writeBlob(layer), size: layer.length }],
        }),
      );
      layout.tag({ mediaType: MediaType.ociManifest, digest: layout.writeBlob(manifest), size: manifest.length }, tag);
      await pushImage(`oci:${dir}:${tag}`, `${open.host}/operators/broken:${tag}`);
    }
    for (const [tag, , message] of cases) {
      const cache = join(work, `cache-${tag}`);
      const r = await kplane(['bundle', 'pull', `${open.host}/operators/broken:${tag}`, '--cache-dir', cache]);
      assert.equal(r.code, 1, r.stdout);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /the image is damaged: push it again/);
      assert.doesNotMatch(r.stderr, /\n {4}at /, 'no stack trace');
      assert.deepEqual(readdirSync(join(cache, 'roots')), [], 'no half-unpacked root is left behind');
    }
  });

  test("several layers with whiteouts: our unpacking matches umoci's", async () => {
    const dir = join(work, 'layout-layers');
    const layout = OciLayout.openOrInit(dir);
    const f = (path: string, text: string) => ({ path, type: 'file' as const, content: Buffer.from(text) });
    const layers = [
      [
        { path: 'manifests', type: 'dir' as const },
        f('manifests/a.yaml', 'a1'),
        f('manifests/b.yaml', 'b1'),
        { path: 'metadata', type: 'dir' as const },
        f('metadata/old.yaml', 'old'),
        { path: 'keep', type: 'dir' as const },
        f('keep/k', 'k'),
      ],
      [
        f('manifests/.wh.b.yaml', ''),
        f('manifests/a.yaml', 'a2'),
        f('metadata/new.yaml', 'new'),
        f('metadata/.wh..wh..opq', ''),
        { path: 'link', type: 'symlink' as const, linkpath: 'manifests/a.yaml' },
      ],
      [f('manifests/c.yaml', 'c3'), f('.wh.keep', '')],
    ].map((entries) => {
      const tar = writeTar(entries);
      const gz = gzipSync(tar);
      return {
        desc: { mediaType: MediaType.ociLayerGzip, digest: layout.writeBlob(gz), size: gz.length },
        diffId: `sha256:${createHash('sha256').update(tar).digest('hex')}`,
      };
    });
    const config = Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: { Labels: { layers: '3' } },
        rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      }),
    );
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MediaType.ociManifest,
        config: { mediaType: MediaType.ociConfig, digest: layout.writeBlob(config), size: config.length },
        layers: layers.map((l) => l.desc),
      }),
    );
    layout.tag({ mediaType: MediaType.ociManifest, digest: layout.writeBlob(manifest), size: manifest.length }, 'layers');
    const dest = `${open.host}/operators/layered:v1`;
    await pushImage(`oci:${dir}:layers`, dest);
    const img = await pullImage(dest, { cacheDir: join(work, 'cache-layers') });

    const bundle = join(work, 'umoci-layers');
    const unpack = await run(tools.umoci, ['unpack', '--rootless', '--image', `${dir}:layers`, bundle]);
    assert.equal(unpack.code, 0, unpack.stderr);
    const tree = (root: string): string[] => {
      const out: string[] = [];
      const walk = (rel: string): void => {
        for (const name of readdirSync(join(root, rel)).sort()) {
          const p = rel ? `${rel}/${name}` : name;
          const st = lstatSync(join(root, p));
          if (st.isDirectory()) {
            out.push(`${p}/`);
            walk(p);
          } else if (st.isSymbolicLink()) out.push(`${p} -> ${readlinkSync(join(root, p))}`);
          else out.push(`${p} = ${readFileSync(join(root, p), 'utf8')}`);
        }
      };
      walk('');
      return out;
    };
    const ours = tree(img.root);
    assert.deepEqual(ours, [
      'link -> manifests/a.yaml',
      'manifests/',
      'manifests/a.yaml = a2',
      'manifests/c.yaml = c3',
      'metadata/',
      'metadata/new.yaml = new',
    ]);
    assert.deepEqual(ours, tree(join(bundle, 'rootfs')));
  });

  test('a tar with a path escaping the root is refused', async () => {
    const dir = join(work, 'layout-escape');
    const layout = OciLayout.openOrInit(dir);
    const layer = gzipSync(
      writeTar([
        { path: 'manifests', type: 'dir' },
        { path: 'manifests/../../escaped.txt', type: 'file', content: Buffer.from('x') },
      ]),
    );
    const config = Buffer.from(JSON.stringify({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [] } }));
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        config: { mediaType: MediaType.ociConfig, digest: layout.writeBlob(config), size: config.length },
        layers: [{ mediaType: MediaType.ociLayerGzip, digest: layout.writeBlob(layer), size: layer.length }],
      }),
    );
    layout.tag({ mediaType: MediaType.ociManifest, digest: layout.writeBlob(manifest), size: manifest.length }, 'escape');
    const out = join(work, 'escape-root', 'inner');
    await assert.rejects(
      pullImage(`oci:${dir}:escape`, { dest: out, cacheDir: join(work, 'cache-escape') }),
      /layer entry "manifests\/\.\.\/\.\.\/escaped\.txt" points outside the image root/,
    );
    assert.equal(existsSync(join(work, 'escape-root', 'escaped.txt')), false);
    assert.deepEqual(readdirSync(join(work, 'escape-root')), [], 'a failed pull leaves no --output directory behind');
  });
});

describe('a registry over HTTPS with its own CA', { timeout: 180_000 }, () => {
  test('untrusted certificate: a clear error; with NODE_EXTRA_CA_CERTS: push and pull over HTTPS', async () => {
    ensureTools();
    const bundleDir = existsSync(join(work, 'bundle')) ? join(work, 'bundle') : fixtureBundle();
    const reg = await startRegistry({ tls: true });
    try {
      const ref = `${reg.host}/secure/etcd-bundle:v1`;
      const layout = join(work, 'layout-tls');
      buildBundleImage(bundleDir, { layoutDir: layout, tag: ref });
      const untrusted = await kplane(['bundle', 'push', ref, '--oci-layout', layout]);
      assert.equal(untrusted.code, 1);
      assert.match(
        untrusted.stderr,
        new RegExp(
          `cannot reach the registry at https://${reg.host.replace(/\./g, '\\.')} \\(self-signed certificate\\); its TLS certificate is not trusted: add the registry's CA with NODE_EXTRA_CA_CERTS=FILE`,
        ),
      );
      const env = { NODE_EXTRA_CA_CERTS: reg.caFile! };
      const push = await kplane(['bundle', 'push', ref, '--oci-layout', layout], env);
      assert.equal(push.code, 0, push.stderr);
      const pull = await kplane(['bundle', 'pull', ref, '--cache-dir', join(work, 'cache-tls')], env);
      assert.equal(pull.code, 0, pull.stderr);
      assert.equal((JSON.parse(pull.stdout) as { digest: string }).digest, push.stdout.trim());
      assert.ok(
        (await reg.requests()).some((q) => q.method === 'PUT' && q.path.endsWith('/manifests/v1')),
        'the push went to the TLS registry',
      );

      // render --skip-tls-verify: this registry's clients skip verification, nothing else does
      const cold = join(work, 'cache-tls-render');
      const refused = await kplane(['render', ref, '--cache-dir', cold]);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /its TLS certificate is not trusted/);
      const rendered = await kplane(['render', ref, '--skip-tls-verify', '--cache-dir', cold, '-o', 'json']);
      assert.equal(rendered.code, 0, rendered.stderr);
      assert.equal((JSON.parse(rendered.stdout) as { schema: string; image: string }).image, ref);
      assert.doesNotMatch(rendered.stderr, /NODE_TLS_REJECT_UNAUTHORIZED/, 'verification is not turned off for the whole process');
    } finally {
      await reg.stop();
    }
  });
});

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

describe('catalog images behind basic and token auth', { timeout: 120_000 }, () => {
  const regs: RunningRegistry[] = [];
  after(async () => {
    for (const r of regs) await r.stop();
  });

  test('blob redirects to another host (as to S3 or a CDN) are followed without the registry credentials', async () => {
    ensureTools();
    const bundleDir = existsSync(join(work, 'bundle')) ? join(work, 'bundle') : fixtureBundle();
    const reg = await startRegistry({ auth: 'basic' });
    regs.push(reg);
    const creds = { username: 'tester', password: 'secret' };
    const layout = join(work, 'layout-redirect');
    buildBundleImage(bundleDir, { layoutDir: layout, tag: 'r' });
    await pushImage(`oci:${layout}:r`, `${reg.host}/redirect/etcd-bundle:v1`, { credentials: creds });
    // "storage" serves blobs on another origin; it records what each request carried.
    const seen: { path: string; authorization: string | undefined }[] = [];
    const registryAuth = `Basic ${Buffer.from('tester:secret').toString('base64')}`;
    const storage = createHttpServer((req, res) => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      void fetch(`http://${reg.host}${req.url}`, { headers: { authorization: registryAuth } }).then(async (r) =>
        res.writeHead(r.status).end(Buffer.from(await r.arrayBuffer())),
      );
    });
    // "front" is the registry as clients see it: everything proxied, except blob GETs, which redirect to storage.
    const front = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'GET' && /\/blobs\/sha256:/.test(req.url ?? '')) {
          res.writeHead(307, { location: `http://127.0.0.1:${(storage.address() as AddressInfo).port}${req.url}` }).end();
          return;
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && k !== 'host') headers[k] = v;
        void fetch(`http://${reg.host}${req.url}`, { method: req.method ?? 'GET', headers, ...(chunks.length ? { body: Buffer.concat(chunks) } : {}) }).then(
          async (r) => {
            const out: Record<string, string> = {};
            r.headers.forEach((v, k) => {
              if (k !== 'content-length' && k !== 'transfer-encoding' && k !== 'content-encoding') out[k] = v;
            });
            res.writeHead(r.status, out).end(Buffer.from(await r.arrayBuffer()));
          },
        );
      });
    });
    await new Promise<void>((r) => storage.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    try {
      const host = `127.0.0.1:${(front.address() as AddressInfo).port}`;
      const img = await pullImage(`${host}/redirect/etcd-bundle:v1`, { cacheDir: join(work, 'cache-redirect'), credentials: creds });
      assert.equal(readFileSync(join(img.root, 'manifests', 'etcdoperator.v0.9.4.clusterserviceversion.yaml'), 'utf8'), CSV);
      assert.equal(seen.length, 2, 'config and layer came from storage');
      assert.deepEqual(
        seen.map((x) => x.authorization),
        [undefined, undefined],
        'no credentials went to the other host',
      );
    } finally {
      front.closeAllConnections();
      storage.closeAllConnections();
      await new Promise((r) => front.close(r));
      await new Promise((r) => storage.close(r));
    }
  });

  for (const auth of ['basic', 'token'] as const) {
    test(`${auth} auth: push and pull with credentials (flags and auth file); 401 without or with wrong ones`, async () => {
      ensureTools();
      const bundleDir = existsSync(join(work, 'bundle')) ? join(work, 'bundle') : fixtureBundle();
      const reg = await startRegistry({ auth, identityTokens: { 'kplane-identity-token': 'tester' } });
      regs.push(reg);
      const ref = `${reg.host}/private/etcd-bundle:v1`;
      const noCreds = await kplane(['bundle', 'build', bundleDir, '--tag', ref, '--oci-layout', join(work, `layout-${auth}`), '--push']);
      assert.equal(noCreds.code, 1);
      assert.match(noCreds.stderr, /requires authentication \(401\) and no credentials were found; log in .* or pass --creds USER:PASSWORD/);

      const push = await kplane(['bundle', 'push', ref, '--oci-layout', join(work, `layout-${auth}`), '--creds', 'tester:secret']);
      assert.equal(push.code, 0, push.stderr);

      const noFile = join(work, 'no-such-auth.json');
      await assert.rejects(
        pullImage(ref, { cacheDir: join(work, `cache-${auth}-wrong`), credentials: { username: 'tester', password: 'nope' } }),
        /rejected the credentials for user "tester" \(401\); check the user name and password/,
      );
      await assert.rejects(pullImage(ref, { cacheDir: join(work, `cache-${auth}-anon`), authFile: noFile }), /cannot read the registry auth file/);
      const emptyAuth = join(work, 'empty-auth.json');
      writeFileSync(emptyAuth, '{"auths":{}}');
      await assert.rejects(
        pullImage(ref, { cacheDir: join(work, `cache-${auth}-anon`), authFile: emptyAuth }),
        /requires authentication \(401\) and no credentials were found/,
      );

      // Credentials from a containers auth.json / docker config.json, as skopeo login writes them.
      const authFile = join(work, `auth-${auth}.json`);
      writeFileSync(authFile, JSON.stringify({ auths: { [reg.host]: { auth: Buffer.from('tester:secret').toString('base64') } } }));
      const pulled = await kplane(['bundle', 'pull', ref, '--cache-dir', join(work, `cache-${auth}`)], { REGISTRY_AUTH_FILE: authFile });
      assert.equal(pulled.code, 0, pulled.stderr);
      const img = JSON.parse(pulled.stdout) as { root: string; labels: Record<string, string> };
      assert.equal(img.labels['operators.operatorframework.io.bundle.package.v1'], 'etcd');
      assert.equal(readFileSync(join(img.root, 'manifests', 'etcdoperator.v0.9.4.clusterserviceversion.yaml'), 'utf8'), CSV);

      if (auth === 'token') {
        // An identity (refresh) token in the auth file is traded at the token server (OAuth2 POST).
        const idFile = join(work, 'auth-identity.json');
        writeFileSync(idFile, JSON.stringify({ auths: { [reg.host]: { identitytoken: 'kplane-identity-token' } } }));
        const viaIdentity = await pullImage(ref, { cacheDir: join(work, 'cache-identity'), authFile: idFile });
        assert.equal(viaIdentity.digest, push.stdout.trim());
        writeFileSync(idFile, JSON.stringify({ auths: { [reg.host]: { identitytoken: 'stale' } } }));
        await assert.rejects(
          pullImage(ref, { cacheDir: join(work, 'cache-identity-bad'), authFile: idFile }),
          /rejected the credentials for user "\(identity token\)" \(401\)/,
        );
      }

      // skopeo, given the same credentials, sees the image we pushed.
      const inspect = await run(tools.skopeo, ['inspect', '--tls-verify=false', '--creds', 'tester:secret', `docker://${ref}`]);
      assert.equal(inspect.code, 0, inspect.stderr);
      assert.equal((JSON.parse(inspect.stdout) as { Digest: string }).Digest, push.stdout.trim());
    });
  }
});
