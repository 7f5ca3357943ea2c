// Builders for catalog model tests, transcribed from operator-registry's alpha/declcfg/helpers_test.go
// (the same packages, bundles and icons, so expected messages carry over unchanged).
import type { Bundle, Channel, ChannelEntry, DeclarativeConfig, Package, Property } from '../../declcfg/types.js';

export const svgSmallCircle = '<svg viewBox="0 0 100 100"><circle cx="25" cy="25" r="25"/></svg>';
export const svgBigCircle = '<svg viewBox="0 0 100 100"><circle cx="50" cy="50" r="50"/></svg>';

export const testBundleName = (pkg: string, version: string): string => `${pkg}.v${version}`;
export const testBundleImage = (pkg: string, version: string): string => `${pkg}-bundle:v${version}`;

export function packageProperty(packageName: string, version: string, release?: string): Property {
  return { type: 'olm.package', value: release === undefined ? { packageName, version } : { packageName, version, release } };
}

export function bundleObjectProperty(data: string): Property {
  return { type: 'olm.bundle.object', value: { data: Buffer.from(data).toString('base64') } };
}

export function gvkProperty(group: string, version: string, kind: string): Property {
  return { type: 'olm.gvk', value: { group, kind, version } };
}

const crdJSON = '{"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1"}';

export function newTestBundle(pkg: string, version: string, ...opts: ((b: Bundle) => void)[]): Bundle {
  const csvJSON = `{"kind": "ClusterServiceVersion", "apiVersion": "operators.coreos.com/v1alpha1", "metadata":{"name":${JSON.stringify(testBundleName(pkg, version))}}}`;
  const b: Bundle = {
    schema: 'olm.bundle',
    name: testBundleName(pkg, version),
    package: pkg,
    image: testBundleImage(pkg, version),
    properties: [packageProperty(pkg, version), bundleObjectProperty(csvJSON), bundleObjectProperty(crdJSON)],
    relatedImages: [{ name: 'bundle', image: testBundleImage(pkg, version) }],
    csvJSON,
    objects: [csvJSON, crdJSON],
  };
  for (const o of opts) o(b);
  b.properties!.sort((x, y) => (x.type !== y.type ? (x.type < y.type ? -1 : 1) : JSON.stringify(x.value) < JSON.stringify(y.value) ? -1 : JSON.stringify(x.value) > JSON.stringify(y.value) ? 1 : 0));
  return b;
}

export const withNoProperties = (b: Bundle): void => {
  b.properties = [];
};
export const withNoBundleImage = (b: Bundle): void => {
  b.image = '';
};

export function newTestPackage(name: string, defaultChannel: string, svg: string): Package {
  return {
    schema: 'olm.package',
    name,
    defaultChannel,
    icon: { base64data: Buffer.from(svg).toString('base64'), mediatype: 'image/svg+xml' },
    description: `${name} operator`,
  };
}

export function newTestChannel(pkg: string, name: string, ...entries: ChannelEntry[]): Channel {
  return { schema: 'olm.channel', name, package: pkg, entries };
}

export function config(parts: Partial<DeclarativeConfig>): DeclarativeConfig {
  return { packages: [], channels: [], bundles: [], deprecations: [], others: [], ...parts };
}

/** operator-registry's buildValidDeclarativeConfig. */
export function validDeclarativeConfig(opts: { includeUnrecognized?: boolean; includeDeprecations?: boolean } = {}): DeclarativeConfig {
  const n = testBundleName;
  return config({
    packages: [newTestPackage('anakin', 'dark', svgSmallCircle), newTestPackage('boba-fett', 'mando', svgBigCircle)],
    channels: [
      newTestChannel(
        'anakin',
        'dark',
        { name: n('anakin', '0.0.1') },
        { name: n('anakin', '0.1.0'), replaces: n('anakin', '0.0.1') },
        { name: n('anakin', '0.1.1'), replaces: n('anakin', '0.0.1'), skips: [n('anakin', '0.1.0')] },
      ),
      newTestChannel('anakin', 'light', { name: n('anakin', '0.0.1') }, { name: n('anakin', '0.1.0'), replaces: n('anakin', '0.0.1') }),
      newTestChannel('boba-fett', 'mando', { name: n('boba-fett', '1.0.0') }, { name: n('boba-fett', '2.0.0'), replaces: n('boba-fett', '1.0.0') }),
    ],
    bundles: [
      newTestBundle('anakin', '0.0.1'),
      newTestBundle('anakin', '0.1.0'),
      newTestBundle('anakin', '0.1.1'),
      newTestBundle('boba-fett', '1.0.0'),
      newTestBundle('boba-fett', '2.0.0'),
    ],
    others: opts.includeUnrecognized
      ? [
          { schema: 'custom.1', package: '', name: '', blob: { schema: 'custom.1' } },
          { schema: 'custom.2', package: '', name: '', blob: { schema: 'custom.2' } },
          { schema: 'custom.3', package: 'anakin', name: '', blob: { myField: 'foobar', package: 'anakin', schema: 'custom.3' } },
          { schema: 'custom.3', package: 'boba-fett', name: '', blob: { myField: 'foobar', package: 'boba-fett', schema: 'custom.3' } },
        ]
      : [],
    deprecations: opts.includeDeprecations
      ? [
          {
            schema: 'olm.deprecations',
            package: 'anakin',
            entries: [
              { reference: { schema: 'olm.bundle', name: n('anakin', '0.0.1') }, message: 'This bundle version is deprecated' },
              { reference: { schema: 'olm.channel', name: 'light' }, message: 'This channel is deprecated' },
              { reference: { schema: 'olm.package' }, message: 'This package is deprecated... there is another' },
            ],
          },
        ]
      : [],
  });
}
