// convertToModel / convertFromModel against operator-registry's declcfg_to_model_test.go and
// model_to_declcfg_test.go cases (same inputs, same expected messages).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { DeclarativeConfig } from '../declcfg/types.js';
import { convertFromModel, convertToModel } from './convert.js';
import { ModelConversionError, ValidationError } from './errors.js';
import {
  config,
  newTestBundle,
  newTestChannel,
  newTestPackage,
  packageProperty,
  svgSmallCircle,
  testBundleImage,
  testBundleName,
  validDeclarativeConfig,
  withNoBundleImage,
  withNoProperties,
} from './testdata/fixtures.js';

const foo = (): ReturnType<typeof newTestPackage> => newTestPackage('foo', 'alpha', svgSmallCircle);
const fooAlpha = (...names: string[]): ReturnType<typeof newTestChannel> => newTestChannel('foo', 'alpha', ...names.map((name) => ({ name })));
const owner = [{ type: 'owner', value: { group: 'abc.com', name: 'admin' } }];

interface Case {
  name: string;
  cfg: DeclarativeConfig;
  /** the exact message, or undefined when conversion must succeed */
  error?: string;
  errorContains?: string;
}

const cases: Case[] = [
  {
    name: 'Error/PackageNoName',
    error: 'config contains package with no name',
    cfg: config({ packages: [newTestPackage('', 'alpha', svgSmallCircle)], bundles: [{ schema: 'olm.bundle', name: 'foo.v0.1.0', package: '', image: '' }] }),
  },
  {
    name: 'Error/BundleMissingPackageName',
    error: 'package name must be set for bundle "foo.v0.1.0"',
    cfg: config({ packages: [foo()], bundles: [{ schema: 'olm.bundle', name: 'foo.v0.1.0', package: '', image: '' }] }),
  },
  {
    name: 'Error/BundleUnknownPackage',
    error: 'unknown package "bar" for bundle "bar.v0.1.0"',
    cfg: config({ packages: [foo()], bundles: [newTestBundle('bar', '0.1.0')] }),
  },
  {
    name: 'Error/BundleMissingChannel',
    error: 'package "foo", bundle "foo.v0.1.0" not found in any channel entries',
    cfg: config({ packages: [foo()], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    // opm's case feeds the raw text "{"; loaded blobs are parsed JSON, so the reachable failure is a type mismatch
    name: 'Error/BundleInvalidProperties',
    error:
      'parse properties for bundle "foo.v0.1.0": parse property[0] of type "olm.package": json: cannot unmarshal string into Go value of type property.Package',
    cfg: config({
      packages: [foo()],
      bundles: [newTestBundle('foo', '0.1.0', (b) => (b.properties = [packageProperty('foo', '0.1.0'), { type: 'olm.package', value: 'x' }]))],
    }),
  },
  {
    name: 'Error/BundlePackageMismatch',
    error: 'package "foo" does not match "olm.package" property "foooperator"',
    cfg: config({ packages: [foo()], bundles: [newTestBundle('foo', '0.1.0', (b) => (b.properties = [packageProperty('foooperator', '0.1.0')]))] }),
  },
  {
    name: 'Error/BundleInvalidVersion',
    error: 'error parsing bundle "foo.v0.1.0" version "0.1.0.1": Invalid character(s) found in patch number "0.1"',
    cfg: config({ packages: [foo()], bundles: [newTestBundle('foo', '0.1.0', (b) => (b.properties = [packageProperty('foo', '0.1.0.1')]))] }),
  },
  {
    name: 'Error/BundleMissingVersion',
    error: 'error parsing bundle "foo.v" version "": Version string empty',
    cfg: config({ packages: [foo()], bundles: [newTestBundle('foo', '')] }),
  },
  {
    name: 'Error/PackageMissingDefaultChannel',
    error: 'invalid index:\n└── invalid package "foo":\n    └── default channel must be set',
    cfg: config({
      packages: [newTestPackage('foo', '', svgSmallCircle)],
      channels: [newTestChannel('foo', 'bar', { name: testBundleName('foo', '0.1.0') })],
      bundles: [newTestBundle('foo', '0.1.0')],
    }),
  },
  {
    name: 'Error/PackageNonExistentDefaultChannel',
    error: 'invalid index:\n└── invalid package "foo":\n    └── invalid channel "bar":\n        └── channel must contain at least one bundle',
    cfg: config({ packages: [newTestPackage('foo', 'bar', svgSmallCircle)], channels: [newTestChannel('foo', 'bar')] }),
  },
  {
    name: 'Error/BundleMissingPackageProperty',
    error: 'package "foo" bundle "foo.v0.1.0" must have exactly 1 "olm.package" property, found 0',
    cfg: config({ packages: [foo()], bundles: [newTestBundle('foo', '0.1.0', withNoProperties)] }),
  },
  {
    name: 'Error/BundleMultiplePackageProperty',
    error: 'package "foo" bundle "foo.v0.1.0" must have exactly 1 "olm.package" property, found 2',
    cfg: config({
      packages: [foo()],
      bundles: [newTestBundle('foo', '0.1.0', (b) => (b.properties = [packageProperty('foo', '0.1.0'), packageProperty('foo', '0.1.0')]))],
    }),
  },
  {
    name: 'Success/BundleWithDataButMissingImage',
    cfg: config({ packages: [foo()], channels: [fooAlpha(testBundleName('foo', '0.1.0'))], bundles: [newTestBundle('foo', '0.1.0', withNoBundleImage)] }),
  },
  {
    name: 'Error/ChannelEntryWithoutBundle',
    error: 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.1.0]',
    cfg: config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0')] }),
  },
  {
    name: 'Error/BundleWithoutChannelEntry',
    error: 'package "foo", bundle "foo.v0.2.0" not found in any channel entries',
    cfg: config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.2.0')] }),
  },
  {
    name: 'Error/ChannelMissingName',
    error: 'package "foo" contains channel with no name',
    cfg: config({ packages: [foo()], channels: [newTestChannel('foo', '', { name: 'foo.v0.1.0' })], bundles: [newTestBundle('foo', '0.2.0')] }),
  },
  {
    name: 'Error/ChannelMissingPackageName',
    error: 'unknown package "" for channel "alpha"',
    cfg: config({ packages: [foo()], channels: [newTestChannel('', 'alpha', { name: 'foo.v0.1.0' })], bundles: [newTestBundle('foo', '0.2.0')] }),
  },
  {
    name: 'Error/ChannelNonExistentPackage',
    error: 'unknown package "non-existent" for channel "alpha"',
    cfg: config({ packages: [foo()], channels: [newTestChannel('non-existent', 'alpha', { name: 'foo.v0.1.0' })], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Error/ChannelDuplicateEntry',
    error: 'invalid package "foo", channel "alpha": duplicate entry "foo.v0.1.0"',
    cfg: config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0', 'foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Error/DuplicatePackage',
    error: 'duplicate package "foo"',
    cfg: config({ packages: [foo(), foo()], channels: [fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Error/PackageBreaksRFC1123',
    error: 'invalid package name "foo.bar": [must not contain dots]',
    cfg: config({
      packages: [newTestPackage('foo.bar', 'alpha', svgSmallCircle)],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
    }),
  },
  {
    name: 'Error/DuplicateChannel',
    error: 'package "foo" has duplicate channel "alpha"',
    cfg: config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0'), fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Error/DuplicateBundle',
    error: 'package "foo" has duplicate bundle "foo.v0.1.0"',
    cfg: config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0'), newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Success/ValidModel',
    cfg: config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Success/ValidModelWithChannelProperties',
    cfg: config({
      packages: [foo()],
      channels: [{ ...fooAlpha('foo.v0.1.0'), properties: [{ type: 'user', value: { group: 'xyz.com', name: 'account' } }] }],
      bundles: [newTestBundle('foo', '0.1.0')],
    }),
  },
  {
    name: 'Success/ValidModelWithPackageProperties',
    cfg: config({ packages: [{ ...foo(), properties: owner }], channels: [fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0')] }),
  },
  {
    name: 'Error/Deprecation/UnspecifiedPackage',
    error: 'package name must be set for deprecation item 0',
    cfg: config({
      packages: [{ ...foo(), properties: owner }],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [{ schema: 'olm.deprecations', package: '', entries: [] }],
    }),
  },
  {
    name: 'Error/Deprecation/OutOfBoundsBundle',
    error: 'cannot deprecate bundle "foo.v2.0.0" for package "foo": bundle not found',
    cfg: config({
      packages: [{ ...foo(), properties: owner }],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [
        {
          schema: 'olm.deprecations',
          package: 'foo',
          entries: [{ reference: { schema: 'olm.bundle', name: 'foo.v2.0.0' }, message: "foo.v2.0.0 doesn't exist in the first place" }],
        },
      ],
    }),
  },
  {
    name: 'Error/Deprecation/OutOfBoundsChannel',
    error: 'cannot deprecate channel "beta" for package "foo": channel not found',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.channel', name: 'beta' }, message: 'gone' }] }],
    }),
  },
  {
    name: 'Error/Deprecation/PackageWithName',
    error: 'package name must be empty for deprecated package "foo" (specified "foo")',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.package', name: 'foo' }, message: 'gone' }] }],
    }),
  },
  {
    name: 'Error/Deprecation/MissingRefSchema',
    error: 'schema must be set for deprecation entry [0] for package "foo"',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: '', name: 'x' }, message: 'gone' }] }],
    }),
  },
  {
    name: 'Error/Deprecation/OutOfBoundsPackage',
    error: 'cannot apply deprecations to an unknown package "nyarl"',
    cfg: config({
      packages: [{ ...foo(), properties: owner }],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [{ schema: 'olm.deprecations', package: 'nyarl', entries: [] }],
    }),
  },
  {
    name: 'Error/Deprecation/MultiplePerPackage',
    error: 'expected a maximum of one deprecation per package: "foo"',
    cfg: config({
      packages: [{ ...foo(), properties: owner }],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [
        { schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.channel', name: 'alpha' }, message: 'no more alpha channel' }] },
        {
          schema: 'olm.deprecations',
          package: 'foo',
          entries: [{ reference: { schema: 'olm.bundle', name: 'foo.v0.1.0' }, message: 'foo.v0.1.0 is dead.  do another thing' }],
        },
      ],
    }),
  },
  {
    name: 'Error/Deprecation/BadRefSchema',
    error:
      'cannot deprecate object declcfg.PackageScopedReference{Schema:"badschema", Name:"foo.v2.0.0"} referenced by entry 0 for package "foo": object schema unknown',
    cfg: config({
      packages: [{ ...foo(), properties: owner }],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [
        {
          schema: 'olm.deprecations',
          package: 'foo',
          entries: [{ reference: { schema: 'badschema', name: 'foo.v2.0.0' }, message: "foo.v2.0.0 doesn't exist in the first place" }],
        },
      ],
    }),
  },
  {
    name: 'Error/Deprecation/DuplicateRef',
    error: 'duplicate deprecation entry declcfg.PackageScopedReference{Schema:"olm.bundle", Name:"foo.v0.1.0"} for package "foo"',
    cfg: config({
      packages: [{ ...foo(), properties: owner }],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [
        {
          schema: 'olm.deprecations',
          package: 'foo',
          entries: [
            { reference: { schema: 'olm.bundle', name: 'foo.v0.1.0' }, message: 'foo.v0.1.0 is bad' },
            { reference: { schema: 'olm.bundle', name: 'foo.v0.1.0' }, message: 'foo.v0.1.0 is bad' },
          ],
        },
      ],
    }),
  },
  {
    name: 'Error/Deprecation/EmptyMessage',
    error: 'invalid index:\n└── invalid package "foo":\n    └── invalid deprecation: message must be set',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0')],
      deprecations: [{ schema: 'olm.deprecations', package: 'foo', entries: [{ reference: { schema: 'olm.package' }, message: '' }] }],
    }),
  },
  {
    name: 'Error/InvalidReleaseVersion',
    error: 'error parsing bundle "foo.v0.1.0" release version "!!!": invalid release "!!!": segment 0: Invalid character(s) found in prerelease "!!!"',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [newTestBundle('foo', '0.1.0', (b) => (b.properties = [packageProperty('foo', '0.1.0', '!!!')]))],
    }),
  },
  {
    name: 'Error/InvalidBundleNormalizedName',
    error:
      'invalid index:\n└── invalid package "foo":\n    └── invalid channel "alpha":\n        └── invalid bundle "foo.v0.1.0-alpha.1.0.0":\n            └── name "foo.v0.1.0-alpha.1.0.0" does not match normalized name "foo-v0.1.0-alpha.1.0.0"',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0-alpha.1.0.0')],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.properties = [packageProperty('foo', '0.1.0', 'alpha.1.0.0')];
          b.name = 'foo.v0.1.0-alpha.1.0.0';
        }),
      ],
    }),
  },
  {
    name: 'Success/ValidBundleReleaseVersion',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo-v0.1.0-alpha.1.0.0')],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.properties = [packageProperty('foo', '0.1.0', 'alpha.1.0.0')];
          b.name = 'foo-v0.1.0-alpha.1.0.0';
        }),
      ],
    }),
  },
  {
    name: 'Error/BundleReleaseWithBuildMetadata',
    error:
      'invalid index:\n└── invalid package "foo":\n    └── invalid channel "alpha":\n        └── invalid bundle "foo.v0.1.0+alpha.1.0.0-0.0.1":\n            ├── name "foo.v0.1.0+alpha.1.0.0-0.0.1" does not match normalized name "foo-v0.1.0+alpha.1.0.0-0.0.1"\n            └── cannot use build metadata in version with a release version',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0+alpha.1.0.0-0.0.1')],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.properties = [packageProperty('foo', '0.1.0+alpha.1.0.0', '0.0.1')];
          b.name = 'foo.v0.1.0+alpha.1.0.0-0.0.1';
        }),
      ],
    }),
  },
  {
    name: 'Error/BundleImageInvalidPullSpecUnsupportedDigestSsha256',
    error:
      'package "foo" bundle "foo.v0.1.0" image: invalid image pull spec "quay.io/operator-framework/foo-bundle@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234": unsupported digest algorithm',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.image = 'quay.io/operator-framework/foo-bundle@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234';
        }),
      ],
    }),
  },
  {
    name: 'Error/BundleImageInvalidPullSpecUnsupportedDigestMd5',
    errorContains: 'invalid image pull spec',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [newTestBundle('foo', '0.1.0', (b) => (b.image = 'quay.io/operator-framework/foo-bundle@md5:abcd1234abcd1234abcd1234abcd1234'))],
    }),
  },
  {
    name: 'Error/BundleImageUppercase',
    error:
      'package "foo" bundle "foo.v0.1.0" image: invalid image pull spec "quay.io/Foo/bundle:v1": invalid reference format: repository name must be lowercase',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [newTestBundle('foo', '0.1.0', (b) => (b.image = 'quay.io/Foo/bundle:v1'))],
    }),
  },
  {
    name: 'Error/BundleRelatedImageInvalidPullSpecSsha256',
    error:
      'package "foo" bundle "foo.v0.1.0" relatedImages[1].image: invalid image pull spec "quay.io/operator-framework/my-operator@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234": unsupported digest algorithm',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.relatedImages = [
            { name: 'bundle', image: testBundleImage('foo', '0.1.0') },
            { name: 'operator', image: 'quay.io/operator-framework/my-operator@ssha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234' },
          ];
        }),
      ],
    }),
  },
  {
    name: 'Success/BundleImageValidSha256Digest',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.image = 'quay.io/operator-framework/foo-bundle@sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234';
          b.relatedImages = [
            { name: 'bundle', image: 'quay.io/operator-framework/foo-bundle@sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234' },
          ];
        }),
      ],
    }),
  },
  {
    name: 'Success/BundleImageValidTagWithDigest',
    cfg: config({
      packages: [foo()],
      channels: [fooAlpha(testBundleName('foo', '0.1.0'))],
      bundles: [
        newTestBundle('foo', '0.1.0', (b) => {
          b.image = 'quay.io/operator-framework/foo-bundle:v0.1.0@sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234';
          b.relatedImages = [
            { name: 'bundle', image: 'quay.io/operator-framework/foo-bundle:v0.1.0@sha256:abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234abcd1234' },
          ];
        }),
      ],
    }),
  },
  {
    name: 'Error/StrandedBundle',
    error:
      'invalid index:\n└── invalid package "foo":\n    └── invalid channel "alpha":\n        └── channel contains one or more stranded bundles: foo.v0.1.0',
    cfg: config({
      packages: [foo()],
      channels: [
        newTestChannel('foo', 'alpha', { name: 'foo.v0.1.0' }, { name: 'foo.v0.2.0', replaces: 'foo.v0.1.0' }, { name: 'foo.v0.3.0', skips: ['foo.v0.2.0'] }),
      ],
      bundles: [newTestBundle('foo', '0.1.0'), newTestBundle('foo', '0.2.0'), newTestBundle('foo', '0.3.0')],
    }),
  },
];

