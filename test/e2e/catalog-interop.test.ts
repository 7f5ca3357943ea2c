// `kplane catalog test interop` (issue 27, story 2): a generated file-based catalog whose operators
// are installed together into the throw-away kplane the command starts, in process (the CLI module's
// run, as `kplane catalog test interop` calls it). alpha has an upgrade edge and valid alm-examples;
// beta depends on alpha's API and ships two examples the server does not keep as sent (one fails
// the CRD's schema, one has a field the schema prunes); gamma's alm-examples are not JSON. The
// report passes what holds and fails beta's and gamma's examples with clear words, in text and
// JUnit XML.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { catalog } from '../../src/catalog/cli.js';
import { catalogTestInterop } from '../../src/cli/catalog-interop.js';
import { runInteropInstall } from '../../src/controlplane/catalog-interop.js';

type Json = Record<string, unknown>;

const CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: { spec: { type: 'object', properties: { size: { type: 'integer' }, mode: { type: 'string', default: 'fast' } } } },
          },
        },
      },
    ],
  },
};

function bundle(pkg: string, version: string, opts: { replaces?: string; owns?: boolean; requires?: boolean; examples: Json[] | string }): Json[] {
  const name = `${pkg}.v${version}`;
  const csv = {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, annotations: { 'alm-examples': typeof opts.examples === 'string' ? opts.examples : JSON.stringify(opts.examples) } },
    spec: {
      version,
      displayName: pkg,
      ...(opts.replaces ? { replaces: opts.replaces } : {}),
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: {
        ...(opts.owns ? { owned: [{ name: 'widgets.example.com', version: 'v1', kind: 'Widget' }] } : {}),
        ...(opts.requires ? { required: [{ name: 'widgets.example.com', version: 'v1', kind: 'Widget' }] } : {}),
      },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [{ name: `${pkg}-operator`, spec: {} }],
          permissions: [{ serviceAccountName: pkg, rules: [{ apiGroups: ['example.com'], resources: ['widgets'], verbs: ['get', 'list'] }] }],
        },
      },
    },
  };
  const objects = [...(opts.owns ? [CRD] : []), csv];
  const gvk = { group: 'example.com', kind: 'Widget', version: 'v1' };
  return [
    {
      schema: 'olm.bundle',
      name,
      package: pkg,
      image: `example.com/${pkg}-bundle:v${version}`,
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version } },
        ...(opts.owns ? [{ type: 'olm.gvk', value: gvk }] : []),
        ...(opts.requires ? [{ type: 'olm.gvk.required', value: gvk }] : []),
        ...objects.map((o) => ({ type: 'olm.bundle.object', value: { data: Buffer.from(JSON.stringify(o)).toString('base64') } })),
      ],
    },
  ];
}

const widget = (name: string, spec: Json): Json => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec });

describe('kplane catalog test interop', { timeout: 300_000 }, () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'kplane-interop-test-'));
    const docs: Json[] = [
      { schema: 'olm.package', name: 'alpha', defaultChannel: 'stable' },
      { schema: 'olm.channel', name: 'stable', package: 'alpha', entries: [{ name: 'alpha.v1.0.0' }, { name: 'alpha.v1.1.0', replaces: 'alpha.v1.0.0' }] },
      ...bundle('alpha', '1.0.0', { owns: true, examples: [widget('small', { size: 1 })] }),
      ...bundle('alpha', '1.1.0', { owns: true, replaces: 'alpha.v1.0.0', examples: [widget('small', { size: 1, mode: 'slow' })] }),
      { schema: 'olm.package', name: 'beta', defaultChannel: 'stable' },
      { schema: 'olm.channel', name: 'stable', package: 'beta', entries: [{ name: 'beta.v1.0.0' }] },
      ...bundle('beta', '1.0.0', { requires: true, examples: [widget('big', { size: 'big' }), widget('extra', { size: 2, colour: 'red' })] }),
      { schema: 'olm.package', name: 'gamma', defaultChannel: 'stable' },
      { schema: 'olm.channel', name: 'stable', package: 'gamma', entries: [{ name: 'gamma.v1.0.0' }] },
      ...bundle('gamma', '1.0.0', { examples: '[{"kind": ' }),
    ];
    // A catalog repository (kplane catalog init's layout) whose catalog/ holds the generated catalog.
    await mkdir(join(dir, 'repo', 'catalog'), { recursive: true });
    await writeFile(join(dir, 'repo', 'catalog', 'catalog.json'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  // `kplane catalog test --install` runs the same live layer after the static ones; the standalone
  // `kplane catalog test interop CATALOG` shares runInteropInstall and is checked for its input below.
  it('installs the catalog together, passes what holds and fails the examples that do not hold', async () => {
    const junit = join(dir, 'out', 'interop.xml');
    const out: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    const err = process.stderr.write.bind(process.stderr);
    process.stdout.write = (s: string): boolean => (out.push(s), true);
    process.stderr.write = (): boolean => true;
    let code: number;
    try {
      // As src/cli/main.ts wires `kplane catalog`.
      code = await catalog(['test', '--install', join(dir, 'repo'), '--junit', junit], {
        installLayer: (catalogDir, progress) => runInteropInstall({ catalogDir, progress, timeoutMs: 90_000 }),
      });
    } finally {
      process.stdout.write = write;
      process.stderr.write = err;
    }
    const text = out.join('');
    assert.equal(code, 1, text);
    const lines = text.split('\n');
    const status = (name: string): string | undefined =>
      lines
        .find((l) => l.includes(name))
        ?.trim()
        .split(/\s+/)[0];
    assert.equal(status('catalog: CatalogSource READY'), 'PASS', text);
    assert.equal(status('alpha: upgrades from alpha.v1.0.0 to alpha.v1.1.0'), 'PASS', text);
    assert.equal(status('resolution: 3 channel heads resolve together'), 'PASS', text);
    assert.equal(status('alpha: alpha.v1.1.0 installs'), 'PASS', text);
    assert.equal(status('beta: beta.v1.0.0 installs'), 'PASS', text);
    assert.equal(status('gamma: gamma.v1.0.0 installs'), 'PASS', text);
    assert.equal(status('rbac: the CSVs’ permissions are applied'), 'PASS', text);
    assert.equal(status('ownership: no two operators own the same CRD or API'), 'PASS', text);
    assert.equal(status('requirements: every required CRD is owned by an installed operator'), 'PASS', text);
    assert.equal(status('alpha: alm-examples accepted and round-trip'), 'PASS', text);
    assert.equal(status('beta: alm-examples accepted and round-trip'), 'FAIL', text);
    assert.match(
      text,
      /Widget big: Widget.example.com "big" is invalid: spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"/,
    );
    assert.match(text, /Widget extra does not round-trip: .spec.colour was dropped/);
    assert.equal(status('gamma: alm-examples accepted and round-trip'), 'FAIL', text);
    assert.match(text, /alm-examples is not JSON: /);
    // The repository has no veneers (the catalog is written directly), so sanity fails alone.
    assert.match(text, /no catalog\/<operator>\/veneer.yaml found/);
    assert.match(text, /^FAIL: 3 failed, 0 warnings$/m);
    const xml = await readFile(junit, 'utf8');
    assert.match(xml, /<testsuite name="interoperability-install" tests="12" failures="2"/);
    // The static layers ran first and passed.
    assert.match(xml, /<testsuite name="integration" tests="\d+" failures="0"/);
    assert.match(xml, /<testsuite name="interoperability" tests="\d+" failures="0"/);
  });

  it('kplane catalog test interop: bad input is refused before any control plane starts', async () => {
    const err: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = (s: string): boolean => (err.push(s), true);
    try {
      assert.equal(await catalogTestInterop([join(dir, 'repo', 'catalog'), '--timeout', '5x']), 2);
      assert.match(err.join(''), /invalid argument "5x" for "--timeout" flag/);
      assert.equal(await catalogTestInterop([join(dir, 'nowhere')]), 1);
      assert.match(err.join(''), /nowhere: no such directory/);
      assert.equal(await catalogTestInterop([join(dir, 'repo', 'catalog'), '--package', 'delta']), 1);
      assert.match(err.join(''), /no package delta in /);
      assert.equal(await catalogTestInterop([]), 2);
      assert.match(err.join(''), /accepts 1 arg\(s\), received 0/);
    } finally {
      process.stderr.write = write;
    }
  });
});
