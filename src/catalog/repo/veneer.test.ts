import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { addBundleToVeneer, checkOperatorName, newVeneer } from './veneer.js';

test('newVeneer lists the image under each chosen channel', () => {
  const v: unknown = parse(newVeneer({ image: 'r.io/a:v1', channels: ['candidate', 'stable'] }));
  assert.deepEqual(v, {
    Schema: 'olm.semver',
    GenerateMajorChannels: true,
    GenerateMinorChannels: false,
    Candidate: { Bundles: [{ Image: 'r.io/a:v1' }] },
    Stable: { Bundles: [{ Image: 'r.io/a:v1' }] },
  });
});

test('addBundleToVeneer keeps comments, matches keys case-insensitively, refuses duplicates', () => {
  const src = '# my operator\nschema: olm.semver\ncandidate:\n  bundles:\n  - image: r.io/a:v1 # first\n';
  const out = addBundleToVeneer(src, 'v.yaml', 'r.io/a:v2', ['candidate', 'fast']);
  assert.match(out, /# my operator/);
  assert.match(out, /# first/);
  assert.deepEqual(parse(out), {
    schema: 'olm.semver',
    candidate: { bundles: [{ image: 'r.io/a:v1' }, { image: 'r.io/a:v2' }] },
    Fast: { Bundles: [{ Image: 'r.io/a:v2' }] },
  });
  assert.throws(() => addBundleToVeneer(out, 'v.yaml', 'r.io/a:v1', ['candidate']), { message: 'v.yaml: image r.io/a:v1 is already in Candidate' });
  assert.throws(() => addBundleToVeneer('schema: olm.template.basic\n', 'v.yaml', 'x', ['fast']), /not a semver template/);
  assert.throws(() => addBundleToVeneer('a: [', 'v.yaml', 'x', ['fast']), { name: 'VeneerEditError', message: /^v\.yaml: / });
});

test('checkOperatorName', () => {
  checkOperatorName('pxc-operator');
  for (const bad of ['', 'PXC', '../x', 'a/b', '-a']) assert.throws(() => checkOperatorName(bad), /invalid operator name/);
});
