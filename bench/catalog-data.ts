// The generated catalog of the catalog benchmark (bench/catalog.ts; src/catalog/serve's
// packed-parity.test.ts reads a small one too): PACKAGES packages of BUNDLES bundles, each bundle as
// `opm render` writes one from an image with csv-metadata migration (olm.package, two olm.gvk, an
// olm.package.required, olm.csv.metadata, related images).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One package: a stable channel through every bundle (replaces chain, skipRange), a fast channel of the last ten. */
export function packageBlobs(p: number, BUNDLES: number): string {
  const pkg = `operator-${String(p).padStart(3, '0')}`;
  const group = `${pkg}.example.com`;
  const out: object[] = [{ schema: 'olm.package', name: pkg, defaultChannel: 'stable', description: `Operator ${p} for the benchmark` }];
  const names = Array.from({ length: BUNDLES }, (_, i) => `${pkg}.v1.${i}.0`);
  out.push({
    schema: 'olm.channel',
    package: pkg,
    name: 'stable',
    entries: names.map((name, i) => ({ name, ...(i > 0 ? { replaces: names[i - 1], skipRange: `>=1.${i - 1}.0 <1.${i}.0` } : {}) })),
  });
  out.push({
    schema: 'olm.channel',
    package: pkg,
    name: 'fast',
    entries: names.slice(-10).map((name, i, a) => ({ name, ...(i > 0 ? { replaces: a[i - 1] } : {}) })),
  });
  names.forEach((name, i) => {
    out.push({
      schema: 'olm.bundle',
      package: pkg,
      name,
      image: `registry.example.com/${pkg}-bundle@sha256:${(p * 1000 + i).toString(16).padStart(64, '0')}`,
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version: `1.${i}.0` } },
        { type: 'olm.gvk', value: { group, kind: 'Database', version: 'v1' } },
        { type: 'olm.gvk', value: { group, kind: 'Backup', version: 'v1' } },
        ...(p > 0 ? [{ type: 'olm.package.required', value: { packageName: 'operator-000', versionRange: '>=1.0.0' } }] : []),
        {
          type: 'olm.csv.metadata',
          value: {
            annotations: { capabilities: 'Full Lifecycle', categories: 'Database', containerImage: `registry.example.com/${pkg}:1.${i}.0` },
            crdDescriptions: {
              owned: [{ name: `databases.${group}`, version: 'v1', kind: 'Database', displayName: 'Database', description: 'A database cluster' }],
            },
            description: `Runs databases (${pkg} 1.${i}.0).`,
            displayName: `Operator ${p}`,
            installModes: [
              { type: 'OwnNamespace', supported: true },
              { type: 'AllNamespaces', supported: true },
            ],
            keywords: ['database', 'dbaas'],
            maintainers: [{ name: 'Platform team', email: 'platform@example.com' }],
            provider: { name: 'Example' },
          },
        },
      ],
      relatedImages: [{ name: 'operator', image: `registry.example.com/${pkg}:1.${i}.0` }],
    });
  });
  return out.map((o) => JSON.stringify(o, null, 2)).join('\n') + '\n';
}

export function writeBenchCatalog(dir: string, packages: number, bundles: number): void {
  for (let p = 0; p < packages; p++) writeFileSync(join(dir, `operator-${p}.json`), packageBlobs(p, bundles));
}
