// Model validation against operator-registry's alpha/model/model_test.go cases: TestChannelHead,
// TestValidReplacesChain and TestValidators (same models, same messages).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import type { Property } from '../declcfg/types.js';
import { ValidationError } from './errors.js';
import { channelHead } from './graph.js';
import { gvkProperty, packageProperty, bundleObjectProperty } from './testdata/fixtures.js';
import type { Bundle, Channel, Icon, Package } from './types.js';
import {
  detectIconMediaType,
  validateBundle,
  validateChannel,
  validateIconData,
  validateModel,
  validatePackage,
  validateRelatedImage,
  validateReplacesChain,
} from './validate.js';

const svgData = 'PHN2ZyB2aWV3Qm94PTAgMCAxMDAgMTAwPjxjaXJjbGUgY3g9MjUgY3k9MjUgcj0yNS8+PC9zdmc+';
const pngData = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABAQMAAAAl21bKAAAAA1BMVEUAAACnej3aAAAAAXRSTlMAQObYZgAAAApJREFUCNdjYAAAAAIAAeIhvDMAAAAASUVORK5CYII=';
const jpegHead = '/9j/4AAQSkZJRgABAQEAYABgAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/2wBD';
const bytes = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, 'base64'));

/** A bundle with opm's zero values, then the fields given. */
function bundle(fields: Partial<Bundle> & { name: string }): Bundle {
  return {
    package: undefined as unknown as Package,
    channel: undefined as unknown as Channel,
    image: '',
    replaces: '',
    skips: [],
    skipRange: '',
    properties: [],
    relatedImages: [],
    objects: [],
    csvJSON: '',
    version: '',
    ...fields,
  };
}

function channelOf(...bs: Bundle[]): Pick<Channel, 'bundles'> {
  return { bundles: new Map(bs.map((b) => [b.name, b])) };
}

/** opm's makePackageChannelBundle: package anakin, channel light, bundles 0.0.1 ← 0.0.2. */
function makePackageChannelBundle(): { pkg: Package; ch: Channel } {
  const props = (v: string): Property[] => [packageProperty('anakin', v), gvkProperty('skywalker.me', 'v1alpha1', 'PodRacer')];
  const b1 = bundle({ name: 'anakin.v0.0.1', image: 'anakin-operator:v0.0.1', properties: props('0.0.1'), version: '0.0.1' });
  const b2 = bundle({ name: 'anakin.v0.0.2', image: 'anakin-operator:v0.0.2', replaces: 'anakin.v0.0.1', properties: props('0.0.2'), version: '0.0.2' });
  const pkg: Package = { name: 'anakin', description: '', channels: new Map() };
  const ch: Channel = {
    package: pkg,
    name: 'light',
    bundles: new Map([
      [b1.name, b1],
      [b2.name, b2],
    ]),
    properties: [],
  };
  pkg.channels.set('light', ch);
  pkg.defaultChannel = ch;
  for (const b of [b1, b2]) {
    b.package = pkg;
    b.channel = ch;
  }
  return { pkg, ch };
}

/** opm's hasError: the error, or any node or leaf below it, says exactly this. */
function hasError(err: Error | undefined, expected: string): void {
  const queue: Error[] = err ? [err] : [];
  while (queue.length > 0) {
    const e = queue.shift()!;
    if (e instanceof ValidationError) {
      if (e.summary === expected) return;
      queue.push(...e.subErrors);
    } else if (e.message === expected) return;
  }
  assert.fail(`expected error to be or contain sub-error \`${expected}\`, got \`${err?.message}\``);
}

// TestChannelHead
const head = bundle({ name: 'anakin.v0.0.3', replaces: 'anakin.v0.0.1', skips: ['anakin.v0.0.2'] });