for (const c of cases) {
  test(`convertToModel ${c.name}`, () => {
    if (c.error === undefined && c.errorContains === undefined) {
      convertToModel(c.cfg);
      return;
    }
    assert.throws(
      () => convertToModel(c.cfg),
      (err: Error) => {
        assert.ok(err instanceof ModelConversionError || err instanceof ValidationError, `unexpected error type ${err.name}`);
        if (c.error !== undefined) assert.equal(err.message, c.error);
        else assert.ok(err.message.includes(c.errorContains!), err.message);
        return true;
      },
    );
  });
}

test('convertToModel links a bundle to its package and channel (TestConvertToModelBundle)', () => {
  const m = convertToModel(config({ packages: [foo()], channels: [fooAlpha('foo.v0.1.0')], bundles: [newTestBundle('foo', '0.1.0')] }));
  const pkg = m.get('foo')!;
  const ch = pkg.channels.get('alpha')!;
  const b = ch.bundles.get('foo.v0.1.0')!;
  assert.equal(b.package, pkg);
  assert.equal(b.channel, ch);
  assert.equal(pkg.defaultChannel, ch);
  assert.equal(b.name, 'foo.v0.1.0');
  assert.equal(b.image, 'foo-bundle:v0.1.0');
  assert.equal(b.replaces, '');
  assert.deepEqual(b.skips, []);
  assert.equal(b.skipRange, '');
  assert.equal(b.properties.length, 3);
  assert.deepEqual(b.relatedImages, [{ name: 'bundle', image: 'foo-bundle:v0.1.0' }]);
  assert.equal(b.deprecation, undefined);
  assert.equal(b.objects.length, 2);
  assert.notEqual(b.csvJSON, '');
  assert.equal(b.propertiesP!.bundleObjects.length, 2);
  assert.equal(b.propertiesP!.packages.length, 1);
  assert.equal(b.version, '0.1.0');
  assert.equal(new TextDecoder().decode(pkg.icon!.data), svgSmallCircle);
  assert.equal(pkg.description, 'foo operator');
});

