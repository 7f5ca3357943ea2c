// `--legacy`: opm v1.26.3's semver veneer, against its own test cases (alpha/veneer/semver/
// semver_test.go at v1.26.3, transcribed into testdata/legacy/*.json), the major-channel example
// of its README (whole catalog), and its messages for bad input.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Bundle, Channel, DeclarativeConfig } from '../declcfg/types.js';
import { writeJSON } from '../declcfg/write.js';
import { mustParse, type Version } from '../../golang/semver.js';
import type { ChannelArchetype } from './common.js';
import { generateLegacyChannels, linkLegacyChannels, readLegacySemverTemplate } from './semver-legacy.js';
import { renderSemverTemplate } from './semver.js';
import { README_VERSIONS, aBundle, fixture, fixtureJSON, fixtureRenderer, testoperatorBundle, type ChannelFixture } from './testdata/fixtures.js';

const byName = (a: { name: string }, b: { name: string }): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
const versionMap = (v: Record<string, string>): Map<string, Version> => new Map(Object.entries(v).map(([n, s]) => [n, mustParse(s)]));
const render = (input: string, bundles: Bundle[]): Promise<DeclarativeConfig> =>
  renderSemverTemplate(input, { legacy: true, renderBundle: fixtureRenderer(bundles).render });

describe('semver template (legacy, opm v1.26.3): upstream TestLinkChannels', () => {
  const fx = fixtureJSON<{
    versions: { stable: Record<string, string> };
    cases: { name: string; avoidSkipPatch: boolean; unlinked: Record<string, string[]>; out: ChannelFixture[] }[];
  }>('legacy/link-channels.json');
  for (const c of fx.cases) {
    it(c.name, () => {
      const unlinked = new Map<string, Channel>(
        Object.entries(c.unlinked).map(([name, es]) => [name, { schema: 'olm.channel', name, package: 'a', entries: es.map((e) => ({ name: e })) }]),
      );
      // upstream compares with ElementsMatch: channel order is not part of the contract
      const out = linkLegacyChannels(unlinked, versionMap(fx.versions.stable), c.avoidSkipPatch).sort(byName);
      assert.deepEqual(out, [...c.out].sort(byName));
    });
  }
});

describe('semver template (legacy, opm v1.26.3): upstream TestGenerateChannels', () => {
  const fx = fixtureJSON<{
    versions: { stable: Record<string, string> };
    cases: { name: string; avoidSkipPatch: boolean; generateMinorChannels: boolean; generateMajorChannels: boolean; out: ChannelFixture[] }[];
  }>('legacy/generate-channels.json');
  for (const c of fx.cases) {
    it(c.name, () => {
      const versions: Record<ChannelArchetype, Map<string, Version>> = { candidate: new Map(), fast: new Map(), stable: versionMap(fx.versions.stable) };
      const state = { pkg: 'a', defaultChannel: '' };
      const out = generateLegacyChannels(c, versions, state).sort(byName);
      assert.deepEqual(out, [...c.out].sort(byName));
      assert.equal(state.defaultChannel, 'stable-v3.1');
    });
  }
});

describe('semver template (legacy, opm v1.26.3): upstream TestGetVersionsFromStandardChannel, TestBailOnVersionBuildMetadata, TestReadFile', () => {
  const SUNNY = ['0.1.0', '0.1.1', '1.1.0', '1.2.1', '1.3.1', '2.1.0', '2.1.1', '2.3.1', '2.3.2', '1.3.1-alpha'];
  const tmpl = (versions: string[]): string => `schema: olm.semver\nstable:\n  bundles:\n${versions.map((v) => `  - image: repo/origin/a-v${v}\n`).join('')}`;

  it('sunny day case: minor channels by default, package learned', async () => {
    const cfg = await render(tmpl(SUNNY), SUNNY.map(aBundle));
    assert.deepEqual(cfg.packages, [{ schema: 'olm.package', name: 'a', defaultChannel: 'stable-v2.3' }]);
    assert.deepEqual(
      cfg.channels.map((c) => c.name),
      ['stable-v0.1', 'stable-v1.1', 'stable-v1.2', 'stable-v1.3', 'stable-v2.1', 'stable-v2.3'],
    );
  });
  it('aborts on versions that differ only by build metadata', async () => {
    const vs = [...SUNNY, '1.3.1-alpha+2001Jan21', '1.3.1-alpha+2003May06'];
    await assert.rejects(render(tmpl(vs), vs.map(aBundle)), {
      message:
        'semver-render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: [bundle version "1.3.1-alpha+2001Jan21" cannot be compared to "1.3.1-alpha", bundle version "1.3.1-alpha+2003May06" cannot be compared to "1.3.1-alpha"]',
    });
  });

  const README_TEMPLATE = `---
schema: olm.semver
generateMajorChannels: true
generateMinorChannels: true
candidate:
    bundles:
        - image: quay.io/foo/olm:testoperator.v0.1.0
fast:
    bundles:
        - image: quay.io/foo/olm:testoperator.v0.2.1
stable:
    bundles:
        - image: quay.io/foo/olm:testoperator.v1.0.1
`;
  it('valid', () => {
    const t = readLegacySemverTemplate(README_TEMPLATE);
    assert.deepEqual(t, {
      schema: 'olm.semver',
      generateMajorChannels: true,
      generateMinorChannels: true,
      avoidSkipPatch: false,
      bundles: {
        candidate: ['quay.io/foo/olm:testoperator.v0.1.0'],
        fast: ['quay.io/foo/olm:testoperator.v0.2.1'],
        stable: ['quay.io/foo/olm:testoperator.v1.0.1'],
      },
    });
  });
  it('unknown channel prefix', () => {
    assert.throws(() => readLegacySemverTemplate(README_TEMPLATE + 'invalid:\n    bundles:\n        - image: quay.io/foo/olm:testoperator.v1.0.1\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: unknown field "invalid"',
    });
  });
});

