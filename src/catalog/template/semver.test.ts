// The semver template against upstream's own cases (operator-registry HEAD
// alpha/template/semver/semver_test.go, transcribed into testdata/current/*.json), the README's
// worked examples (whole catalogs, compared as opm writes them), and bad input with opm's messages.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Bundle, Channel, DeclarativeConfig } from '../declcfg/types.js';
import { emptyConfig } from '../declcfg/types.js';
import { writeJSON } from '../declcfg/write.js';
import { mustParse, type Version } from '../../golang/semver.js';
import type { ChannelArchetype } from './common.js';
import {
  generateChannels,
  linkChannels,
  populatePackageMetadata,
  readSemverTemplate,
  renderSemverTemplate,
  versionsFromStandardChannels,
  type EntryTuple,
  type StreamType,
} from './semver.js';
import { README_VERSIONS, aBundle, bundle, fixture, fixtureJSON, fixtureRenderer, testoperatorBundle, type ChannelFixture } from './testdata/fixtures.js';

interface LinkCase {
  name: string;
  unlinked: Record<string, string[]>;
  entries: { arch: ChannelArchetype; kind: StreamType; name: string; parent: string; index: number; version: string }[];
  out: ChannelFixture[];
}

function unlinkedChannels(u: Record<string, string[]>, pkg = 'a'): Map<string, Channel> {
  return new Map(Object.entries(u).map(([name, entries]) => [name, { schema: 'olm.channel', name, package: pkg, entries: entries.map((e) => ({ name: e })) }]));
}

function versionMap(v: Record<string, string>): Map<string, Version> {
  return new Map(Object.entries(v).map(([n, s]) => [n, mustParse(s)]));
}

function noVersions(): Record<ChannelArchetype, Map<string, Version>> {
  return { candidate: new Map(), fast: new Map(), stable: new Map() };
}

describe('semver template (current algorithm): upstream TestLinkChannels', () => {
  const { cases } = fixtureJSON<{ cases: LinkCase[] }>('current/link-channels.json');
  for (const c of cases) {
    it(c.name, () => {
      const entries: EntryTuple[] = c.entries.map((e) => ({ ...e, version: mustParse(e.version) }));
      assert.deepEqual(linkChannels(unlinkedChannels(c.unlinked), entries), c.out);
    });
  }
});

describe('semver template (current algorithm): upstream TestGenerateChannels', () => {
  const fx = fixtureJSON<{
    versions: { stable: Record<string, string> };
    majorLinkedChannels: ChannelFixture[];
    minorLinkedChannels: ChannelFixture[];
    cases: {
      name: string;
      generateMinorChannels: boolean;
      generateMajorChannels: boolean;
      defaultChannel: string;
      channelTypePreference: StreamType;
      out: 'major' | 'minor' | 'combined';
    }[];
  }>('current/generate-channels.json');
  const combined = [...fx.minorLinkedChannels, ...fx.majorLinkedChannels].sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const c of fx.cases) {
    it(c.name, () => {
      const versions = { ...noVersions(), stable: versionMap(fx.versions.stable) };
      const state = { pkg: 'a', defaultChannel: '' };
      const out = generateChannels(
        {
          generateMajorChannels: c.generateMajorChannels,
          generateMinorChannels: c.generateMinorChannels,
          defaultChannelTypePreference: c.channelTypePreference,
        },
        versions,
        state,
      );
      const want = c.out === 'major' ? fx.majorLinkedChannels : c.out === 'minor' ? fx.minorLinkedChannels : combined;
      assert.deepEqual(out, want);
      assert.equal(state.defaultChannel, c.defaultChannel);
    });
  }
});

const SUNNY = ['0.1.0', '0.1.1', '1.1.0', '1.2.1', '1.3.1', '2.1.0', '2.1.1', '2.3.1', '2.3.2', '1.3.1-alpha'];

