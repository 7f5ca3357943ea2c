// Writes testdata/{current,legacy}/readme-*.catalog.json: the README's package and channels
// (readme-*.expected.yaml, as upstream's README shows them) plus the fixture bundles, as opm's
// WriteJSON writes a catalog. Built from the README, not from our renderer, so the template tests
// compare our output with upstream's. Run: node --import tsx src/catalog/template/testdata/make-readme-catalogs.ts
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Channel, Package } from '../../declcfg/types.js';
import { emptyConfig } from '../../declcfg/types.js';
import { writeJSON } from '../../declcfg/write.js';
import { README_VERSIONS, fixture, testdata, testoperatorBundle } from './fixtures.js';

for (const name of ['current/readme-major', 'current/readme-minor', 'legacy/readme-major']) {
  const docs = parseAllDocuments(fixture(`${name}.expected.yaml`)).map((d) => d.toJS() as Record<string, unknown>);
  const cfg = emptyConfig();
  cfg.packages = docs.filter((d) => d['schema'] === 'olm.package') as unknown as Package[];
  cfg.channels = docs.filter((d) => d['schema'] === 'olm.channel') as unknown as Channel[];
  cfg.bundles = README_VERSIONS.map(testoperatorBundle);
  writeFileSync(join(testdata, `${name}.catalog.json`), writeJSON(cfg));
}
