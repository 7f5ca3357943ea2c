import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isOciError } from './errors.js';
import { formatReference, isLoopbackHost, parseReference } from './reference.js';

const D = `sha256:${'a'.repeat(64)}`;

test('registry references: host, repository, tag and digest as docker parses them', () => {
  assert.deepEqual(parseReference('quay.io/operatorhubio/etcd:v0.9.4'), { kind: 'registry', host: 'quay.io', repository: 'operatorhubio/etcd', tag: 'v0.9.4' });
  assert.deepEqual(parseReference('127.0.0.1:5000/ns/etcd'), { kind: 'registry', host: '127.0.0.1:5000', repository: 'ns/etcd' });
  assert.deepEqual(parseReference(`localhost/etcd@${D}`), { kind: 'registry', host: 'localhost', repository: 'etcd', digest: D });
  assert.deepEqual(parseReference(`r.io:443/a/b/c:t1@${D}`), { kind: 'registry', host: 'r.io:443', repository: 'a/b/c', tag: 't1', digest: D });
  assert.deepEqual(parseReference('busybox'), { kind: 'registry', host: 'docker.io', repository: 'library/busybox' });
  assert.deepEqual(parseReference('someone/thing:1.0'), { kind: 'registry', host: 'docker.io', repository: 'someone/thing', tag: '1.0' });
  assert.equal(formatReference(parseReference(`quay.io/a/b:v1@${D}`)), `quay.io/a/b:v1@${D}`);
});

test('bad references say why', () => {
  const cases: [string, RegExp][] = [
    ['quay.io/Upper/x:v1', /repository name "Upper\/x" must be lowercase/],
    ['quay.io/x:bad tag', /is not a valid tag/],
    ['quay.io/x@sha256:abc', /is not a digest|not a sha256 digest/],
    ['', /empty/],
    ['quay.io/', /no repository name|must be lowercase/],
  ];
  for (const [ref, msg] of cases) {
    assert.throws(
      () => parseReference(ref),
      (e: unknown) => isOciError(e, 'BAD_REFERENCE') && msg.test(e.message),
      ref,
    );
  }
});

test('oci layout references split at the first colon, as containers/image does', () => {
  assert.deepEqual(parseReference('oci:/tmp/layout'), { kind: 'layout', dir: '/tmp/layout' });
  assert.deepEqual(parseReference('oci:/tmp/layout:v1'), { kind: 'layout', dir: '/tmp/layout', tag: 'v1' });
  assert.deepEqual(parseReference('oci:out:127.0.0.1:5000/ns/x:v1'), { kind: 'layout', dir: 'out', tag: '127.0.0.1:5000/ns/x:v1' });
});

test('loopback hosts', () => {
  for (const h of ['localhost', 'localhost:5000', '127.0.0.1:5000', '127.1.2.3', '[::1]:5000']) assert.equal(isLoopbackHost(h), true, h);
  for (const h of ['quay.io', '10.0.0.1:5000', 'localhost.example.com']) assert.equal(isLoopbackHost(h), false, h);
});
