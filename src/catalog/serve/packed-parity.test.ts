// The packed index (bundles encoded once at start-up, packed-bundles.ts) answers every registry query
// with the bytes the index gave before packing: each bundle converted from the model when asked for
// and encoded with protobufjs (testdata/reference-index.ts, the old code kept as the reference). Also
// the packer against protobufjs on its own, on the corners of the encoding.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { getEncoders, type ApiBundle } from '../api/api.js';
import type { Bundle, Channel, Model, Package } from '../model/types.js';
import { packageBlobs } from '../../../bench/catalog-data.js';
import { JsonCache } from './cache.js';
import { packedIndexFromModel } from './catalog.js';
import { loadCatalog } from './load.js';
import { createLogger } from './log.js';
import { BundlePacker, PackedBundleError } from './packed-bundles.js';
import type { RegistryIndex } from './registry-index.js';
import { ModelBundleStore, ReferenceIndex, referenceIndexFromModel } from './testdata/reference-index.js';

const testdata = join(dirname(fileURLToPath(import.meta.url)), 'testdata');

type Outcome = { ok: string } | { error: string };

/** What a call gives: its answer as text (bytes as hex, entries as JSON) or its error's name and text. */
async function outcome(f: () => unknown): Promise<Outcome> {
  try {
    const v = await f();
    return { ok: Buffer.isBuffer(v) ? v.toString('hex') : JSON.stringify(v) };
  } catch (err) {
    return { error: `${(err as Error).name}: ${(err as Error).message}` };
  }
}

async function listed(gen: () => AsyncIterable<Buffer>): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const b of gen()) out.push(b.toString('hex'));
  } catch (err) {
    out.push(`${(err as Error).name}: ${(err as Error).message}`);
  }
  return out;
}

function reference(model: Model): ReferenceIndex {
  const store = new ModelBundleStore();
  return new ReferenceIndex(
    referenceIndexFromModel(model, (k, b) => store.put(k, b)),
    store,
  );
}