test('Channel head: Success/Valid', () => {
  assert.equal(channelHead(channelOf(bundle({ name: 'anakin.v0.0.1' }), bundle({ name: 'anakin.v0.0.2' }), head)), head);
});
test('Channel head: Error/NoChannelHead', () => {
  assert.throws(() => channelHead(channelOf(bundle({ name: 'anakin.v0.0.1', replaces: 'anakin.v0.0.3' }), head)), {
    message: 'no channel head found in graph',
  });
});
test('Channel head: Error/MultipleChannelHeads', () => {
  assert.throws(() => channelHead(channelOf(bundle({ name: 'anakin.v0.0.1' }), head, bundle({ name: 'anakin.v0.0.4', replaces: 'anakin.v0.0.1' }))), {
    message: 'multiple channel heads found in graph: anakin.v0.0.3, anakin.v0.0.4',
  });
});

// TestValidReplacesChain
const chainCases: [string, Bundle[], string | undefined][] = [
  [
    'Success/Valid',
    [
      bundle({ name: 'anakin.v0.0.1' }),
      bundle({ name: 'anakin.v0.0.2', skips: ['anakin.v0.0.1'] }),
      bundle({ name: 'anakin.v0.0.3', skips: ['anakin.v0.0.2'] }),
      bundle({ name: 'anakin.v0.0.4', replaces: 'anakin.v0.0.3' }),
    ],
    undefined,
  ],
  [
    'Error/CycleNoHops',
    [bundle({ name: 'anakin.v0.0.4', replaces: 'anakin.v0.0.4' }), bundle({ name: 'anakin.v0.0.5', replaces: 'anakin.v0.0.4' })],
    'detected cycle in replaces chain of upgrade graph: anakin.v0.0.4 -> anakin.v0.0.4',
  ],
  [
    'Error/CycleMultipleHops',
    [
      bundle({ name: 'anakin.v0.0.1', replaces: 'anakin.v0.0.3' }),
      bundle({ name: 'anakin.v0.0.2', replaces: 'anakin.v0.0.1' }),
      bundle({ name: 'anakin.v0.0.3', replaces: 'anakin.v0.0.2' }),
      bundle({ name: 'anakin.v0.0.4', replaces: 'anakin.v0.0.3' }),
    ],
    'detected cycle in replaces chain of upgrade graph: anakin.v0.0.3 -> anakin.v0.0.2 -> anakin.v0.0.1 -> anakin.v0.0.3',
  ],
  [
    'Error/Stranded',
    [
      bundle({ name: 'anakin.v0.0.1' }),
      bundle({ name: 'anakin.v0.0.2', replaces: 'anakin.v0.0.1' }),
      bundle({ name: 'anakin.v0.0.3', skips: ['anakin.v0.0.2'] }),
    ],
    'channel contains one or more stranded bundles: anakin.v0.0.1',
  ],
  [
    'Error/SkippedReplacesStranded',
    [
      bundle({ name: 'anakin.v0.0.1' }),
      bundle({ name: 'anakin.v0.0.2', replaces: 'anakin.v0.0.1' }),
      bundle({ name: 'anakin.v0.0.3', replaces: 'anakin.v0.0.2', skips: ['anakin.v0.0.2'] }),
    ],
    'channel contains one or more stranded bundles: anakin.v0.0.1',
  ],
];
for (const [name, bs, expected] of chainCases) {
  test(`Replaces chain: ${name}`, () => {
    const err = validateReplacesChain(channelOf(...bs));
    if (expected === undefined) assert.equal(err, undefined);
    else assert.equal(err?.message, expected);
  });
}

// Well under 1 s; a quadratic walk would take minutes: the test's timeout is the check.
test('Replaces chain: a long chain is checked in linear time', { timeout: 30_000 }, () => {
  const n = 50_000;
  const bs = Array.from({ length: n }, (_, i) => bundle({ name: `b${i}`, replaces: i > 0 ? `b${i - 1}` : '' }));
  assert.equal(validateReplacesChain(channelOf(...bs)), undefined);
});

// TestValidators
type Validator = () => Error | undefined;
const { pkg, ch } = makePackageChannelBundle();
const wrongDefault = makePackageChannelBundle().pkg;
wrongDefault.defaultChannel = { name: 'not-found' } as Channel;

