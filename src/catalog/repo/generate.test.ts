// generate over fake tools: what is rendered when, atomic replacement, failures that leave files
// and the record alone, and the whole-tree validation at the end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emptyConfig, type DeclarativeConfig } from '../declcfg/types.js';
import { generate } from './generate.js';
import type { CatalogTools } from './tools.js';

/** Renders "package: NAME" templates into one package blob; "fail" fails; counts renders. */
function fakeTools(validationError?: string): CatalogTools & { renders: string[] } {
  const renders: string[] = [];
  return {
    renders,
    async renderTemplate(text: string): Promise<DeclarativeConfig> {
      const name = /package: (\S+)/.exec(text)?.[1];
      renders.push(name ?? '?');
      if (text.includes('fail')) throw new Error('render: unable to read file: boom');
      const cfg = emptyConfig();
      cfg.packages.push({ schema: 'olm.package', name: name!, defaultChannel: 'stable' });
      return cfg;
    },
    writeYAML: (cfg) => cfg.packages.map((p) => `---\ndefaultChannel: ${p.defaultChannel}\nname: ${p.name}\nschema: olm.package\n`).join(''),
    loadFS: async () => emptyConfig(),
    validate() {
      if (validationError) throw new Error(validationError);
    },
  };
}

async function repo(ops: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'kplane-generate-'));
  for (const [op, veneer] of Object.entries(ops)) {
    await mkdir(join(root, 'catalog', op), { recursive: true });
    await writeFile(join(root, 'catalog', op, 'veneer.yaml'), veneer);
  }
  return root;
}

test('generate renders what changed, rewrites hand edits, keeps files on failure', async () => {
  const root = await repo({ a: 'package: a\n', b: 'package: b\n' });
  try {
    const tools = fakeTools();
    const lines: string[] = [];
    let r = await generate({ root, tools, progress: (l) => lines.push(l) });
    assert.equal(r.ok, true);
    assert.deepEqual(tools.renders, ['a', 'b']);
    assert.equal(await readFile(join(root, 'catalog/a/catalog.yaml'), 'utf8'), '---\ndefaultChannel: stable\nname: a\nschema: olm.package\n');
    assert.deepEqual(lines.slice(0, 2), ['[1/2] a: rendering catalog/a/veneer.yaml', '[1/2] a: wrote catalog/a/catalog.yaml: 0 bundles, 0 channels']);

    tools.renders.length = 0;
    r = await generate({ root, tools });
    assert.deepEqual(tools.renders, [], 'nothing changed');
    assert.deepEqual(
      r.operators.map((o) => o.status),
      ['unchanged', 'unchanged'],
    );

    await writeFile(join(root, 'catalog/b/catalog.yaml'), 'edited\n');
    await generate({ root, tools });
    assert.deepEqual(tools.renders, ['b'], 'the hand-edited one');
    assert.match(await readFile(join(root, 'catalog/b/catalog.yaml'), 'utf8'), /name: b/);

    tools.renders.length = 0;
    const good = await readFile(join(root, 'catalog/a/catalog.yaml'), 'utf8');
    await writeFile(join(root, 'catalog/a/veneer.yaml'), 'package: a\nfail\n');
    r = await generate({ root, tools });
    assert.equal(r.ok, false);
    assert.deepEqual(
      r.operators.map((o) => [o.operator, o.status, o.error]),
      [
        ['a', 'failed', 'render: unable to read file: boom'],
        ['b', 'unchanged', undefined],
      ],
    );
    assert.equal(await readFile(join(root, 'catalog/a/catalog.yaml'), 'utf8'), good);
    assert.deepEqual((await readdir(join(root, 'catalog/a'))).sort(), ['catalog.yaml', 'veneer.yaml']);

    // the template restored: the record of the last good render still holds
    await writeFile(join(root, 'catalog/a/veneer.yaml'), 'package: a\n');
    tools.renders.length = 0;
    r = await generate({ root, tools });
    assert.deepEqual(tools.renders, []);
    // a different mode renders everything again
    r = await generate({ root, tools, mode: 'legacy' });
    assert.deepEqual(tools.renders, ['a', 'b']);
    await assert.rejects(generate({ root, tools, operators: ['nope'] }), { message: 'operator "nope" not found: no catalog/nope/veneer.yaml' });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('generate fails when the whole catalog does not validate', async () => {
  const root = await repo({ a: 'package: a\n' });
  try {
    const r = await generate({ root, tools: fakeTools('invalid index:\n└── invalid package "a"') });
    assert.equal(r.ok, false);
    assert.equal(r.validationError, 'invalid index:\n└── invalid package "a"');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
