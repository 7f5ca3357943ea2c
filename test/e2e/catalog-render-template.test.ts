// `kplane catalog render-template` as a real process against a real registry on loopback: bundle
// images built from bundle directories and pushed, a semver template naming them, the catalog on
// stdout (today's algorithm and --legacy), and bad input giving opm's message on stderr, exit 1
// and nothing on stdout.
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { buildBundleImage, buildCatalogImage, pushImage } from '../../src/catalog/oci/index.js';
import { startRegistry, type RunningRegistry } from '../support/registry.js';
import { ensureTools, repoRoot, run } from '../support/tools.js';

const bundleTestdata = join(repoRoot, 'src', 'catalog', 'bundle', 'testdata');
const work = mkdtempSync(join(tmpdir(), 'kplane-render-template-'));
after(() => rmSync(work, { recursive: true, force: true }));
const cacheDir = join(work, 'cache');

function kplane(cmd: string, args: string[], input?: string) {
  const opts: { env: NodeJS.ProcessEnv; timeoutMs: number; input?: string } = { env: { KPLANE_PROGRESS: 'none' }, timeoutMs: 120_000 };
  if (input !== undefined) opts.input = input;
  return run(process.execPath, ['bin/kplane.js', 'catalog', cmd, ...args, '--cache-dir', cacheDir], opts);
}

/** foo-bundle-v0.2.0 as another version (CSV name and version changed), optionally with metadata. */
function fooBundle(version: string, extraSpec = ''): string {
  const dir = join(work, `foo-bundle-v${version}`);
  cpSync(join(bundleTestdata, 'foo-bundle-v0.2.0'), dir, { recursive: true });
  const csv = join(dir, 'manifests', 'foo.v0.2.0.csv.yaml');
  const text = readFileSync(csv, 'utf8')
    .replace('  name: foo.v0.2.0\n', `  name: foo.v${version}\n`)
    .replace('  version: 0.2.0\n', `  version: ${version}\n`)
    .replace('spec:\n', `spec:\n${extraSpec}`);
  writeFileSync(csv, text);
  return dir;
}