test('convertToModel applies deprecations to the package, channel and every copy of a bundle', () => {
  const m = convertToModel(validDeclarativeConfig({ includeDeprecations: true }));
  const anakin = m.get('anakin')!;
  assert.deepEqual(anakin.deprecation, { message: 'This package is deprecated... there is another' });
  assert.deepEqual(anakin.channels.get('light')!.deprecation, { message: 'This channel is deprecated' });
  assert.equal(anakin.channels.get('dark')!.deprecation, undefined);
  for (const ch of ['dark', 'light']) {
    assert.deepEqual(anakin.channels.get(ch)!.bundles.get('anakin.v0.0.1')!.deprecation, { message: 'This bundle version is deprecated' });
  }
});

test('convertToModel → convertFromModel round trip (TestConvertToModelRoundtrip)', () => {
  const expected = validDeclarativeConfig({ includeUnrecognized: true });
  const actual = convertFromModel(convertToModel(expected));
  assert.deepEqual(actual.packages, expected.packages);
  assert.deepEqual(actual.bundles, expected.bundles);
  assert.deepEqual(actual.others, [], 'unrecognized schemas do not make the round trip');
});

test('convertFromModel gives back the whole config (TestConvertFromModel)', () => {
  const expected = validDeclarativeConfig();
  assert.deepEqual(convertFromModel(convertToModel(validDeclarativeConfig())), expected);
});

