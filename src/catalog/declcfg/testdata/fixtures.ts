// The declarative config upstream's declcfg tests are built on (helpers_test.go
// buildValidDeclarativeConfig), transcribed as data: packages anakin and boba-fett, their channels,
// five bundles, optional unrecognized blobs and a deprecation.
import type { Bundle, Channel, ChannelEntry, DeclarativeConfig, Meta, Package } from '../types.js';

const svgSmallCircle = '<svg viewBox="0 0 100 100"><circle cx="25" cy="25" r="25"/></svg>';
const svgBigCircle = '<svg viewBox="0 0 100 100"><circle cx="50" cy="50" r="50"/></svg>';

export const bundleName = (pkg: string, version: string): string => `${pkg}.v${version}`;
const bundleImage = (pkg: string, version: string): string => `${pkg}-bundle:v${version}`;
const b64 = (s: string): string => Buffer.from(s).toString('base64');

export function csvJSON(pkg: string, version: string): string {
  return `{"kind": "ClusterServiceVersion", "apiVersion": "operators.coreos.com/v1alpha1", "metadata":{"name":${JSON.stringify(bundleName(pkg, version))}}}`;
}
export const crdJSON = '{"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1"}';

export function testBundle(pkg: string, version: string): Bundle {
  const csv = csvJSON(pkg, version);
  // upstream sorts the properties by type, then by raw value text
  return {
    schema: 'olm.bundle',
    name: bundleName(pkg, version),
    package: pkg,
    image: bundleImage(pkg, version),
    properties: [
      { type: 'olm.bundle.object', value: { data: b64(crdJSON) } },
      { type: 'olm.bundle.object', value: { data: b64(csv) } },
      { type: 'olm.package', value: { packageName: pkg, version } },
    ],
    relatedImages: [{ name: 'bundle', image: bundleImage(pkg, version) }],
    csvJSON: csv,
    objects: [csv, crdJSON],
  };
}

function testPackage(name: string, defaultChannel: string, svg: string): Package {
  return {
    schema: 'olm.package',
    name,
    defaultChannel,
    icon: { base64data: b64(svg), mediatype: 'image/svg+xml' },
    description: `${name} operator`,
  };
}

function testChannel(pkg: string, name: string, ...entries: ChannelEntry[]): Channel {
  return { schema: 'olm.channel', name, package: pkg, entries };
}

export function validDeclarativeConfig(spec: { includeUnrecognized?: boolean; includeDeprecations?: boolean } = {}): DeclarativeConfig {
  const a = (v: string): string => bundleName('anakin', v);
  const others: Meta[] = spec.includeUnrecognized
    ? [
        { schema: 'custom.1', package: '', name: '', blob: { schema: 'custom.1' } },
        { schema: 'custom.2', package: '', name: '', blob: { schema: 'custom.2' } },
        { schema: 'custom.3', package: 'anakin', name: '', blob: { myField: 'foobar', package: 'anakin', schema: 'custom.3' } },
        { schema: 'custom.3', package: 'boba-fett', name: '', blob: { myField: 'foobar', package: 'boba-fett', schema: 'custom.3' } },
      ]
    : [];
  return {
    packages: [testPackage('anakin', 'dark', svgSmallCircle), testPackage('boba-fett', 'mando', svgBigCircle)],
    channels: [
      testChannel(
        'anakin',
        'dark',
        { name: a('0.0.1') },
        { name: a('0.1.0'), replaces: a('0.0.1') },
        { name: a('0.1.1'), replaces: a('0.0.1'), skips: [a('0.1.0')] },
      ),
      testChannel('anakin', 'light', { name: a('0.0.1') }, { name: a('0.1.0'), replaces: a('0.0.1') }),
      testChannel(
        'boba-fett',
        'mando',
        { name: bundleName('boba-fett', '1.0.0') },
        { name: bundleName('boba-fett', '2.0.0'), replaces: bundleName('boba-fett', '1.0.0') },
      ),
    ],
    bundles: [
      testBundle('anakin', '0.0.1'),
      testBundle('anakin', '0.1.0'),
      testBundle('anakin', '0.1.1'),
      testBundle('boba-fett', '1.0.0'),
      testBundle('boba-fett', '2.0.0'),
    ],
    others,
    deprecations: spec.includeDeprecations
      ? [
          {
            schema: 'olm.deprecations',
            package: 'anakin',
            entries: [
              { reference: { schema: 'olm.bundle', name: a('0.0.1') }, message: 'This bundle version is deprecated' },
              { reference: { schema: 'olm.channel', name: 'light' }, message: 'This channel is deprecated' },
              { reference: { schema: 'olm.package' }, message: 'This package is deprecated... there is another' },
            ],
          },
        ]
      : [],
  };
}