const validators: [string, Validator, string | undefined][] = [
  ['Model/Success/Valid', () => validateModel(new Map([[pkg.name, pkg]])), undefined],
  ['Model/Error/PackageKeyNameMismatch', () => validateModel(new Map([['foo', pkg]])), 'package key "foo" does not match package name "anakin"'],
  ['Model/Error/InvalidPackage', () => validateModel(new Map([[wrongDefault.name, wrongDefault]])), 'invalid package "anakin"'],
  ['Package/Success/Valid', () => validatePackage(pkg), undefined],
  ['Package/Error/NoName', () => validatePackage({ name: '', description: '', channels: new Map() }), 'package name must not be empty'],
  [
    'Package/Error/NoChannels',
    () => validatePackage({ name: 'anakin', description: '', icon: { data: bytes(svgData), mediatype: 'image/svg+xml' }, channels: new Map() }),
    'package must contain at least one channel',
  ],
  [
    'Package/Error/DuplicateBundleVersions',
    () => {
      const light: Channel = { package: pkg, name: 'light', properties: [], bundles: new Map() };
      for (const [n, v] of [
        ['anakin.v0.0.1', '0.0.1'],
        ['anakin.v0.0.2', '0.0.1'],
        ['anakin.v1.0.1', '1.0.1'],
        ['anakin.v1.0.2', '1.0.1'],
      ] as const) {
        light.bundles.set(n, bundle({ name: n, version: v }));
      }
      return validatePackage({ name: 'anakin', description: '', channels: new Map([['light', light]]) });
    },
    'duplicate versions found in bundles: [{0.0.1: [anakin.v0.0.1, anakin.v0.0.2]} {1.0.1: [anakin.v1.0.1, anakin.v1.0.2]}]',
  ],
  [
    'Package/Error/DuplicateBundleVersionsReleases',
    () => {
      const light: Channel = { package: pkg, name: 'light', properties: [], bundles: new Map() };
      light.bundles.set('anakin.v0.0.1', bundle({ name: 'anakin.v0.0.1', version: '0.0.1' }));
      light.bundles.set('anakin.v0.0.2', bundle({ name: 'anakin.v0.0.2', version: '0.0.1' }));
      light.bundles.set('anakin-v0.0.1-100', bundle({ name: 'anakin.v0.0.1', version: '0.0.1', release: '100', package: pkg }));
      light.bundles.set('anakin-v0.0.2-100', bundle({ name: 'anakin.v0.0.2', version: '0.0.1', release: '100', package: pkg }));
      return validatePackage({ name: 'anakin', description: '', channels: new Map([['light', light]]) });
    },
    'duplicate versions found in bundles: [{0.0.1: [anakin.v0.0.1, anakin.v0.0.2]} {0.0.1-100: [anakin.v0.0.1, anakin.v0.0.2]}]',
  ],
  [
    'Package/Error/BundleReleaseNormalizedName',
    () => {
      const light: Channel = { package: pkg, name: 'light', properties: [], bundles: new Map() };
      light.bundles.set('anakin.v0.0.1.alpha1', bundle({ name: 'anakin.v0.0.1.alpha1', version: '0.0.1', release: 'alpha1', package: pkg }));
      return validatePackage({ name: 'anakin', description: '', channels: new Map([['light', light]]) });
    },
    'name "anakin.v0.0.1.alpha1" does not match normalized name "anakin-v0.0.1-alpha1"',
  ],
  [
    'Package/Error/NoDefaultChannel',
    () => validatePackage({ name: 'anakin', description: '', channels: new Map([['light', ch]]) }),
    'default channel must be set',
  ],
  [
    'Package/Error/ChannelKeyNameMismatch',
    () => validatePackage({ name: 'anakin', description: '', defaultChannel: ch, channels: new Map([['dark', ch]]) }),
    'channel key "dark" does not match channel name "light"',
  ],
  [
    'Package/Error/InvalidChannel',
    () =>
      validatePackage({
        name: 'anakin',
        description: '',
        defaultChannel: ch,
        channels: new Map([['light', { name: 'light', bundles: new Map(), properties: [] } as unknown as Channel]]),
      }),
    'invalid channel "light"',
  ],
  [
    'Package/Error/InvalidChannelPackageLink',
    () => validatePackage({ name: 'anakin', description: '', defaultChannel: ch, channels: new Map([['light', ch]]) }),
    'channel "light" not correctly linked to parent package',
  ],
  ['Package/Error/DefaultChannelNotInChannelMap', () => validatePackage(wrongDefault), 'default channel "not-found" not found in channels list'],
  ['Channel/Success/Valid', () => validateChannel(ch), undefined],
  ['Channel/Error/NoName', () => validateChannel({ name: '', bundles: new Map(), properties: [] } as unknown as Channel), 'channel name must not be empty'],
  ['Channel/Error/NoPackage', () => validateChannel({ name: 'light', bundles: new Map(), properties: [] } as unknown as Channel), 'package must be set'],
  [
    'Channel/Error/NoBundles',
    () => validateChannel({ package: pkg, name: 'light', bundles: new Map(), properties: [] }),
    'channel must contain at least one bundle',
  ],
  [
    'Channel/Error/InvalidHead',
    () => validateChannel({ package: pkg, name: 'light', properties: [], ...channelOf(bundle({ name: 'anakin.v0.0.0' }), bundle({ name: 'anakin.v0.0.1' })) }),
    'multiple channel heads found in graph: anakin.v0.0.0, anakin.v0.0.1',
  ],
  [
    'Channel/Error/BundleKeyNameMismatch',
    () => validateChannel({ package: pkg, name: 'light', properties: [], bundles: new Map([['foo', bundle({ name: 'bar' })]]) }),
    'bundle key "foo" does not match bundle name "bar"',
  ],
  [
    'Channel/Error/InvalidBundle',
    () => validateChannel({ package: pkg, name: 'light', properties: [], ...channelOf(bundle({ name: 'anakin.v0.0.0' })) }),
    'invalid bundle "anakin.v0.0.0"',
  ],
  [
    'Channel/Error/InvalidBundleChannelLink',
    () =>
      validateChannel({
        package: pkg,
        name: 'light',
        properties: [],
        ...channelOf(bundle({ package: pkg, channel: ch, name: 'anakin.v0.0.0', image: 'anakin-operator:v0.0.0' })),
      }),
    'bundle "anakin.v0.0.0" not correctly linked to parent channel',
  ],
  [
    'Bundle/Success/Valid',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          image: 'registry.io/image',
          replaces: 'anakin.v0.0.1',
          skips: ['anakin.v0.0.2'],
          properties: [packageProperty('anakin', '0.1.0'), gvkProperty('skywalker.me', 'v1alpha1', 'PodRacer')],
        }),
      ),
    undefined,
  ],
  [
    'Bundle/Success/ReplacesNotInChannel',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          image: 'registry.io/image',
          replaces: 'anakin.v0.0.0',
          properties: [packageProperty('anakin', '0.1.0')],
        }),
      ),
    undefined,
  ],
  [
    'Bundle/Success/NoBundleImage/HaveBundleData',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          properties: [packageProperty('anakin', '0.1.0'), gvkProperty('skywalker.me', 'v1alpha1', 'PodRacer'), bundleObjectProperty('testdata')],
          objects: ['testdata'],
          csvJSON: 'CSVjson',
        }),
      ),
    undefined,
  ],
  [
    'Bundle/Error/NoBundleImage',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          properties: [packageProperty('anakin', '0.1.0'), gvkProperty('skywalker.me', 'v1alpha1', 'PodRacer')],
        }),
      ),
    'bundle image must be set',
  ],
  ['Bundle/Error/NoName', () => validateBundle(bundle({ name: '' })), 'name must be set'],
  ['Bundle/Error/NoChannel', () => validateBundle(bundle({ name: 'anakin.v0.1.0' })), 'channel must be set'],
  ['Bundle/Error/NoPackage', () => validateBundle(bundle({ channel: ch, name: 'anakin.v0.1.0' })), 'package must be set'],
  [
    'Bundle/Error/WrongPackage',
    () => validateBundle(bundle({ package: { name: '', description: '', channels: new Map() }, channel: ch, name: 'anakin.v0.1.0' })),
    "package does not match channel's package",
  ],
  [
    'Bundle/Error/InvalidProperty',
    () =>
      validateBundle(
        bundle({ package: pkg, channel: ch, name: 'anakin.v0.1.0', replaces: 'anakin.v0.0.1', properties: [{ type: 'broken', value: undefined }] }),
      ),
    'parse property[0] of type "broken": unexpected end of JSON input',
  ],
  [
    'Bundle/Error/EmptySkipsValue',
    () =>
      validateBundle(
        bundle({ package: pkg, channel: ch, name: 'anakin.v0.1.0', replaces: 'anakin.v0.0.1', properties: [{ type: 'custom', value: {} }], skips: [''] }),
      ),
    'skip[0] is empty',
  ],
  [
    'Bundle/Success/ValidSkipRange',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          image: 'registry.io/image',
          replaces: 'anakin.v0.0.1',
          skipRange: '>=1.0.0 <2.0.0',
          properties: [packageProperty('anakin', '0.1.0')],
        }),
      ),
    undefined,
  ],
  [
    'Bundle/Error/InvalidSkipRange/LeadingV',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          image: 'registry.io/image',
          skipRange: '>v0.1.0',
          properties: [packageProperty('anakin', '0.1.0')],
        }),
      ),
    'invalid skipRange ">v0.1.0": Could not parse Range ">v0.1.0": Could not parse comparator ">v" in ">v0.1.0"',
  ],
  [
    'Bundle/Error/InvalidSkipRange/LeadingZero',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          image: 'registry.io/image',
          skipRange: '>1.00.1',
          properties: [packageProperty('anakin', '0.1.0')],
        }),
      ),
    'invalid skipRange ">1.00.1": Could not parse Range ">1.00.1": Could not parse version "1.00.1" in ">1.00.1": Minor number must not contain leading zeroes "00"',
  ],
  [
    'Bundle/Error/MissingPackage',
    () => validateBundle(bundle({ package: pkg, channel: ch, name: 'anakin.v0.1.0', replaces: 'anakin.v0.0.1', skips: ['anakin.v0.0.2'] })),
    'must be exactly one property with type "olm.package"',
  ],
  [
    'Bundle/Error/MultiplePackages',
    () =>
      validateBundle(
        bundle({ package: pkg, channel: ch, name: 'anakin.v0.1.0', properties: [packageProperty('anakin', '0.1.0'), packageProperty('anakin', '0.2.0')] }),
      ),
    'must be exactly one property with type "olm.package"',
  ],
  [
    'Bundle/Error/EmptyDeprecationMessage',
    () =>
      validateBundle(
        bundle({
          package: pkg,
          channel: ch,
          name: 'anakin.v0.1.0',
          image: 'x',
          properties: [packageProperty('anakin', '0.1.0')],
          deprecation: { message: '' },
        }),
      ),
    'invalid deprecation: message must be set',
  ],
  ['RelatedImage/Success/Valid', () => validateRelatedImage({ name: 'foo', image: 'bar' }), undefined],
  ['RelatedImage/Error/NoImage', () => validateRelatedImage({ name: 'foo', image: '' }), 'image must be set'],
];

for (const [name, run, expected] of validators) {
  test(`Validators: ${name}`, () => {
    const err = run();
    if (expected === undefined) assert.equal(err, undefined, err?.message);
    else hasError(err, expected);
  });
}

test('icons are not checked by validation (as opm), but their media type can be detected', () => {
  const icon = (data: string, mediatype: string): Icon => ({ data: bytes(data), mediatype });
  const withIcon = makePackageChannelBundle().pkg;
  withIcon.icon = icon(svgData, 'image/jpeg');
  assert.equal(validatePackage(withIcon), undefined);
  assert.equal(detectIconMediaType(bytes(svgData)), 'image/svg+xml');
  assert.equal(detectIconMediaType(bytes(pngData)), 'image/png');
  assert.equal(detectIconMediaType(bytes(jpegHead)), 'image/jpeg');
  assert.equal(validateIconData(icon(pngData, 'image/png')), undefined);
  assert.equal(validateIconData(icon(svgData, 'image/jpeg'))?.message, 'icon media type "image/jpeg" does not match detected media type "image/svg+xml"');
  assert.equal(validateIconData({ data: new TextEncoder().encode('{}'), mediatype: 'application/json' })?.message, 'icon data is not an image');
});
