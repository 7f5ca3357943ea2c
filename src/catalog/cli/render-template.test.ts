// `kplane catalog render-template` flag handling and messages, with fixture bundles in place of
// images (the real-registry run is test/e2e/catalog-render-template.test.ts).
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { README_VERSIONS, fixture, fixtureRenderer, testdata, testoperatorBundle } from '../template/testdata/fixtures.js';
import { parseRenderTemplateArgs, renderTemplateToText } from './render-template.js';

const renderer = (): ((image: string) => Promise<import('../declcfg/types.js').Bundle>) => fixtureRenderer(README_VERSIONS.map(testoperatorBundle)).render;
const text = (args: string[]): Promise<string> => renderTemplateToText(parseRenderTemplateArgs(args), renderer());

describe('kplane catalog render-template: arguments', () => {
  const major = join(testdata, 'readme-major.template.yaml');

  it('TYPE FILE, FILE alone (type from the schema), flags anywhere', async () => {
    const want = fixture('current/readme-major.catalog.json');
    assert.equal(await text(['semver', major]), want);
    assert.equal(await text([major]), want);
    assert.equal(await text([major, '-o', 'json']), want);
    assert.equal(await text(['-ojson', major]), want);
    assert.equal(await text(['--output=json', 'semver', major]), want);
  });

  it('-o yaml writes the same blobs; -o mermaid draws the channels', async () => {
    const y = await text([major, '-o', 'yaml']);
    assert.ok(
      y.startsWith('---\ndefaultChannel: stable-v1\nname: testoperator\nschema: olm.package\n---\nentries:\n- name: testoperator.v0.1.0\n'),
      y.slice(0, 200),
    );
    const m = await text([major, '-o', 'mermaid']);
    assert.match(m, /^graph LR\n/);
    assert.match(m, /candidate-v0/);
    // --legacy draws as v1.26.3 did: no class definitions, "replace" edges
    const lm = await text([major, '-o', 'mermaid', '--legacy']);
    assert.ok(lm.startsWith('graph LR\n  %% package "testoperator"\n  subgraph "testoperator"\n    %% channel "candidate-v0"\n'), lm.slice(0, 200));
    assert.match(lm, /-- replace -->/);
  });

  it('--legacy renders with opm v1.26.3', async () => {
    assert.equal(await text(['semver', major, '--legacy']), fixture('legacy/readme-major.catalog.json'));
  });

  it('bad arguments and flags, with opm and cobra messages', async () => {
    assert.throws(() => parseRenderTemplateArgs(['a', 'b', 'c']), { message: 'accepts between 0 and 2 arg(s), received 3' });
    assert.throws(() => parseRenderTemplateArgs(['--nope']), { message: 'unknown flag: --nope' });
    assert.throws(() => parseRenderTemplateArgs(['-x']), { message: "unknown shorthand flag: 'x' in -x" });
    assert.throws(() => parseRenderTemplateArgs(['-o']), { message: "flag needs an argument: 'o' in -o" });
    assert.throws(() => parseRenderTemplateArgs(['--use-http', '--skip-tls-verify']), {
      message: 'invalid flag combination: --use-http and --skip-tls-verify cannot both be true',
    });
    await assert.rejects(text(['helm', major]), { message: 'invalid template type "helm", must be one of: [basic semver substitutes]' });
    await assert.rejects(text([major, '-o', 'xml']), { message: 'invalid --output value "xml", expected (json|yaml|mermaid)' });
    await assert.rejects(text([major, '-o', 'xml', '--legacy']), { message: 'invalid output format "xml"' });
    await assert.rejects(text(['/no/such/file.yaml']), { message: 'unable to open "/no/such/file.yaml": open /no/such/file.yaml: no such file or directory' });
    await assert.rejects(text(['--legacy', '/no/such/file.yaml']), { message: 'open /no/such/file.yaml: no such file or directory' });
    await assert.rejects(text([major, '--migrate-level', 'nope']), /unknown migration level "nope"/);
  });

  it('schema detection: missing, unknown and unsupported schemas', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kplane-render-template-'));
    const file = (name: string, body: string): string => {
      writeFileSync(join(dir, name), body);
      return join(dir, name);
    };
    await assert.rejects(text([file('none.yaml', 'stable: {}\n')]), {
      message: "auto-detecting template type: template input missing required 'schema' field",
    });
    await assert.rejects(text([file('odd.yaml', 'schema: olm.helm\n')]), { message: 'auto-detecting template type: unknown template schema: olm.helm' });
    await assert.rejects(text([file('empty.yaml', '')]), { message: 'auto-detecting template type: decoding template input: EOF' });
    await assert.rejects(text([file('num.yaml', 'schema: 5\n')]), {
      message: 'auto-detecting template type: unmarshalling template schema: json: cannot unmarshal number into Go struct field .schema of type string',
    });
    await assert.rejects(text([file('basic.yaml', 'Schema: olm.template.basic\nentries: []\n')]), {
      message: /the basic template \(schema olm.template.basic\) is not supported by kplane/,
    });
    // TYPE given: no detection, the semver reader's own check
    await assert.rejects(text(['semver', file('basic2.yaml', 'schema: olm.template.basic\n')]), {
      message: 'rendering template: render: unable to read file: readFile: input file has unknown schema, should be "olm.semver"',
    });
  });

  it('render failures are prefixed as opm prefixes them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kplane-render-template-'));
    const f = join(dir, 't.yaml');
    writeFileSync(f, 'schema: olm.semver\nstable:\n  bundles:\n  - image: quay.io/foo/olm:missing\n');
    await assert.rejects(text(['semver', f]), { message: 'rendering template: render reference "quay.io/foo/olm:missing": no such fixture image' });
    await assert.rejects(text(['semver', f, '--legacy']), { message: `semver "${f}": render reference "quay.io/foo/olm:missing": no such fixture image` });
  });
});