describe('semver template (current algorithm): upstream TestGetVersionsFromStandardChannel and TestBailOnVersionBuildMetadata', () => {
  it('sunny day case: versions per archetype, package learned', () => {
    const cfg = emptyConfig();
    cfg.bundles = ['0.1.0', '0.1.1', '1.1.0', '1.2.1', '1.3.1-alpha', '1.3.1', '2.1.0', '2.1.1', '2.3.1', '2.3.2'].map(aBundle);
    const state = { pkg: '', defaultChannel: '' };
    const t = { bundles: { candidate: [], fast: [], stable: SUNNY.map((v) => `repo/origin/a-v${v}`) } };
    const v = versionsFromStandardChannels(t, cfg, state, (img) => img);
    assert.equal(v.candidate.size, 0);
    assert.equal(v.fast.size, 0);
    assert.deepEqual(
      [...v.stable.entries()].map(([n, ver]) => [n, ver.toString()]),
      SUNNY.map((s) => [`a-v${s}`, s]),
    );
    assert.equal(state.pkg, 'a');
    assert.deepEqual(cfg.packages, [{ schema: 'olm.package', name: 'a', defaultChannel: '' }]);
  });

  it('aborts on versions that differ only by build metadata', () => {
    const versions = [...SUNNY, '1.3.1-alpha+2001Jan21', '1.3.1-alpha+2003May06'];
    const cfg = emptyConfig();
    cfg.bundles = versions.map(aBundle);
    const t = { bundles: { candidate: [], fast: [], stable: versions.map((v) => `repo/origin/a-v${v}`) } };
    assert.throws(() => versionsFromStandardChannels(t, cfg, { pkg: '', defaultChannel: '' }, (i) => i), {
      message:
        'encountered bundle versions which differ only by build metadata, which cannot be ordered: [bundle version "1.3.1-alpha+2001Jan21" cannot be compared to "1.3.1-alpha", bundle version "1.3.1-alpha+2003May06" cannot be compared to "1.3.1-alpha"]',
    });
  });
});

