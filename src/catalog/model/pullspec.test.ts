// Pull-spec checks against the docker reference grammar and go-digest (cases from
// distribution/reference's normalize and reference tests).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { pullSpecError } from './pullspec.js';

const hex64 = 'a'.repeat(64);

test('valid references', () => {
  for (const ref of [
    'foo-bundle:v0.1.0',
    'busybox',
    'library/busybox:latest',
    'docker.io/library/busybox',
    'quay.io/operator-framework/foo-bundle@sha256:' + hex64,
    'quay.io/operator-framework/foo-bundle:v0.1.0@sha256:' + hex64,
    'localhost:5000/a/b_c/d__e/f-g---h:tag',
    '127.0.0.1:5000/bundles/db:1.2.3',
    '[::1]:5000/bundles/db:1.2.3',
    'registry.example.com/x@sha512:' + 'b'.repeat(128),
    'Registry.Example.com/x:1',
  ]) {
    assert.equal(pullSpecError(ref), undefined, ref);
  }
});

test('invalid references, with the library messages', () => {
  const cases: [string, string][] = [
    ['', 'invalid reference format'],
    [hex64, `invalid repository name (${hex64}), cannot specify 64-byte hexadecimal strings`],
    ['quay.io/Foo/bar:v1', 'invalid reference format: repository name must be lowercase'],
    ['Foo', 'invalid reference format: repository name must be lowercase'],
    ['quay.io/foo/bar:v1@ssha256:' + hex64, 'unsupported digest algorithm'],
    ['quay.io/foo/bar@md5:abcd1234abcd1234abcd1234abcd1234', 'unsupported digest algorithm'],
    ['quay.io/foo/bar@sha256:abcd1234abcd1234abcd1234abcd1234', 'invalid checksum digest length'],
    ['quay.io/foo/bar@sha256:' + 'A'.repeat(64), 'invalid checksum digest format'],
    ['quay.io/foo/bar:-tag', 'invalid reference format'],
    ['quay.io/foo//bar', 'invalid reference format'],
    ['quay.io/foo/bar:' + 't'.repeat(129), 'invalid reference format'],
    ['quay.io/' + 'a'.repeat(250), 'repository name must not be more than 255 characters'],
    ['quay.io/foo bar', 'invalid reference format'],
  ];
  for (const [ref, message] of cases) assert.equal(pullSpecError(ref), message, ref);
});