test('convertFromModel sorts packages, channels, bundles and de-duplicates bundle properties', () => {
  const cfg = validDeclarativeConfig();
  cfg.packages.reverse();
  cfg.channels.reverse();
  cfg.bundles.reverse();
  const out = convertFromModel(convertToModel(cfg));
  assert.deepEqual(
    out.packages.map((p) => p.name),
    ['anakin', 'boba-fett'],
  );
  assert.deepEqual(
    out.bundles.map((b) => b.name),
    ['anakin.v0.0.1', 'anakin.v0.1.0', 'anakin.v0.1.1', 'boba-fett.v1.0.0', 'boba-fett.v2.0.0'],
  );
  // anakin.v0.0.1 is in two channels: its three properties appear once each
  assert.equal(out.bundles[0]!.properties!.length, 3);
  assert.deepEqual(
    out.bundles[0]!.properties!.map((p) => p.type),
    ['olm.bundle.object', 'olm.bundle.object', 'olm.package'],
  );
  const dark = out.channels.find((c) => c.name === 'dark')!;
  assert.deepEqual(dark.entries[2], { name: 'anakin.v0.1.1', replaces: 'anakin.v0.0.1', skips: ['anakin.v0.1.0'] });
});

test('property values are type-checked as Go decodes them', () => {
  const withProps = (...properties: { type: string; value?: unknown }[]): DeclarativeConfig =>
    config({
      packages: [foo()],
      channels: [fooAlpha('foo.v0.1.0')],
      bundles: [newTestBundle('foo', '0.1.0', (b) => (b.properties = properties as { type: string; value: unknown }[]))],
    });
  const message = (cfg: DeclarativeConfig): string => {
    try {
      convertToModel(cfg);
    } catch (err) {
      return (err as Error).message;
    }
    return '';
  };
  assert.equal(
    message(withProps({ type: 'olm.package', value: { packageName: 'foo', version: 1 } })),
    'parse properties for bundle "foo.v0.1.0": parse property[0] of type "olm.package": json: cannot unmarshal number into Go struct field Package.version of type string',
  );
  assert.equal(
    message(withProps(packageProperty('foo', '0.1.0'), { type: 'olm.package.required', value: [] })),
    'parse properties for bundle "foo.v0.1.0": parse property[1] of type "olm.package.required": json: cannot unmarshal array into Go value of type property.PackageRequired',
  );
  assert.equal(
    message(withProps(packageProperty('foo', '0.1.0'), { type: 'zz.custom' })),
    'parse properties for bundle "foo.v0.1.0": parse property[1] of type "zz.custom": unexpected end of JSON input',
  );
  // keys match case-insensitively, as encoding/json does
  assert.equal(message(withProps({ type: 'olm.package', value: { PackageName: 'foo', VERSION: '0.1.0' } })), '');
});

test("only the last channel's entries are matched against bundle blobs (opm's quirk); earlier ones fail validation", () => {
  const cfg = config({
    packages: [foo()],
    channels: [fooAlpha('foo.v0.1.0', 'foo.v0.2.0'), newTestChannel('foo', 'beta', { name: 'foo.v0.1.0' })],
    bundles: [newTestBundle('foo', '0.1.0')],
  });
  assert.throws(() => convertToModel(cfg), {
    message: [
      'invalid index:',
      '└── invalid package "foo":',
      '    └── invalid channel "alpha":',
      '        ├── multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0',
      '        └── invalid bundle "foo.v0.2.0":',
      '            ├── must be exactly one property with type "olm.package"',
      '            └── bundle image must be set',
    ].join('\n'),
  });
  // the same entry in the last channel is caught while converting
  cfg.channels.reverse();
  assert.throws(() => convertToModel(cfg), { message: 'no olm.bundle blobs found in package "foo" for olm.channel entries [foo.v0.2.0]' });
});