describe('semver template (current algorithm): upstream TestPopulatePackageMetadata', () => {
  const csv = (spec: string): string =>
    `{"apiVersion": "operators.coreos.com/v1alpha1", "kind": "ClusterServiceVersion", "metadata": {"name": "test.v1.0.0"}, "spec": ${spec}}`;
  const pkgCfg = (channels: Channel[], bundles: Bundle[]): DeclarativeConfig => ({
    ...emptyConfig(),
    packages: [{ schema: 'olm.package', name: 'test-operator', defaultChannel: '' }],
    channels,
    bundles,
  });
  const ch = (name: string, entries: string[]): Channel => ({
    schema: 'olm.channel',
    name,
    package: 'test-operator',
    entries: entries.map((e) => ({ name: e })),
  });
  const b = (name: string, csvJSON: string): Bundle => ({ schema: 'olm.bundle', name, package: 'test-operator', image: `quay.io/test:${name}`, csvJSON });
  const one = (spec: string): DeclarativeConfig => pkgCfg([ch('stable', ['test-bundle'])], [b('test-bundle', csv(spec))]);

  const cases: { name: string; cfg: DeclarativeConfig; dc: string; desc?: string; icon?: { base64data: string; mediatype: string } }[] = [
    {
      name: 'successfully populate icon and description from head bundle',
      cfg: pkgCfg(
        [ch('stable-v1', ['test-operator-v1.0.0', 'test-operator-v1.1.0'])],
        [
          b('test-operator-v1.0.0', csv('{"description": "Old description", "icon": [{"base64data": "b2xkZGF0YQ==", "mediatype": "image/png"}]}')),
          b(
            'test-operator-v1.1.0',
            csv('{"description": "Test operator provides awesome functionality", "icon": [{"base64data": "aGVsbG93b3JsZA==", "mediatype": "image/svg+xml"}]}'),
          ),
        ],
      ),
      dc: 'stable-v1',
      desc: 'Test operator provides awesome functionality',
      icon: { base64data: Buffer.from('helloworld').toString('base64'), mediatype: 'image/svg+xml' },
    },
    { name: 'default channel not found', cfg: pkgCfg([ch('stable', [])], []), dc: 'nonexistent' },
    { name: 'empty channel entries', cfg: pkgCfg([ch('stable', [])], []), dc: 'stable' },
    { name: 'head bundle not found in bundles', cfg: pkgCfg([ch('stable', ['missing-bundle'])], []), dc: 'stable' },
    { name: 'bundle has no CSV JSON', cfg: pkgCfg([ch('stable', ['test-bundle'])], [b('test-bundle', '')]), dc: 'stable' },
    {
      name: 'CSV has no description',
      cfg: one('{"icon": [{"base64data": "aGVsbG8=", "mediatype": "image/png"}]}'),
      dc: 'stable',
      icon: { base64data: 'aGVsbG8=', mediatype: 'image/png' },
    },
    { name: 'CSV has no icon', cfg: one('{"description": "Test description"}'), dc: 'stable', desc: 'Test description' },
    {
      name: 'CSV has empty description',
      cfg: one('{"description": "", "icon": [{"base64data": "aGVsbG8=", "mediatype": "image/png"}]}'),
      dc: 'stable',
      icon: { base64data: 'aGVsbG8=', mediatype: 'image/png' },
    },
    { name: 'CSV has empty icons array', cfg: one('{"description": "Test description", "icon": []}'), dc: 'stable', desc: 'Test description' },
    {
      name: 'CSV has multiple icons - uses first one',
      cfg: one(
        '{"description": "Test description", "icon": [{"base64data": "Zmlyc3Q=", "mediatype": "image/png"}, {"base64data": "c2Vjb25k", "mediatype": "image/svg+xml"}]}',
      ),
      dc: 'stable',
      desc: 'Test description',
      icon: { base64data: Buffer.from('first').toString('base64'), mediatype: 'image/png' },
    },
    // beyond upstream's cases: Go decoding details
    {
      name: 'icon base64 that Go cannot decode leaves the icon out',
      cfg: one('{"description": "d", "icon": [{"base64data": "aGVsbG8", "mediatype": "image/png"}]}'),
      dc: 'stable',
      desc: 'd',
    },
    {
      name: 'icon keys match case-insensitively',
      cfg: one('{"icon": [{"Base64Data": "aGVsbG8=", "MediaType": "image/png"}]}'),
      dc: 'stable',
      icon: { base64data: 'aGVsbG8=', mediatype: 'image/png' },
    },
    {
      name: 'a CSV whose metadata does not decode (a boolean annotation) gives nothing',
      cfg: pkgCfg([ch('stable', ['test-bundle'])], [b('test-bundle', '{"metadata": {"annotations": {"certified": false}}, "spec": {"description": "d"}}')]),
      dc: 'stable',
    },
    { name: 'spec is null', cfg: pkgCfg([ch('stable', ['test-bundle'])], [b('test-bundle', '{"spec": null}')]), dc: 'stable' },
    {
      name: 'the Spec key matches case-insensitively',
      cfg: pkgCfg([ch('stable', ['test-bundle'])], [b('test-bundle', '{"Spec": {"description": "d"}}')]),
      dc: 'stable',
      desc: 'd',
    },
    {
      name: 'a description that is not a string is skipped',
      cfg: one('{"description": 7, "icon": [{"base64data": "aGVsbG8=", "mediatype": "image/png"}]}'),
      dc: 'stable',
      icon: { base64data: 'aGVsbG8=', mediatype: 'image/png' },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      populatePackageMetadata(c.cfg, c.dc);
      const p = c.cfg.packages[0]!;
      assert.equal(p.description, c.desc);
      assert.deepEqual(p.icon, c.icon);
    });
  }
  it('no packages in config', () => {
    const cfg = emptyConfig();
    populatePackageMetadata(cfg, 'stable');
    assert.deepEqual(cfg.packages, []);
  });
});

const TEMPLATE = (major: string, minor: string, pref: string): string => `---
schema: olm.semver
generateMajorChannels: ${major}
generateMinorChannels: ${minor}
defaultChannelTypePreference: ${pref}
candidate:
    bundles:
        - image: quay.io/foo/olm:testoperator.v0.1.0
        - image: quay.io/foo/olm:testoperator.v0.1.1
        - image: quay.io/foo/olm:testoperator.v0.1.2
        - image: quay.io/foo/olm:testoperator.v0.1.3
        - image: quay.io/foo/olm:testoperator.v0.2.0
        - image: quay.io/foo/olm:testoperator.v0.2.1
        - image: quay.io/foo/olm:testoperator.v0.2.2
        - image: quay.io/foo/olm:testoperator.v0.3.0
        - image: quay.io/foo/olm:testoperator.v1.0.0
        - image: quay.io/foo/olm:testoperator.v1.0.1
        - image: quay.io/foo/olm:testoperator.v1.1.0
fast:
    bundles:
        - image: quay.io/foo/olm:testoperator.v0.2.1
        - image: quay.io/foo/olm:testoperator.v0.2.2
        - image: quay.io/foo/olm:testoperator.v0.3.0
        - image: quay.io/foo/olm:testoperator.v1.0.1
        - image: quay.io/foo/olm:testoperator.v1.1.0
stable:
    bundles:
        - image: quay.io/foo/olm:testoperator.v1.0.1
`;