describe('semver template (legacy, opm v1.26.3): the README example, rendered end to end', () => {
  it('major channels: package and channels as the README shows them; catalog bytes as opm writes them', async () => {
    const cfg = await render(fixture('readme-major.template.yaml'), README_VERSIONS.map(testoperatorBundle));
    const docs = parseAllDocuments(fixture('legacy/readme-major.expected.yaml')).map((d) => d.toJS() as Record<string, unknown>);
    const text = writeJSON(cfg);
    const blobs = text.split(/\n(?=\{)/).map((s) => JSON.parse(s) as Record<string, unknown>);
    assert.deepEqual(
      blobs.filter((b) => b['schema'] !== 'olm.bundle'),
      docs,
    );
    assert.equal(text, fixture('legacy/readme-major.catalog.json'));
  });
});

describe('semver template (legacy, opm v1.26.3): behaviour that differs from today', () => {
  const bs = ['0.1.0', '0.1.1', '0.2.0', '0.2.1'].map(aBundle);
  const list = (vs: Bundle[]): string => vs.map((b) => `  - image: ${b.image}\n`).join('');

  it('AvoidSkipPatch: a replaces chain through every version of each channel', async () => {
    const cfg = await render(
      `schema: olm.semver\navoidSkipPatch: true\ngenerateMajorChannels: true\ngenerateMinorChannels: false\nstable:\n  bundles:\n${list(bs)}`,
      bs,
    );
    assert.deepEqual(cfg.channels, [
      {
        schema: 'olm.channel',
        name: 'stable-v0',
        package: 'a',
        entries: [
          { name: 'a-v0.1.0' },
          { name: 'a-v0.1.1', replaces: 'a-v0.1.0' },
          { name: 'a-v0.2.0', replaces: 'a-v0.1.1' },
          { name: 'a-v0.2.1', replaces: 'a-v0.2.0' },
        ],
      },
    ]);
  });
  it('minor channels are linked on their own: no replaces across Y-streams', async () => {
    const cfg = await render(`schema: olm.semver\nstable:\n  bundles:\n${list(bs)}`, bs);
    assert.deepEqual(
      cfg.channels.map((c) => [c.name, c.entries]),
      [
        ['stable-v0.1', [{ name: 'a-v0.1.0' }, { name: 'a-v0.1.1', skips: ['a-v0.1.0'] }]],
        ['stable-v0.2', [{ name: 'a-v0.2.0' }, { name: 'a-v0.2.1', skips: ['a-v0.2.0'] }]],
      ],
    );
  });
  it('no schema check, and duplicate YAML keys are accepted (the last wins)', async () => {
    const cfg = await render(`schema: whatever\nstable:\n  bundles:\n${list([bs[0]!])}stable:\n  bundles:\n${list([bs[1]!])}`, bs);
    assert.deepEqual(
      cfg.bundles.map((b) => b.name),
      ['a-v0.1.1'],
    );
  });
  it('the default channel: with major and minor channels, the major one (current opm prefers minor)', async () => {
    const two = ['1.0.0', '2.0.0'].map(aBundle);
    const input = `schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\ncandidate:\n  bundles:\n${list(two)}stable:\n  bundles:\n${list([two[0]!])}`;
    assert.equal((await render(input, two)).packages[0]!.defaultChannel, 'stable-v1');
    assert.equal((await renderSemverTemplate(input, { renderBundle: fixtureRenderer(two).render })).packages[0]!.defaultChannel, 'stable-v1.0');
  });
  it("bundle objects keep the bundle's object order, as v1.26 rendered them (today: sorted by value)", async () => {
    const csv = '{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion"}';
    const crd = '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"}';
    const obj = (o: string) => ({ type: 'olm.bundle.object', value: { data: Buffer.from(o).toString('base64') } });
    const b: Bundle = { ...aBundle('1.0.0'), objects: [csv, crd] };
    b.properties = [{ type: 'olm.gvk', value: { group: 'g', kind: 'K', version: 'v1' } }, ...b.properties!, obj(crd), obj(csv)];
    const input = `schema: olm.semver\nstable:\n  bundles:\n  - image: ${b.image}\n`;
    const legacy = await render(input, [b]);
    assert.deepEqual(
      legacy.bundles[0]!.properties!.map((p) => p.type),
      ['olm.gvk', 'olm.package', 'olm.bundle.object', 'olm.bundle.object'],
    );
    assert.deepEqual(legacy.bundles[0]!.properties!.slice(2), [obj(csv), obj(crd)]);
    const current = await renderSemverTemplate(input, { renderBundle: fixtureRenderer([b]).render });
    assert.deepEqual(current.bundles[0]!.properties!.slice(2), [obj(crd), obj(csv)]);
  });
  it('olm.package carries no release (v1.26 had none)', async () => {
    const b: Bundle = { ...aBundle('1.0.0'), properties: [{ type: 'olm.package', value: { packageName: 'a', version: '1.0.0', release: '2' } }] };
    const input = `schema: olm.semver\nstable:\n  bundles:\n  - image: ${b.image}\n`;
    assert.deepEqual((await render(input, [b])).bundles[0]!.properties, [{ type: 'olm.package', value: { packageName: 'a', version: '1.0.0' } }]);
  });
  it('errors carry the semver-render prefix', async () => {
    await assert.rejects(render('schema: olm.semver\nfoo: 1\n', []), {
      message: 'semver-render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field "foo"',
    });
    await assert.rejects(render('schema: olm.semver\n', []), { message: 'semver-render: no bundles specified or no bundles could be rendered' });
    await assert.rejects(render('stable:\n  bundles:\n  - image: missing\n', [aBundle('1.0.0')]), {
      message: 'render reference "missing": no such fixture image',
    });
    const dup = [aBundle('1.0.0'), { ...aBundle('1.0.0'), image: 'other' }];
    await assert.rejects(render(`stable:\n  bundles:\n  - image: ${dup[0]!.image}\n  - image: other\n`, dup), {
      message: 'semver-render: unable to post-process bundle info: duplicate bundle name "a-v1.0.0"',
    });
  });
});

describe('semver template (legacy, opm v1.26.3): -o mermaid as v1.26.3 drew it', () => {
  it('upstream TestWriteMermaidChannels/SuccessNoFilters (v1.26.3)', async () => {
    const { validDeclarativeConfig } = await import('../declcfg/testdata/fixtures.js');
    const { writeLegacyMermaid } = await import('./mermaid-legacy.js');
    assert.equal(writeLegacyMermaid(validDeclarativeConfig({ includeUnrecognized: true })), fixture('legacy/mermaid-no-filters.mmd'));
  });
  it('skipRange edges, and a warning for a skipRange that does not parse', async () => {
    const { writeLegacyMermaid } = await import('./mermaid-legacy.js');
    const bs = ['1.0.0', '1.1.0', '1.2.0'].map(aBundle);
    const cfg: DeclarativeConfig = {
      packages: [],
      channels: [
        {
          schema: 'olm.channel',
          name: 's',
          package: 'a',
          entries: [{ name: 'a-v1.0.0' }, { name: 'a-v1.1.0', skipRange: '<1.1.0' }, { name: 'a-v1.2.0', skipRange: 'bad' }],
        },
      ],
      bundles: bs,
      deprecations: [],
      others: [],
    };
    const warnings: string[] = [];
    assert.equal(
      writeLegacyMermaid(cfg, (l) => warnings.push(l)),
      'graph LR\n  %% package "a"\n  subgraph "a"\n    %% channel "s"\n    subgraph a-s["s"]\n      a-s-a-v1.0.0["a-v1.0.0"]\n      a-s-a-v1.1.0["a-v1.1.0"]\n      a-s-a-v1.0.0["a-v1.0.0"]-- "skipRange(<1.1.0)" --> a-s-a-v1.1.0["a-v1.1.0"]\n      a-s-a-v1.2.0["a-v1.2.0"]\n    end\n  end\n',
    );
    assert.deepEqual(warnings, ['warning: ignoring invalid SkipRange for package/edge "a"/"a-v1.2.0": Could not get version from string: "bad"\n']);
  });
});
