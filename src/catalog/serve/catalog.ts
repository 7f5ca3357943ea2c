// What `catalog serve` serves: the index of a catalog directory, with every bundle encoded once and
// packed in memory (packed-bundles.ts); the loaded catalog and its model are garbage once it is built.
import type { ApiBundle } from '../api/api.js';
import type { DeclarativeConfig } from '../declcfg/types.js';
import type { Bundle, Model } from '../model/types.js';
import { modelBundleToApi } from './api-bundle.js';
import { loadCatalog } from './load.js';
import { MetaStore } from './metas.js';
import { BundlePacker, PackedBundleError } from './packed-bundles.js';
import { RegistryIndex, indexFromModel, type IndexPackage } from './registry-index.js';

export interface ServedCatalog {
  index: RegistryIndex;
  metas: MetaStore;
}

export interface PackOptions {
  /** delete each package from the model once packed, so the heap shrinks as packing goes on */
  consume?: boolean;
}

/** The index of a model with every bundle converted, encoded and packed; the index keeps nothing of the model. */
export function packedIndexFromModel(model: Model, opts: PackOptions = {}): RegistryIndex {
  const packer = new BundlePacker();
  const packages = new Map<string, IndexPackage>();
  // A bundle in several channels is one olm.bundle blob: converted once, its CSV and objects stored once.
  const memo = new Map<Bundle['properties'], { b: Bundle; api: ApiBundle; slot: number }>();
  for (const name of [...model.keys()]) {
    const pkg = model.get(name)!;
    memo.clear();
    const indexed = indexFromModel(new Map([[name, pkg]]), (_key, b, ib) => {
      const prev = memo.get(b.properties);
      if (prev && sameSource(prev.b, b)) {
        const { deprecation: _, ...api } = prev.api;
        const copy: ApiBundle = { ...api, channelName: b.channel.name, skipRange: b.skipRange, replaces: b.replaces, skips: b.skips };
        if (b.deprecation) copy.deprecation = { message: b.deprecation.message };
        ib.slot = packer.add(copy, prev.slot);
        return;
      }
      let api: ApiBundle;
      try {
        api = modelBundleToApi(b);
      } catch (err) {
        // a bundle that does not convert is still indexed; asking for it gives the error
        ib.slot = packer.add(new PackedBundleError((err as Error).message));
        return;
      }
      ib.slot = packer.add(api);
      memo.set(b.properties, { b, api, slot: ib.slot });
    });
    for (const [k, v] of indexed) packages.set(k, v);
    if (opts.consume) model.delete(name);
  }
  memo.clear();
  return new RegistryIndex(packages, packer.finish());
}

/** Whether two model bundles convert to the same API bundle but for their channel's fields (modelBundleToApi reads nothing else). */
function sameSource(a: Bundle, b: Bundle): boolean {
  return (
    a.package === b.package &&
    a.name === b.name &&
    a.image === b.image &&
    a.version === b.version &&
    a.csvJSON === b.csvJSON &&
    a.properties === b.properties &&
    (a.objects === b.objects || (a.objects.length === 0 && b.objects.length === 0)) &&
    a.relatedImages.length === b.relatedImages.length &&
    a.relatedImages.every((r, i) => r.name === b.relatedImages[i]!.name && r.image === b.relatedImages[i]!.image)
  );
}

/** Loads and validates dir (as opm serve does when it builds its cache) and indexes it, its bundles packed. */
export async function catalogFromDir(dir: string): Promise<ServedCatalog> {
  // Only the model is kept while packing (the loaded blobs go first), and it is emptied as it is packed.
  const loaded: { cfg?: DeclarativeConfig; model: Model } = await loadCatalog(dir);
  let metas: MetaStore | Error;
  try {
    metas = MetaStore.fromMetas(loaded.cfg!.others);
  } catch (err) {
    metas = err as Error;
  }
  delete loaded.cfg;
  const index = packedIndexFromModel(loaded.model, { consume: true });
  await index.warm();
  // a bad custom-schema blob fails after what the index checks, as before
  if (metas instanceof Error) throw metas;
  return { index, metas };
}
