// What `catalog serve` serves: the index of a catalog directory, with its bundles held in memory.
import { loadCatalog } from './load.js';
import { MetaStore } from './metas.js';
import { ModelBundleStore, RegistryIndex, indexFromModel } from './registry-index.js';

export interface ServedCatalog {
  index: RegistryIndex;
  metas: MetaStore;
}

/** Loads and validates dir (as opm serve does when it builds its cache) and indexes it; bundles stay in the model. */
export async function catalogFromDir(dir: string): Promise<ServedCatalog> {
  const { cfg, model } = await loadCatalog(dir);
  const store = new ModelBundleStore();
  const packages = indexFromModel(model, (key, b) => store.put(key, b));
  const index = new RegistryIndex(packages, store);
  await index.warm();
  return { index, metas: MetaStore.fromMetas(cfg.others) };
}