/** Every query of the registry API, over every package, channel, bundle, name and API the model has (and some it has not). */
async function assertSameAnswers(model: Model, got: RegistryIndex, want: ReferenceIndex): Promise<number> {
  let calls = 0;
  const same = async (what: string, g: () => unknown, w: () => unknown): Promise<void> => {
    calls++;
    assert.deepEqual(await outcome(g), await outcome(w), what);
  };
  assert.deepEqual(got.listPackages(), want.listPackages());
  const names = new Set<string>(['', 'no-such-bundle']);
  const gvks = new Map<string, [string, string, string]>([['x/v9/Missing', ['x', 'v9', 'Missing']]]);
  for (const p of model.values()) {
    for (const ch of p.channels.values()) {
      for (const b of ch.bundles.values()) {
        names.add(b.name);
        names.add(b.replaces);
        for (const s of b.skips) names.add(s);
        for (const prop of b.properties) {
          if (prop.type !== 'olm.gvk' && prop.type !== 'olm.gvk.required') continue;
          const v = prop.value as { group: string; version: string; kind: string };
          gvks.set(`${v.group}/${v.version}/${v.kind}`, [v.group, v.version, v.kind]);
        }
      }
    }
  }
  for (const pkgName of [...model.keys(), 'no-such-package']) {
    await same(
      `GetPackage ${pkgName}`,
      () => got.getPackage(pkgName),
      () => want.getPackage(pkgName),
    );
    const p = model.get(pkgName);
    for (const chName of [...(p?.channels.keys() ?? []), 'no-such-channel']) {
      const ch = p?.channels.get(chName);
      await same(
        `GetBundleForChannel ${pkgName}/${chName}`,
        () => got.getBundleForChannel(pkgName, chName),
        () => want.getBundleForChannel(pkgName, chName),
      );
      const cached = got.cachedBundleForChannel(pkgName, chName);
      if (cached) assert.equal(cached.toString('hex'), (await want.getBundleForChannel(pkgName, chName)).toString('hex'));
      for (const name of [...(ch?.bundles.keys() ?? []), 'no-such-bundle']) {
        await same(
          `GetBundle ${pkgName}/${chName}/${name}`,
          () => got.getBundle(pkgName, chName, name),
          () => want.getBundle(pkgName, chName, name),
        );
      }
      for (const name of names) {
        await same(
          `GetBundleThatReplaces ${name} ${pkgName}/${chName}`,
          () => got.getBundleThatReplaces(name, pkgName, chName),
          () => want.getBundleThatReplaces(name, pkgName, chName),
        );
      }
    }
  }
  for (const name of names) {
    await same(
      `GetChannelEntriesThatReplace ${name}`,
      () => got.getChannelEntriesThatReplace(name),
      () => want.getChannelEntriesThatReplace(name),
    );
  }
  for (const [key, [g, v, k]] of gvks) {
    await same(
      `GetChannelEntriesThatProvide ${key}`,
      () => got.getChannelEntriesThatProvide(g, v, k),
      () => want.getChannelEntriesThatProvide(g, v, k),
    );
    await same(
      `GetLatestChannelEntriesThatProvide ${key}`,
      () => got.getLatestChannelEntriesThatProvide(g, v, k),
      () => want.getLatestChannelEntriesThatProvide(g, v, k),
    );
    await same(
      `GetDefaultBundleThatProvides ${key}`,
      () => got.getDefaultBundleThatProvides(g, v, k),
      () => want.getDefaultBundleThatProvides(g, v, k),
    );
  }
  const gotList = await listed(() => got.listBundles());
  assert.deepEqual(gotList, await listed(() => want.listBundles()), 'ListBundles');
  return calls + gotList.length;
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

function csvManifest(name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, annotations: { description: 'Ünïcödé <b>&</b> 𝄞 ✓' } },
    spec: { displayName: name, version: '1.0.0', ...extra },
  });
}
const crdManifest = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: things.example.com
spec:
  group: example.com
  names: {kind: Thing, plural: things}
