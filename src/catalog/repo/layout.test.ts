// catalog/.indexignore as init writes it keeps README.md, OWNERS and veneer.yaml out of what opm's
// loader (our loadFS) reads, at every depth; the trap it avoids (a "!*.yaml" after "veneer.yaml")
// is shown too, so the test fails if the loader's pattern order ever stops mattering.
// OWNERS and README.md are not YAML streams of blobs: read, they would fail the load.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadFS } from '../declcfg/load.js';
import { INDEXIGNORE, initRepo } from './layout.js';
import { newOwners, newVeneer } from './veneer.js';

const CATALOG = `---
defaultChannel: stable-v1
name: foo
schema: olm.package
`;

async function repo(): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kplane-layout-'));
  await initRepo(root);
  const op = join(root, 'catalog', 'foo');
  await mkdir(op, { recursive: true });
  await writeFile(join(op, 'veneer.yaml'), newVeneer({ image: 'r.io/foo:v1', channels: ['candidate'] }));
  await writeFile(join(op, 'OWNERS'), newOwners(['alice']));
  await writeFile(join(op, 'README.md'), '# foo\n\nnot a catalog file\n');
  await writeFile(join(op, 'notes.txt'), 'neither is this\n');
  await writeFile(join(op, 'catalog.yaml'), CATALOG);
  return root;
}

test('init writes the layout; its .indexignore keeps README.md, OWNERS and veneer.yaml out', async () => {
  const root = await repo();
  try {
    assert.equal(await readFile(join(root, 'catalog', '.indexignore'), 'utf8'), INDEXIGNORE);
    for (const f of ['catalog/README.md', 'catalog.Dockerfile', '.github/workflows/catalog.yaml', 'platforms/README.md']) await readFile(join(root, f));
    const cfg = await loadFS(join(root, 'catalog'));
    assert.deepEqual(
      cfg.packages.map((p) => p.name),
      ['foo'],
    );
    assert.equal(cfg.others.length, 0);
    // a second init keeps what is there
    const again = await initRepo(root);
    assert.deepEqual(again.created, []);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('the trap: "!*.yaml" after "veneer.yaml" brings veneer.yaml back', async () => {
  const root = await repo();
  try {
    await writeFile(join(root, 'catalog', '.indexignore'), '*\nveneer.yaml\nREADME.md\nOWNERS\n!*.yaml\n');
    // opm reads JSON keys case-insensitively, so the template's "Schema: olm.semver" makes it a
    // blob of an unknown schema: it would silently ship inside the catalog image
    const cfg = await loadFS(join(root, 'catalog'));
    assert.deepEqual(
      cfg.others.map((m) => m.schema),
      ['olm.semver'],
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
