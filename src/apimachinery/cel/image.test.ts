import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertCelFails as fails, celEvaluate as evaluate } from '../../../test/support/cel.js';

const DIGEST = 'sha256:6aefddb645ee6963afd681b1845c661d0ea4c3b20ab9db86d9e753b203d385f2';
const REPO = 'registry.k8s.io/kube-apiserver-arm64';

describe('the image library (kube 1.33+, go-containerregistry references)', () => {
  it("reads references as kube's tests do", () => {
    assert.equal(evaluate(`isImage('${REPO}:latest')`), true);
    assert.equal(evaluate(`isImage('${REPO}:@')`), false);
    assert.equal(evaluate(`image('${REPO}').containsDigest()`), false);
    assert.equal(evaluate(`image('${REPO}:latest').containsDigest()`), false);
    assert.equal(evaluate(`image('${REPO}@${DIGEST}').containsDigest()`), true);
    assert.equal(evaluate(`image('${REPO}:latest@${DIGEST}').containsDigest()`), true);
    assert.equal(evaluate(`image('${REPO}').registry()`), 'registry.k8s.io');
    assert.equal(evaluate("image('kube-apiserver-arm64:testtag').registry()"), 'index.docker.io');
    assert.equal(evaluate(`image('${REPO}').registry().matches('(registry.k8s.io|ghcr.io)')`), true);
    assert.equal(evaluate(`image('${REPO}').repository()`), 'kube-apiserver-arm64');
    assert.equal(evaluate(`image('${REPO}:testtag').identifier()`), 'testtag');
    assert.equal(evaluate(`image('${REPO}@${DIGEST}').identifier()`), DIGEST);
    assert.equal(evaluate(`image('${REPO}:latest@${DIGEST}').identifier()`), DIGEST);
    assert.equal(evaluate(`image('${REPO}').identifier()`), 'latest');
    assert.equal(evaluate(`image('${REPO}:testtag').tag()`), 'testtag');
    assert.equal(evaluate(`image('${REPO}').tag()`), 'latest');
    assert.equal(evaluate(`image('${REPO}@${DIGEST}').tag()`), '');
    assert.equal(evaluate(`image('${REPO}').digest()`), '');
    assert.equal(evaluate(`image('${REPO}:testtag').digest()`), '');
    assert.equal(evaluate(`image('${REPO}:latest@${DIGEST}').digest()`), DIGEST);
  });

  it("Docker Hub's one-part names, registries with ports, what is refused", () => {
    assert.equal(evaluate("image('nginx').repository()"), 'library/nginx');
    assert.equal(evaluate("image('docker.io/nginx:1.27').registry()"), 'index.docker.io');
    assert.equal(evaluate("image('localhost:5000/team/app:v1').registry()"), 'localhost:5000');
    assert.equal(evaluate("image('localhost:5000/team/app:v1').repository()"), 'team/app');
    assert.equal(evaluate("isImage('Nginx')"), false);
    assert.equal(evaluate("isImage('https://registry.k8s.io/pause')"), false);
    assert.equal(evaluate(`isImage('${REPO}@sha256:abc')`), false);
    fails(`image('${REPO}:@')`, `could not parse reference: ${REPO}:@`);
  });
});