const blobs = (text: string): Record<string, unknown>[] => text.split(/\n(?=\{)/).map((t) => JSON.parse(t) as Record<string, unknown>);
const blobTexts = (text: string): string[] => text.split(/\n(?=\{)/).map((t) => (t.endsWith('\n') ? t : t + '\n'));

describe('kplane catalog render-template: bundle images from a real registry', { timeout: 300_000 }, () => {
  let reg: RunningRegistry;
  const refs: Record<string, string> = {};
  let template: string;

  before(async () => {
    ensureTools();
    reg = await startRegistry();
    const layout = join(work, 'layout');
    const dirs: Record<string, string> = {
      '0.1.0': join(bundleTestdata, 'foo-bundle-v0.1.0'),
      '0.2.0': fooBundle('0.2.0', '  description: Foo does foo things\n  icon:\n  - base64data: aGVsbG8=\n    mediatype: image/png\n'),
      '0.2.1': fooBundle('0.2.1'),
      '1.0.0': fooBundle('1.0.0'),
    };
    for (const [v, dir] of Object.entries(dirs)) {
      refs[v] = `${reg.host}/foo-operator/foo-bundle:v${v}`;
      buildBundleImage(dir, { layoutDir: layout, tag: `b${v}` });
      await pushImage(`oci:${layout}:b${v}`, refs[v]);
    }
    buildCatalogImage(join(bundleTestdata, 'foo-index-v0.2.0-declcfg'), { layoutDir: layout, tag: 'catalog' });
    await pushImage(`oci:${layout}:catalog`, `${reg.host}/foo-operator/foo-index:v0.2.0`);
    template = [
      'Schema: olm.semver',
      'GenerateMajorChannels: true',
      'GenerateMinorChannels: true',
      'Candidate:',
      '  Bundles:',
      ...['0.1.0', '0.2.0', '0.2.1', '1.0.0'].map((v) => `  - Image: ${refs[v]}`),
      'Stable:',
      '  Bundles:',
      `  - Image: ${refs['0.2.0']}`,
      '',
    ].join('\n');
    writeFileSync(join(work, 'veneer.yaml'), template);
  });
  after(async () => {
    await reg?.stop();
  });

  const entry = (name: string, replaces?: string, skips?: string[]): Record<string, unknown> => ({
    name,
    ...(replaces ? { replaces } : {}),
    ...(skips ? { skips } : {}),
  });
  const channel = (name: string, entries: Record<string, unknown>[]): Record<string, unknown> => ({ schema: 'olm.channel', name, package: 'foo', entries });

  test("today's algorithm: package from the default channel head, Y-stream edges across minor channels, bundles as `catalog render` renders them", async () => {
    const r = await kplane('render-template', ['semver', join(work, 'veneer.yaml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const got = blobs(r.stdout);
    assert.deepEqual(got[0], {
      schema: 'olm.package',
      name: 'foo',
      defaultChannel: 'stable-v0.2',
      icon: { base64data: 'aGVsbG8=', mediatype: 'image/png' },
      description: 'Foo does foo things',
    });
    const v021 = entry('foo.v0.2.1', 'foo.v0.1.0', ['foo.v0.2.0']);
    assert.deepEqual(got.slice(1, 8), [
      channel('candidate-v0', [entry('foo.v0.1.0'), entry('foo.v0.2.0'), v021]),
      channel('candidate-v0.1', [entry('foo.v0.1.0')]),
      channel('candidate-v0.2', [entry('foo.v0.2.0'), v021]),
      channel('candidate-v1', [entry('foo.v1.0.0')]),
      channel('candidate-v1.0', [entry('foo.v1.0.0')]),
      channel('stable-v0', [entry('foo.v0.2.0')]),
      channel('stable-v0.2', [entry('foo.v0.2.0')]),
    ]);
    // the bundle blobs are byte for byte what `kplane catalog render` (opm render) makes of the images
    const rendered = await kplane(
      'render',
      ['0.1.0', '0.2.0', '0.2.1', '1.0.0'].map((v) => refs[v]!),
    );
    assert.equal(rendered.code, 0, rendered.stderr);
    assert.deepEqual(blobTexts(r.stdout).slice(8), blobTexts(rendered.stdout));
    // package and channel blobs are laid out as opm's WriteJSON lays them out
    assert.deepEqual(
      blobTexts(r.stdout).slice(0, 8),
      got.slice(0, 8).map((b) => JSON.stringify(b, null, 4) + '\n'),
    );
  });

  test('standard input, -o yaml carries the same blobs', async () => {
    const j = await kplane('render-template', [], template);
    const y = await kplane('render-veneer', ['semver', '-', '-o', 'yaml'], template);
    assert.equal(j.code, 0, j.stderr);
    assert.equal(y.code, 0, y.stderr);
    const { parseAllDocuments } = await import('yaml');
    assert.deepEqual(
      parseAllDocuments(y.stdout).map((d) => d.toJS() as unknown),
      blobs(j.stdout),
    );
  });

  test('--legacy (opm v1.26.3): channels linked one by one, the major channel as default, no package metadata', async () => {
    const r = await kplane('render-template', ['semver', join(work, 'veneer.yaml'), '--legacy']);
    assert.equal(r.code, 0, r.stderr);
    const got = blobs(r.stdout);
    assert.deepEqual(got[0], { schema: 'olm.package', name: 'foo', defaultChannel: 'stable-v0' });
    assert.deepEqual(got.slice(1, 8), [
      channel('candidate-v0', [entry('foo.v0.1.0'), entry('foo.v0.2.0'), entry('foo.v0.2.1', 'foo.v0.1.0', ['foo.v0.2.0'])]),
      channel('candidate-v0.1', [entry('foo.v0.1.0')]),
      channel('candidate-v0.2', [entry('foo.v0.2.0'), entry('foo.v0.2.1', undefined, ['foo.v0.2.0'])]),
      channel('candidate-v1', [entry('foo.v1.0.0')]),
      channel('candidate-v1.0', [entry('foo.v1.0.0')]),
      channel('stable-v0', [entry('foo.v0.2.0')]),
      channel('stable-v0.2', [entry('foo.v0.2.0')]),
    ]);
    // v1.26 kept the bundle's objects in manifest order (CSV, then CRD); today's opm sorts them (CRD first)
    const kinds = (text: string): string[][] =>
      blobs(text)
        .filter((b) => b['schema'] === 'olm.bundle')
        .map((b) =>
          (b['properties'] as { type: string; value: { data?: string } }[])
            .filter((p) => p.type === 'olm.bundle.object')
            .map((p) => (JSON.parse(Buffer.from(p.value.data!, 'base64').toString()) as { kind: string }).kind),
        );
    assert.deepEqual(kinds(r.stdout)[0], ['ClusterServiceVersion', 'CustomResourceDefinition']);
    const current = await kplane('render-template', ['semver', join(work, 'veneer.yaml')]);
    assert.deepEqual(kinds(current.stdout)[0], ['CustomResourceDefinition', 'ClusterServiceVersion']);
  });

  test("bad input: opm's message, exit 1, nothing on stdout", async () => {
    const cases: [string[], string | undefined, RegExp][] = [
      [
        ['semver'],
        template.replace('Stable:', 'Stabel:'),
        /^Error: rendering template: render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field "Stabel"\n$/,
      ],
      [
        ['semver'],
        template.replace('olm.semver', 'olm.semverr'),
        /^Error: rendering template: render: unable to read file: readFile: input file has unknown schema, should be "olm.semver"\n$/,
      ],
      [[], template.replace('olm.semver', 'olm.semverr'), /^Error: auto-detecting template type: unknown template schema: olm.semverr\n$/],
      [
        ['semver'],
        template + `  - Image: ${refs['0.2.0']?.replace(':v0.2.0', ':v0.2.0-again') ?? ''}\n`,
        /^Error: rendering template: render reference ".*:v0\.2\.0-again": failed to pull image .*\n$/,
      ],
      [
        ['semver'],
        template.replace(`Stable:\n  Bundles:\n`, `Stable:\n  Bundles:\n  - Image: ${'REG'}/foo-operator/foo-index:v0.2.0\n`),
        /^Error: rendering template: render reference ".*foo-index:v0\.2\.0": cannot render declarative config image: not allowed\n$/,
      ],
      [
        ['semver', '--legacy'],
        template.replace('Stable:', 'Stabel:'),
        /^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} semver "stdin": semver-render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field "Stabel"\n$/,
      ],
    ];
    for (const [args, input, want] of cases) {
      const r = await kplane('render-template', args, input?.replace('REG', reg.host));
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, want);
    }
  });

  test('duplicate versions and build-metadata collisions', async () => {
    // one image twice under two tags: the same bundle name twice in one channel
    const again = `${reg.host}/foo-operator/foo-bundle:again`;
    await pushImage(`oci:${join(work, 'layout')}:b0.2.0`, again);
    const dup = `Schema: olm.semver\nStable:\n  Bundles:\n  - Image: ${refs['0.2.0']}\n  - Image: ${again}\n`;
    const r = await kplane('render-template', ['semver'], dup);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'Error: rendering template: render: unable to post-process bundle info: duplicate bundle name "foo.v0.2.0"\n');

    const layout = join(work, 'layout');
    buildBundleImage(fooBundle('0.2.0+build1'), { layoutDir: layout, tag: 'meta1' });
    const meta = `${reg.host}/foo-operator/foo-bundle:meta1`;
    await pushImage(`oci:${layout}:meta1`, meta);
    const collide = `Schema: olm.semver\nStable:\n  Bundles:\n  - Image: ${refs['0.2.0']}\n  - Image: ${meta}\n`;
    const c = await kplane('render-template', ['semver'], collide);
    assert.equal(c.code, 1);
    assert.equal(c.stdout, '');
    assert.equal(
      c.stderr,
      'Error: rendering template: render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version "0.2.0+build1" cannot be compared to "0.2.0"\n',
    );
  });
});
