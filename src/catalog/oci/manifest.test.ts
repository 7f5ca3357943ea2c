import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isOciError } from './errors.js';
import { MediaType, parseManifest, selectPlatform } from './manifest.js';
import type { Descriptor, ImageIndex } from './manifest.js';

const d = (n: number, platform?: Descriptor['platform'], mediaType: string = MediaType.ociManifest): Descriptor => ({
  mediaType,
  digest: `sha256:${String(n).repeat(64).slice(0, 64)}`,
  size: 100,
  ...(platform ? { platform } : {}),
});

test('parseManifest: OCI and Docker manifests and indexes, media type from the body or the header', () => {
  const manifest = { schemaVersion: 2, config: d(1), layers: [d(2)] };
  assert.equal(parseManifest(Buffer.from(JSON.stringify(manifest)), undefined, 'x').kind, 'manifest', 'OCI manifests may omit mediaType');
  assert.equal(parseManifest(Buffer.from(JSON.stringify(manifest)), `${MediaType.dockerManifest}; charset=utf-8`, 'x').mediaType, MediaType.dockerManifest);
  const index = { schemaVersion: 2, mediaType: MediaType.dockerList, manifests: [d(3, { os: 'linux', architecture: 'amd64' })] };
  assert.equal(parseManifest(Buffer.from(JSON.stringify(index)), 'application/json', 'x').kind, 'index');
  assert.equal(parseManifest(Buffer.from(JSON.stringify({ schemaVersion: 2, manifests: [] })), undefined, 'x').kind, 'index');
});

test('parseManifest: what it refuses, and why', () => {
  const cases: [string, RegExp][] = [
    ['{not json', /img: the manifest is not JSON/],
    [JSON.stringify({ schemaVersion: 1, name: 'x', fsLayers: [] }), /Docker schema 1 manifests are not supported; push the image again with a current client/],
    [
      JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.cncf.helm.config.v1+json' }),
      /unsupported manifest media type "application\/vnd\.cncf\.helm\.config\.v1\+json"/,
    ],
    [JSON.stringify({ schemaVersion: 2, config: { digest: 'x' }, layers: [] }), /img \(config\): a descriptor lacks mediaType, digest or size/],
    [JSON.stringify({ schemaVersion: 2, config: d(1) }), /the manifest has no layers list/],
  ];
  for (const [body, msg] of cases)
    assert.throws(
      () => parseManifest(Buffer.from(body), undefined, 'img'),
      (e: unknown) => isOciError(e, 'UNSUPPORTED') && msg.test(e.message),
      body,
    );
});

test('selectPlatform: exact match, variant, linux/amd64 fallback, attestations skipped, clear error', () => {
  const index: ImageIndex = {
    schemaVersion: 2,
    manifests: [
      d(1, { os: 'linux', architecture: 'arm64', variant: 'v8' }),
      d(2, { os: 'linux', architecture: 'amd64' }),
      d(3, { os: 'linux', architecture: 's390x' }),
      d(4, { os: 'unknown', architecture: 'unknown' }), // buildkit attestation manifests look like this
    ],
  };
  assert.equal(selectPlatform(index, { os: 'linux', architecture: 's390x' }, 'x').digest, d(3).digest);
  assert.equal(selectPlatform(index, { os: 'linux', architecture: 'arm64' }, 'x').digest, d(1).digest);
  assert.equal(selectPlatform(index, { os: 'linux', architecture: 'arm64', variant: 'v8' }, 'x').digest, d(1).digest);
  assert.equal(selectPlatform(index, { os: 'linux', architecture: 'ppc64le' }, 'x').digest, d(2).digest, 'falls back to linux/amd64');
  const armOnly: ImageIndex = { schemaVersion: 2, manifests: [d(1, { os: 'linux', architecture: 'arm64' }), d(5, undefined, 'application/vnd.in-toto+json')] };
  assert.throws(
    () => selectPlatform(armOnly, { os: 'linux', architecture: 'ppc64le' }, 'quay.io/x:y'),
    (e: unknown) =>
      isOciError(e, 'UNSUPPORTED') &&
      e.message === 'quay.io/x:y: no image for linux/ppc64le in the image index (it has: linux/arm64); pick one with --platform',
  );
  assert.equal(
    selectPlatform({ schemaVersion: 2, manifests: [d(6)] }, { os: 'linux', architecture: 'arm64' }, 'x').digest,
    d(6).digest,
    'a lone platform-less image',
  );
});