`;

/** A catalog with the corners of the data: bundles with and without images, objects or csv metadata, skips in and out of their channel, deprecations, providers in several packages. */
function variedCatalog(dir: string): void {
  const blobs: object[] = [];
  const pkg = (name: string, defaultChannel: string, description = ''): void => {
    blobs.push({ schema: 'olm.package', name, defaultChannel, ...(description ? { description } : {}) });
  };
  const channel = (p: string, name: string, entries: { name: string; replaces?: string; skips?: string[]; skipRange?: string }[]): void => {
    blobs.push({ schema: 'olm.channel', package: p, name, entries });
  };
  const bundle = (
    p: string,
    name: string,
    version: string,
    opts: { image?: string; gvks?: string[]; required?: string[]; objects?: boolean; metadata?: boolean; extra?: object[] },
  ): void => {
    const properties: object[] = [{ type: 'olm.package', value: { packageName: p, version } }];
    for (const k of opts.gvks ?? []) properties.push({ type: 'olm.gvk', value: { group: 'example.com', version: 'v1', kind: k } });
    for (const k of opts.required ?? []) properties.push({ type: 'olm.gvk.required', value: { group: 'example.com', version: 'v1', kind: k } });
    if (opts.objects) {
      properties.push({ type: 'olm.bundle.object', value: { data: b64(crdManifest) } });
      properties.push({ type: 'olm.bundle.object', value: { data: b64(csvManifest(name)) } });
    }
    if (opts.metadata) {
      properties.push({
        type: 'olm.csv.metadata',
        value: { displayName: `${p} ✓`, description: '', keywords: ['a<b'], provider: { name: 'Ex & Co' }, annotations: { x: 'y' } },
      });
    }
    properties.push(...(opts.extra ?? []));
    blobs.push({ schema: 'olm.bundle', package: p, name, ...(opts.image !== undefined ? { image: opts.image } : {}), properties });
  };

  pkg('alpha', 'stable', 'The alpha operator — with a description');
  channel('alpha', 'stable', [
    { name: 'alpha.v1' },
    { name: 'alpha.v2', replaces: 'alpha.v1' },
    { name: 'alpha.v3', replaces: 'alpha.v2', skips: ['alpha.v1', 'alpha.v0'], skipRange: '<3.0.0' },
    { name: 'alpha.v4', replaces: 'alpha.v3', skips: ['alpha.v2'] },
  ]);
  channel('alpha', 'fast', [
    { name: 'alpha.v3', skips: ['alpha.v2'] },
    { name: 'alpha.v4', replaces: 'alpha.v3', skips: ['alpha.v2', 'alpha.v1'] },
  ]);
  channel('alpha', 'candidate', [{ name: 'alpha.v5-rc' }]);
  bundle('alpha', 'alpha.v1', '1.0.0', { image: 'example.com/alpha:v1', gvks: ['Thing'], objects: true });
  bundle('alpha', 'alpha.v2', '2.0.0', { image: '', gvks: ['Thing', 'Other'], objects: true, extra: [{ type: 'olm.label', value: { label: 'ünï' } }] });
  bundle('alpha', 'alpha.v3', '3.0.0', { image: 'example.com/alpha:v3', gvks: ['Thing'], required: ['Dep'], metadata: true });
  bundle('alpha', 'alpha.v4', '4.0.0', {
    image: 'example.com/alpha:v4',
    gvks: ['Thing', 'Other'],
    metadata: true,
    extra: [
      { type: 'olm.package.required', value: { packageName: 'beta', versionRange: '>=1.0.0 <2.0.0' } },
      { type: 'custom', value: { nested: { b: [1, 2.5, true, null], a: 'x' } } },
    ],
  });
  bundle('alpha', 'alpha.v5-rc', '5.0.0-rc.1', { image: '', objects: true, gvks: ['Thing'] });
  blobs.push({
    schema: 'olm.deprecations',
    package: 'alpha',
    entries: [
      { reference: { schema: 'olm.package' }, message: 'alpha is deprecated\n' },
      { reference: { schema: 'olm.channel', name: 'fast' }, message: 'fast is gone' },
      { reference: { schema: 'olm.bundle', name: 'alpha.v2' }, message: ' ' },
      { reference: { schema: 'olm.bundle', name: 'alpha.v3' }, message: 'alpha.v3 is deprecated — use alpha.v4' },
    ],
  });

  pkg('gamma', 'beta-channel');
  channel('gamma', 'beta-channel', [{ name: 'gamma.v1' }, { name: 'gamma.v2', replaces: 'gamma.v1', skips: ['gamma.v1', 'alpha.v1'] }]);
  channel('gamma', 'alpha-channel', [{ name: 'gamma.v2' }]);
  bundle('gamma', 'gamma.v1', '1.0.0', { image: 'example.com/gamma:v1', gvks: ['Thing'] });
  bundle('gamma', 'gamma.v2', '2.0.0', { image: 'example.com/gamma:v2', gvks: ['Thing', 'Gamma'], metadata: true });

  writeFileSync(join(dir, 'varied.json'), blobs.map((b) => JSON.stringify(b)).join('\n') + '\n');
  // bench-shaped packages: a long replaces chain with skipRanges, two channels, csv metadata
  writeFileSync(join(dir, 'bench.json'), packageBlobs(0, 15) + packageBlobs(1, 12));
}

/** A hand-made model for what a loaded catalog cannot hold: a bundle that does not convert (asked for, it gives the error). */
function brokenModel(): Model {
  const pkg: Package = { name: 'broken', description: 'd', channels: new Map() };
  const ch: Channel = { package: pkg, name: 'stable', bundles: new Map(), properties: [] };
  const mk = (name: string, replaces: string, props: Bundle['properties'], extra: Partial<Bundle> = {}): Bundle => ({
    package: pkg,
    channel: ch,
    name,
    image: '',
    replaces,
    skips: [],
    skipRange: '',
    properties: [{ type: 'olm.package', value: { packageName: 'broken', version: '1.0.0' } }, ...props],
    relatedImages: [],
    objects: [],
    csvJSON: '',
    version: '1.0.0',
    ...extra,
  });
  ch.bundles.set('broken.v1', mk('broken.v1', '', [{ type: 'olm.bundle.object', value: { data: b64('a: b: c') } }]));
  const csv = csvManifest('broken.v2');
  ch.bundles.set(
    'broken.v2',
    mk('broken.v2', 'broken.v1', [{ type: 'olm.gvk', value: { group: 'g', version: 'v', kind: 'K' } }], {
      objects: ['{"kind":"Other"}', csv, csv],
      csvJSON: csv,
      deprecation: { message: 'old' },
    }),
  );
  ch.bundles.set('broken.v3', mk('broken.v3', 'broken.v2', [], { image: 'example.com/broken:v3', objects: ['{"kind":"Other"}'], csvJSON: csv }));
  pkg.channels.set('stable', ch);
  pkg.defaultChannel = ch;
  return new Map([['broken', pkg]]);
}

describe('packed index parity with the model-backed index', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'kplane-packed-'));
  after(() => rmSync(tmp, { recursive: true, force: true }));
  const varied = join(tmp, 'varied');
  mkdirSync(varied);
  variedCatalog(varied);

  for (const [name, dir] of [
    ['testdata/simple', join(testdata, 'simple')],
    ['testdata/deprecations', join(testdata, 'deprecations')],
    ['a varied catalog', varied],
  ] as const) {
    it(`every query over ${name}`, async () => {
      const { model } = await loadCatalog(dir);
      const got = packedIndexFromModel(model);
      await got.warm();
      const want = reference(model);
      await want.warm();
      const calls = await assertSameAnswers(model, got, want);
      assert.ok(calls > 40, `${calls} calls`);
    });
  }

  it('every query over a model with bundles that do not convert, before and after warming', async () => {
    const model = brokenModel();
    const got = packedIndexFromModel(model);
    const want = reference(model);
    await assertSameAnswers(model, got, want);
    await got.warm();
    await want.warm();
    await assertSameAnswers(model, got, want);
    await assert.rejects(got.getBundle('broken', 'stable', 'broken.v1'), {
      name: 'RegistryQueryError',
      message: /^package "broken", bundle "broken.v1": convert bundle object property to JSON: /,
    });
  });

  it('every query over the cache directory of the varied catalog', async () => {
    const cache = new JsonCache({ cacheDir: join(tmp, 'cache'), configDir: varied, logger: createLogger({ write: () => {} }) });
    await cache.build();
    const { index } = await cache.load();
    const { model } = await loadCatalog(varied);
    const want = reference(model);
    await want.warm();
    await assertSameAnswers(model, index, want);
  });
});

describe('BundlePacker', () => {
  const enc = getEncoders();
  const base: ApiBundle = {
    csvName: 'a.v1',
    packageName: 'a',
    channelName: 'stable',
    csvJson: '{"kind":"ClusterServiceVersion"}',
    object: ['{"kind":"ClusterServiceVersion"}'],
    bundlePath: 'example.com/a:v1',
    providedApis: [{ group: 'example.com', version: 'v1', kind: 'Thing' }],
    requiredApis: [],
    version: '1.0.0',
    skipRange: '',
    dependencies: [],
    properties: [{ type: 'olm.package', value: '{"packageName":"a","version":"1.0.0"}' }],
    replaces: 'a.v0',
    skips: ['a.v00'],
  };
  const long = 'x'.repeat(40);
  const cases: [string, ApiBundle][] = [
    ['plain', base],
    ['no image: ListBundles keeps the objects', { ...base, bundlePath: '' }],
    ['no replaces or skips: the record is the trimmed answer', { ...base, replaces: '', skips: [] }],
    ['the CSV in the middle of the objects, and twice', { ...base, bundlePath: '', object: ['{"kind":"A"}', base.csvJson, '{"kind":"B"}', base.csvJson] }],
    ['objects without the CSV', { ...base, object: ['{"kind":"A"}', ''] }],
    ['no csvJson, empty objects', { ...base, csvJson: '', object: ['', ''] }],
    [
      'every repeated field, plural set, a deprecation',
      {
        ...base,
        providedApis: [
          { group: '', version: 'v1', kind: 'K', plural: 'ks' },
          { group: 'g', version: '', kind: '' },
        ],
        requiredApis: [{ group: 'r', version: 'v2', kind: 'R' }],
        dependencies: [
          { type: 'olm.gvk', value: '{}' },
          { type: '', value: '' },
        ],
        skips: ['', 'a', 'b'],
        deprecation: { message: 'deprecated ✓' },
      },
    ],
    ['an empty deprecation', { ...base, deprecation: { message: '' } }],
    [
      'non-ASCII and lone surrogates, short and long strings',
      {
        ...base,
        csvName: 'é\ud800x',
        csvJson: `${long}\udc00 𝄞`,
        object: [`${long}\udc00 𝄞`, '\ud83d'],
        properties: [{ type: 'ü', value: `"${long}\ud800"` }],
        skips: ['\udfff'],
        replaces: `${long}é`,
      },
    ],
    [
      'text whose length in bytes needs a longer prefix than its length in characters',
      {
        ...base,
        csvName: 'é'.repeat(39),
        csvJson: 'é'.repeat(100),
        object: ['ü'.repeat(100), 'é'.repeat(100)],
        properties: [{ type: 'ü'.repeat(60), value: '✓'.repeat(50) }],
        deprecation: { message: '✓'.repeat(45) },
      },
    ],
    ['large fields (multi-byte lengths)', { ...base, csvJson: 'c'.repeat(300_000), object: ['c'.repeat(300_000), 'o'.repeat(20_000)] }],
    ['unset strings left out', { ...base, bundlePath: undefined as unknown as string, version: null as unknown as string }],
  ];

  it('packs what protobufjs encodes, in both served forms', () => {
    const packer = new BundlePacker();
    const slots = cases.map(([, b]) => packer.add(b));
    const err = packer.add(new PackedBundleError('no good'));
    const packed = packer.finish();
    cases.forEach(([what, b], i) => {
      const trimmed = enc.bundle({ ...b, replaces: '', skips: [] });
      const list = enc.bundle(b.bundlePath !== '' ? { ...b, csvJson: '', object: [] } : b);
      assert.equal(packed.trimmed(slots[i]!).toString('hex'), trimmed.toString('hex'), `${what}: trimmed`);
      assert.equal(packed.listed(slots[i]!).toString('hex'), list.toString('hex'), `${what}: listed`);
    });
    assert.throws(() => packed.trimmed(err), { name: 'PackedBundleError', message: 'no good' });
    assert.throws(() => packed.listed(err), { name: 'PackedBundleError', message: 'no good' });
  });

  it('spreads many records over chunks', () => {
    const packer = new BundlePacker();
    const n = 3000;
    const bundles = Array.from({ length: n }, (_, i) => ({ ...base, csvName: `a.v${i}`, csvJson: 'c'.repeat(i * 7), object: ['c'.repeat(i * 7)] }));
    const slots = bundles.map((b) => packer.add(b));
    const packed = packer.finish();
    assert.equal(packed.size, n);
    for (const i of [0, 1, 777, 1500, 2999]) {
      assert.equal(packed.trimmed(slots[i]!).toString('hex'), enc.bundle({ ...bundles[i]!, replaces: '', skips: [] }).toString('hex'));
    }
    assert.ok(packed.byteLength() > (3000 * 3000 * 7) / 2);
  });
});
