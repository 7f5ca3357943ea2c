// What `catalog serve` serves: the index of a catalog directory, with every bundle encoded once and
// packed in memory (packed-bundles.ts); the loaded catalog and its model are garbage once it is built.
import type { ApiBundle } from '../api/api.js';
import type { Model } from '../model/types.js';
import { modelBundleToApi } from './api-bundle.js';
import { loadCatalog } from './load.js';
import { MetaStore } from './metas.js';
import { BundlePacker, PackedBundleError } from './packed-bundles.js';
import { RegistryIndex, indexFromModel } from './registry-index.js';

export interface ServedCatalog {
  index: RegistryIndex;
  metas: MetaStore;
}

/** The index of a model with every bundle converted, encoded and packed; the index keeps nothing of the model. */
export function packedIndexFromModel(model: Model): RegistryIndex {
  const packer = new BundlePacker();
  const packages = indexFromModel(model, (_key, b, ib) => {
    // a bundle that does not convert is still indexed; asking for it gives the error
    let api: ApiBundle | PackedBundleError;
    try {
      api = modelBundleToApi(b);
    } catch (err) {
      api = new PackedBundleError((err as Error).message);
    }
    ib.slot = packer.add(api);
  });
  return new RegistryIndex(packages, packer.finish());
}

/** Loads and validates dir (as opm serve does when it builds its cache) and indexes it, its bundles packed. */
export async function catalogFromDir(dir: string): Promise<ServedCatalog> {
  const { cfg, model } = await loadCatalog(dir);
  const index = packedIndexFromModel(model);
  await index.warm();
  return { index, metas: MetaStore.fromMetas(cfg.others) };
}