describe('semver template (current algorithm): upstream TestReadFile', () => {
  it('valid', () => {
    const t = readSemverTemplate(TEMPLATE('true', 'true', 'minor'));
    assert.equal(t.generateMajorChannels, true);
    assert.equal(t.generateMinorChannels, true);
    assert.equal(t.defaultChannelTypePreference, 'minor');
    assert.deepEqual(t.bundles.stable, ['quay.io/foo/olm:testoperator.v1.0.1']);
    assert.equal(t.bundles.candidate.length, 11);
  });
  it('unknown channel prefix', () => {
    const input =
      TEMPLATE('true', 'true', 'minor').replace('defaultChannelTypePreference: minor\n', '') +
      'invalid:\n    bundles:\n        - image: quay.io/foo/olm:testoperator.v1.0.1\n';
    assert.throws(() => readSemverTemplate(input), { message: 'error unmarshaling JSON: while decoding JSON: json: unknown field "invalid"' });
  });
  it('generate/default mismatch, minor/major', () => {
    assert.throws(() => readSemverTemplate(TEMPLATE('true', 'false', 'minor')), {
      message: "schema attribute mismatch: DefaultChannelTypePreference set to 'minor' doesn't make sense if not generating minor-version channels",
    });
  });
  it('generate/default mismatch, major/minor', () => {
    assert.throws(() => readSemverTemplate(TEMPLATE('false', 'true', 'major')), {
      message: "schema attribute mismatch: DefaultChannelTypePreference set to 'major' doesn't make sense if not generating major-version channels",
    });
  });
  it('unknown defaultchanneltypepreference', () => {
    assert.throws(() => readSemverTemplate(TEMPLATE('false', 'true', 'foo')), {
      message: "unknown DefaultChannelTypePreference: \"foo\"\nValid values are 'major' or 'minor'",
    });
  });
  // beyond upstream's cases: how sigs.k8s.io/yaml and encoding/json read the file
  it('keys match fields case-insensitively; YAML 1.1 booleans; defaults', () => {
    const t = readSemverTemplate('SCHEMA: olm.semver\nGenerateMajorChannels: yes\nCandidate:\n  Bundles:\n  - Image: a\n');
    assert.deepEqual(t, {
      schema: 'olm.semver',
      generateMajorChannels: true,
      generateMinorChannels: false,
      defaultChannelTypePreference: 'major',
      bundles: { candidate: ['a'], fast: [], stable: [] },
    });
    const d = readSemverTemplate('schema: olm.semver\n');
    assert.equal(d.generateMinorChannels, true);
    assert.equal(d.defaultChannelTypePreference, 'minor');
  });
  it('wrong schema', () => {
    assert.throws(() => readSemverTemplate('schema: olm.template.basic\n'), { message: 'readFile: input file has unknown schema, should be "olm.semver"' });
    assert.throws(() => readSemverTemplate(''), { message: 'readFile: input file has unknown schema, should be "olm.semver"' });
  });
  it('the first error in sorted key order wins; unknown nested fields too', () => {
    assert.throws(() => readSemverTemplate('schema: olm.semver\nzzz: 1\naaa: 2\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: unknown field "aaa"',
    });
    assert.throws(() => readSemverTemplate('schema: olm.semver\nstable:\n  bundles:\n  - image: x\n    digest: y\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: unknown field "digest"',
    });
  });
  it('type errors name the Go field as encoding/json does', () => {
    assert.throws(() => readSemverTemplate('schema: olm.semver\ngenerateMajorChannels: "true"\n'), {
      message:
        'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field SemverTemplateData.generateMajorChannels of type bool',
    });
    assert.throws(() => readSemverTemplate('schema: olm.semver\nstable:\n  bundles: [x]\n'), {
      message:
        'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct field channelBundles.stable.bundles of type semver.bundleEntry',
    });
    assert.throws(() => readSemverTemplate('- schema: olm.semver\n'), {
      message: 'error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go value of type semver.SemverTemplateData',
    });
  });
  it('a scalar bound for a string field becomes that string (sigs.k8s.io/yaml)', () => {
    const t = readSemverTemplate('schema: olm.semver\nstable:\n  bundles:\n  - image: 1.50\n  - image: 0x10\n  - image: true\n');
    assert.deepEqual(t.bundles.stable, ['1.5', '16', 'true']);
  });
  it('duplicate keys are refused (UnmarshalStrict), each named by line', () => {
    assert.throws(() => readSemverTemplate('schema: olm.semver\nstable: {}\nschema: olm.semver\nstable: {}\n'), {
      message: 'error converting YAML to JSON: yaml: unmarshal errors:\n  line 3: key "schema" already set in map\n  line 4: key "stable" already set in map',
    });
  });
});

