// RegistryIndex queries over a small hand-made model: edge rules of opm's pkg/cache/pkgs.go.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { REGISTRY_PROTO } from '../api/api.js';
import type { Bundle, Channel, Model, Package } from '../model/types.js';
import { packedIndexFromModel } from './catalog.js';
import { RegistryIndex, RegistryQueryError, channelHead } from './registry-index.js';

const root = protobuf.loadSync(REGISTRY_PROTO);
const Bundle = root.lookupType('api.Bundle');
const decode = (b: Buffer): Record<string, unknown> => Bundle.toObject(Bundle.decode(b), { defaults: true });

function model(
  spec: Record<string, Record<string, { name: string; replaces?: string; skips?: string[]; gvk?: string }[]>>,
  defaults: Record<string, string>,
): Model {
  const m: Model = new Map();
  for (const [pkgName, channels] of Object.entries(spec)) {
    const pkg: Package = { name: pkgName, description: '', channels: new Map() };
    for (const [chName, entries] of Object.entries(channels)) {
      const ch: Channel = { package: pkg, name: chName, bundles: new Map(), properties: [] };
      for (const e of entries) {
        const b: Bundle = {
          package: pkg,
          channel: ch,
          name: e.name,
          image: `example.com/${e.name}`,
          replaces: e.replaces ?? '',
          skips: e.skips ?? [],
          skipRange: '',
          properties: [
            { type: 'olm.package', value: { packageName: pkgName, version: '1.0.0' } },
            ...(e.gvk ? [{ type: 'olm.gvk', value: { group: 'example.com', version: 'v1', kind: e.gvk } }] : []),
          ],
          relatedImages: [],
          objects: [],
          csvJSON: '',
          version: '1.0.0',
        };
        ch.bundles.set(e.name, b);
      }
      pkg.channels.set(chName, ch);
      if (defaults[pkgName] === chName) pkg.defaultChannel = ch;
    }
    m.set(pkgName, pkg);
  }
  return m;
}

function index(m: Model): RegistryIndex {
  return packedIndexFromModel(m);
}

describe('RegistryIndex', () => {
  const m = model(
    {
      a: {
        stable: [{ name: 'a.v3', replaces: 'a.v2', skips: ['a.v2', 'a.v1'], gvk: 'Thing' }, { name: 'a.v2', replaces: 'a.v1', gvk: 'Thing' }, { name: 'a.v1' }],
        fast: [{ name: 'a.v3', skips: ['a.v0'], gvk: 'Thing' }],
      },
      b: { stable: [{ name: 'b.v1', gvk: 'Thing' }] },
    },
    { a: 'fast', b: 'stable' },
  );
  const idx = index(m);

  it('channelHead: opm texts for none and several', () => {
    const two = model({ p: { c: [{ name: 'x' }, { name: 'y' }] } }, {});
    assert.throws(() => channelHead(two.get('p')!.channels.get('c')!), { message: 'multiple channel heads found in graph: x, y' });
    const loop = model(
      {
        p: {
          c: [
            { name: 'x', replaces: 'y' },
            { name: 'y', replaces: 'x' },
          ],
        },
      },
      {},
    );
    assert.throws(() => channelHead(loop.get('p')!.channels.get('c')!), { message: 'no channel head found in graph' });
  });

  it('GetChannelEntriesThatReplace: a skip equal to replaces gives one entry', () => {
    assert.deepEqual(idx.getChannelEntriesThatReplace('a.v2'), [{ packageName: 'a', channelName: 'stable', bundleName: 'a.v3', replaces: 'a.v2' }]);
    // a skip that is not the replaces still names the replaces (opm's quirk)
    assert.deepEqual(idx.getChannelEntriesThatReplace('a.v1'), [
      { packageName: 'a', channelName: 'stable', bundleName: 'a.v2', replaces: 'a.v1' },
      { packageName: 'a', channelName: 'stable', bundleName: 'a.v3', replaces: 'a.v2' },
    ]);
  });

  it('GetBundleThatReplaces: found by replaces or skips; trimmed', async () => {
    const b = decode(await idx.getBundleThatReplaces('a.v0', 'a', 'fast'));
    assert.equal(b.csvName, 'a.v3');
    assert.equal(b.replaces, '');
    assert.deepEqual(b.skips, []);
    await assert.rejects(idx.getBundleThatReplaces('a.v3', 'a', 'fast'), new RegistryQueryError('no entry found for package "a", channel "fast"'));
  });

  it('provider queries: entries per replaces/skip; latest keeps in-channel skips only; default picks by package name', async () => {
    assert.deepEqual(idx.getLatestChannelEntriesThatProvide('example.com', 'v1', 'Thing'), [
      { packageName: 'a', channelName: 'fast', bundleName: 'a.v3', replaces: '' },
      { packageName: 'a', channelName: 'stable', bundleName: 'a.v3', replaces: 'a.v2' },
      { packageName: 'a', channelName: 'stable', bundleName: 'a.v3', replaces: 'a.v1' },
      { packageName: 'b', channelName: 'stable', bundleName: 'b.v1', replaces: '' },
    ]);
    assert.deepEqual(
      idx.getChannelEntriesThatProvide('example.com', 'v1', 'Thing').map((e) => `${e.channelName}/${e.bundleName}>${e.replaces}`),
      ['fast/a.v3>', 'fast/a.v3>a.v0', 'stable/a.v2>a.v1', 'stable/a.v3>a.v2', 'stable/a.v3>a.v1', 'stable/b.v1>'],
    );
    const d = decode(await idx.getDefaultBundleThatProvides('example.com', 'v1', 'Thing'));
    assert.deepEqual([d.packageName, d.channelName, d.csvName], ['a', 'fast', 'a.v3']);
  });

  it('ListBundles: channel, then package, then name; replaces and skips kept', async () => {
    const names: string[] = [];
    for await (const bytes of idx.listBundles()) {
      const b = decode(bytes);
      names.push(`${String(b.channelName)}/${String(b.packageName)}/${String(b.csvName)}`);
      if (b.csvName === 'a.v3' && b.channelName === 'stable') assert.deepEqual(b.skips, ['a.v2', 'a.v1']);
    }
    assert.deepEqual(names, ['fast/a/a.v3', 'stable/a/a.v1', 'stable/a/a.v2', 'stable/a/a.v3', 'stable/b/b.v1']);
  });
});
