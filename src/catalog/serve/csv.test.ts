// csvFromMetadata against a CSV json.Marshal wrote (upstream's server_test includeManifestsCSVOnly
// csvJson for etcdoperator.v0.9.2): the metadata is what opm's bundle-object-to-csv-metadata migration
// keeps of that CSV; the expected text is the same CSV with the install strategy reduced to opm's stub.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { csvFromMetadata } from './csv.js';

const here = dirname(fileURLToPath(import.meta.url));
const marshalled = readFileSync(join(here, 'testdata/expected/etcdoperator.v0.9.2.csv-only.json'), 'utf8').trim();

type Obj = Record<string, unknown>;
const htmlEscaped = (text: string): string => text.replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

describe('csvFromMetadata', () => {
  const csv = JSON.parse(marshalled) as { metadata: Obj; spec: Obj };
  const spec = csv.spec;
  // property.CSVMetadata as MustBuildCSVMetadata fills it from a CSV
  const metadata: Obj = {
    annotations: csv.metadata.annotations,
    apiServiceDefinitions: spec.apiservicedefinitions,
    crdDescriptions: spec.customresourcedefinitions,
    description: spec.description,
    displayName: spec.displayName,
    keywords: spec.keywords,
    links: spec.links,
    maintainers: spec.maintainers,
    maturity: spec.maturity,
    provider: spec.provider,
  };
  const icon = (spec.icon as { base64data: string; mediatype: string }[])[0]!;

  it('writes the CSV json.Marshal writes: field order, omitempty, map keys sorted, HTML escaped', () => {
    const out = csvFromMetadata({
      metadata,
      name: 'etcdoperator.v0.9.2',
      version: '0.9.2',
      icon,
      relatedImages: spec.relatedImages as { name: string; image: string }[],
      packageDescription: 'not used: the metadata has a description',
    });
    const expected = JSON.parse(marshalled) as { spec: Obj };
    expected.spec.install = { strategy: 'deployment', spec: { deployments: null } };
    assert.equal(out, htmlEscaped(JSON.stringify(expected)));
  });

  it('takes the package description when the metadata has none, and leaves out what is empty', () => {
    const out = JSON.parse(
      csvFromMetadata({ metadata: { displayName: 'x' }, name: 'x.v1.0.0', version: '1.0.0', relatedImages: [], packageDescription: 'from the package' }),
    ) as { spec: Obj; metadata: Obj };
    assert.deepEqual(out.metadata, { name: 'x.v1.0.0', creationTimestamp: null });
    assert.deepEqual(Object.keys(out.spec), [
      'install',
      'version',
      'customresourcedefinitions',
      'apiservicedefinitions',
      'displayName',
      'description',
      'provider',
      'cleanup',
    ]);
    assert.equal(out.spec.description, 'from the package');
    assert.deepEqual(out.spec.provider, {});
  });
});
