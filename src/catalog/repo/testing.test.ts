// The sanity and integration layers over fake tools: the cases the end-to-end test does not reach
// (a template naming another package, a stale catalog.yaml, a template that does not render).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyConfig, type DeclarativeConfig } from '../declcfg/types.js';
import { runRepoTests } from './testing.js';
import type { CatalogTools } from './tools.js';

const yamlOf = (cfg: DeclarativeConfig): string => cfg.packages.map((p) => `name: ${p.name}\n`).join('');

function tools(loaded: DeclarativeConfig): CatalogTools {
  return {
    async renderTemplate(text) {
      if (text.includes('broken')) throw new Error('render: unable to read file: json: unknown field "broken"');
      const cfg = emptyConfig();
      cfg.packages.push({ schema: 'olm.package', name: /package: (\S+)/.exec(text)![1]!, defaultChannel: 'stable' });
      return cfg;
    },
    writeYAML: yamlOf,
    loadFS: async () => loaded,
    validate() {},
  };
}

test('sanity: package named after its directory, catalog.yaml up to date, unrenderable templates', async () => {
  const root = await mkdtemp(join(tmpdir(), 'kplane-repotest-'));
  try {
    const op = async (name: string, veneer: string, catalog?: string): Promise<void> => {
      await mkdir(join(root, 'catalog', name), { recursive: true });
      await writeFile(join(root, 'catalog', name, 'veneer.yaml'), veneer);
      if (catalog !== undefined) await writeFile(join(root, 'catalog', name, 'catalog.yaml'), catalog);
    };
    await op('a', 'package: a\n', 'name: a\n');
    await op('b', 'package: other\n', 'name: other\n');
    await op('c', 'package: c\n', 'name: stale\n');
    await op('d', 'package: d\nbroken\n');
    const loaded = emptyConfig();
    loaded.packages.push({ schema: 'olm.package', name: 'a', defaultChannel: 'stable' });
    const [sanity, integration] = await runRepoTests({ root, tools: tools(loaded), platforms: [] });
    const byName = new Map(sanity!.cases.map((c) => [c.name, c]));
    assert.deepEqual(
      sanity!.cases.map((c) => `${c.status} ${c.name}`),
      [
        'pass a: template renders',
        'pass a: names its package',
        'pass a: validates alone',
        'pass a: catalog.yaml is up to date',
        'pass b: template renders',
        'fail b: names its package',
        'pass b: validates alone',
        'pass b: catalog.yaml is up to date',
        'pass c: template renders',
        'pass c: names its package',
        'pass c: validates alone',
        'fail c: catalog.yaml is up to date',
        'fail d: template renders',
        'skip d: names its package',
        'skip d: validates alone',
        'skip d: catalog.yaml is up to date',
      ],
    );
    assert.equal(
      byName.get('b: names its package')!.message,
      'catalog/b/veneer.yaml renders package(s) other; the directory must be named after its one package',
    );
    assert.equal(
      byName.get('c: catalog.yaml is up to date')!.message,
      'catalog/c/catalog.yaml differs from what catalog/c/veneer.yaml renders: run "kplane catalog generate"',
    );
    assert.equal(byName.get('d: template renders')!.message, 'render: unable to read file: json: unknown field "broken"');
    const missing = integration!.cases.find((c) => c.name === 'every operator directory is in the catalog')!;
    assert.deepEqual([missing.status, missing.message], ['fail', 'not in the loaded catalog: b, c, d (no catalog.yaml, or it is ignored)']);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
