// Bundles for the template tests, built as upstream's tests build them: an olm.bundle whose only
// property is olm.package {packageName, version} (property.MustBuildPackage), keyed by image.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bundle, Channel } from '../../declcfg/types.js';

export const testdata = join(fileURLToPath(import.meta.url), '..');

export function fixture(name: string): string {
  return readFileSync(join(testdata, name), 'utf8');
}

export function fixtureJSON<T>(name: string): T {
  return JSON.parse(fixture(name)) as T;
}

export function bundle(pkg: string, name: string, image: string, version: string, extra: Partial<Bundle> = {}): Bundle {
  return {
    schema: 'olm.bundle',
    name,
    package: pkg,
    image,
    properties: [{ type: 'olm.package', value: { packageName: pkg, version } }],
    ...extra,
  };
}

/** Upstream's "a" bundles: image repo/origin/a-vX, name a-vX, version X. */
export function aBundle(version: string): Bundle {
  return bundle('a', `a-v${version}`, `repo/origin/a-v${version}`, version);
}

/** The README's testoperator bundles: image quay.io/foo/olm:testoperator.vX. */
export function testoperatorBundle(version: string): Bundle {
  return bundle('testoperator', `testoperator.v${version}`, `quay.io/foo/olm:testoperator.v${version}`, version);
}

/** A renderer over fixture bundles that records what it was asked for. */
export function fixtureRenderer(bundles: Bundle[]): { render: (image: string) => Promise<Bundle>; asked: string[] } {
  const byImage = new Map(bundles.map((b) => [b.image, b]));
  const asked: string[] = [];
  return {
    asked,
    render: async (image: string): Promise<Bundle> => {
      asked.push(image);
      const b = byImage.get(image);
      if (b === undefined) throw new Error(`render reference "${image}": no such fixture image`);
      return structuredClone(b);
    },
  };
}

export const README_VERSIONS = ['0.1.0', '0.1.1', '0.1.2', '0.1.3', '0.2.0', '0.2.1', '0.2.2', '0.3.0', '1.0.0', '1.0.1', '1.1.0'];

export type ChannelFixture = Pick<Channel, 'schema' | 'name' | 'package' | 'entries'>;