/** README channels and package, parsed from the YAML shown there. */
function readmeExpected(path: string): { packages: unknown[]; channels: unknown[] } {
  const docs = parseAllDocuments(fixture(path)).map((d) => d.toJS() as Record<string, unknown>);
  return { packages: docs.filter((d) => d['schema'] === 'olm.package'), channels: docs.filter((d) => d['schema'] === 'olm.channel') };
}

/** Package and channel blobs of a rendered catalog, as opm writes them (through JSON). */
function written(cfg: DeclarativeConfig): { packages: unknown[]; channels: unknown[]; text: string } {
  const text = writeJSON(cfg);
  const blobs = text
    .split(/\n(?=\{)/)
    .filter((s) => s.trim() !== '')
    .map((s) => JSON.parse(s) as Record<string, unknown>);
  return { packages: blobs.filter((b) => b['schema'] === 'olm.package'), channels: blobs.filter((b) => b['schema'] === 'olm.channel'), text };
}

describe('semver template (current algorithm): the README examples, rendered end to end', () => {
  for (const kind of ['major', 'minor'] as const) {
    it(`${kind} channels: package and channels as the README shows them; catalog bytes as opm writes them`, async () => {
      const r = fixtureRenderer(README_VERSIONS.map(testoperatorBundle));
      const cfg = await renderSemverTemplate(fixture(`readme-${kind}.template.yaml`), { renderBundle: r.render });
      const got = written(cfg);
      const want = readmeExpected(`current/readme-${kind}.expected.yaml`);
      assert.deepEqual(got.packages, want.packages);
      assert.deepEqual(got.channels, want.channels);
      assert.equal(got.text, fixture(`current/readme-${kind}.catalog.json`));
      // every listed image rendered once, in order of first appearance
      assert.deepEqual(
        r.asked,
        README_VERSIONS.map((v) => `quay.io/foo/olm:testoperator.v${v}`),
      );
    });
  }
});

describe('semver template (current algorithm): bad input gives opm messages', () => {
  const tmpl = (stable: string[], extra = ''): string => `schema: olm.semver\n${extra}stable:\n  bundles:\n${stable.map((i) => `  - image: ${i}\n`).join('')}`;
  const render = (input: string, bundles: Bundle[]): Promise<DeclarativeConfig> =>
    renderSemverTemplate(input, { renderBundle: fixtureRenderer(bundles).render });

  it('unknown keys', async () => {
    await assert.rejects(render('schema: olm.semver\nGenerateMajorChannel: true\n', []), {
      message: 'render: unable to read file: error unmarshaling JSON: while decoding JSON: json: unknown field "GenerateMajorChannel"',
    });
  });
  it('wrong schema', async () => {
    await assert.rejects(render('schema: olm.veneer\n', []), {
      message: 'render: unable to read file: readFile: input file has unknown schema, should be "olm.semver"',
    });
  });
  it('no bundles', async () => {
    await assert.rejects(render('schema: olm.semver\n', []), { message: 'render: no bundles specified or no bundles could be rendered' });
  });
  it('a renderer error is returned as is', async () => {
    await assert.rejects(render(tmpl(['nope']), []), { message: 'render reference "nope": no such fixture image' });
  });
  it('duplicate bundle name in one channel', async () => {
    const a = aBundle('1.0.0');
    const twin = { ...aBundle('1.0.0'), image: 'repo/other/a-v1.0.0' };
    await assert.rejects(render(tmpl([a.image, twin.image]), [a, twin]), {
      message: 'render: unable to post-process bundle info: duplicate bundle name "a-v1.0.0"',
    });
  });
  it('build-metadata collisions', async () => {
    const bs = [aBundle('1.0.0+1'), aBundle('1.0.0+2')];
    await assert.rejects(render(tmpl(bs.map((b) => b.image)), bs), {
      message:
        'render: unable to post-process bundle info: encountered bundle versions which differ only by build metadata, which cannot be ordered: bundle version "1.0.0+2" cannot be compared to "1.0.0"',
    });
  });
  it('bundles of two packages', async () => {
    const bs = [aBundle('1.0.0'), bundle('b', 'b-v1', 'repo/b-v1', '1.0.0')];
    await assert.rejects(render(tmpl(bs.map((b) => b.image)), bs), {
      message: 'render: unable to post-process bundle info: bundle "b" does not belong to this package: "a"',
    });
  });
  it('invalid bundle version', async () => {
    const bs = [bundle('a', 'a-v1', 'repo/a-v1', 'v1.0.0')];
    await assert.rejects(render(tmpl(['repo/a-v1']), bs), {
      message: 'render: unable to post-process bundle info: bundle "a-v1" has invalid version "v1.0.0": Invalid character(s) found in major number "v1"',
    });
  });
  it('no olm.package property', async () => {
    const bs = [{ ...aBundle('1.0.0'), properties: [] }];
    await assert.rejects(render(tmpl(['repo/origin/a-v1.0.0']), bs), {
      message: 'render: unable to post-process bundle info: bundle "a-v1.0.0" has multiple "olm.package" properties, expected exactly 1',
    });
  });
  it('a malformed olm.package property', async () => {
    const bs = [{ ...aBundle('1.0.0'), properties: [{ type: 'olm.package', value: { packageName: 'a', version: 1 } }] }];
    await assert.rejects(render(tmpl(['repo/origin/a-v1.0.0']), bs), {
      message:
        'render: unable to post-process bundle info: parse properties for bundle "a-v1.0.0": parse property[0] of type "olm.package": json: cannot unmarshal number into Go struct field Package.version of type string',
    });
  });
  it('a reference rendering to several bundles', async () => {
    await assert.rejects(
      renderSemverTemplate(tmpl(['catalog']), { renderBundle: async () => ({ ...emptyConfig(), bundles: [aBundle('1.0.0'), aBundle('1.0.1')] }) }),
      { message: 'bundle reference "catalog" resulted in 2 bundles, expected 1' },
    );
  });
  it('the earliest failing image is reported, whatever the timing', async () => {
    const slowFail = async (image: string): Promise<Bundle> => {
      await new Promise((r) => setTimeout(r, image === 'img0' ? 30 : 1));
      throw new Error(`failed ${image}`);
    };
    await assert.rejects(renderSemverTemplate(tmpl(['img0', 'img1', 'img2']), { renderBundle: slowFail }), { message: 'failed img0' });
  });
});

describe('semver template (current algorithm): default channel and package metadata end to end', () => {
  it('stable outranks a newer candidate; the head CSV gives description and icon', async () => {
    const bs = ['1.0.0', '1.1.0', '2.0.0'].map(aBundle);
    bs[0]!.csvJSON = JSON.stringify({ spec: { description: 'stable head', icon: [{ base64data: 'aGVsbG8=', mediatype: 'image/png' }] } });
    const input = `schema: olm.semver\ncandidate:\n  bundles:\n${bs.map((b) => `  - image: ${b.image}\n`).join('')}stable:\n  bundles:\n  - image: ${bs[0]!.image}\n`;
    const cfg = await renderSemverTemplate(input, { renderBundle: fixtureRenderer(bs).render });
    assert.deepEqual(cfg.packages, [
      { schema: 'olm.package', name: 'a', defaultChannel: 'stable-v1.0', icon: { base64data: 'aGVsbG8=', mediatype: 'image/png' }, description: 'stable head' },
    ]);
    assert.deepEqual(
      cfg.channels.map((c) => [c.name, c.entries]),
      [
        ['candidate-v1.0', [{ name: 'a-v1.0.0' }]],
        ['candidate-v1.1', [{ name: 'a-v1.1.0', replaces: 'a-v1.0.0' }]],
        ['candidate-v2.0', [{ name: 'a-v2.0.0' }]],
        ['stable-v1.0', [{ name: 'a-v1.0.0' }]],
      ],
    );
  });
});
