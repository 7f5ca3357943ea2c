// Catalog dir → DeclarativeConfig (declcfg/load.ts, `.indexignore` honoured) → model (model/convert.ts),
// package by package as opm's serve cache builds it.
import { loadFS } from '../declcfg/load.js';
import { emptyConfig, type DeclarativeConfig } from '../declcfg/types.js';
import { convertToModel } from '../model/convert.js';
import type { Model } from '../model/types.js';

/** Loading or converting failed; the message is opm's cache build error chain below "failed to rebuild cache: ". */
export class CatalogLoadError extends Error {
  override readonly name = 'CatalogLoadError';
}

/**
 * Loads dir and converts it package by package, as opm's cache build does (so a broken package is
 * reported as `build package index: process package "NAME": ...`, and only its own blobs are checked
 * together). Packages are converted in name order; the first failure is thrown.
 */
export async function loadCatalog(dir: string): Promise<{ cfg: DeclarativeConfig; model: Model }> {
  let cfg: DeclarativeConfig;
  try {
    cfg = await loadFS(dir);
  } catch (err) {
    throw new CatalogLoadError((err as Error).message);
  }
  const byPackage = new Map<string, DeclarativeConfig>();
  const part = (name: string): DeclarativeConfig => {
    let c = byPackage.get(name);
    if (!c) byPackage.set(name, (c = emptyConfig()));
    return c;
  };
  for (const p of cfg.packages) part(p.name).packages.push(p);
  for (const c of cfg.channels) part(c.package).channels.push(c);
  for (const b of cfg.bundles) part(b.package).bundles.push(b);
  for (const d of cfg.deprecations) part(d.package).deprecations.push(d);
  const model: Model = new Map();
  for (const name of [...byPackage.keys()].sort()) {
    let m: Model;
    try {
      m = convertToModel(byPackage.get(name)!);
    } catch (err) {
      throw new CatalogLoadError(`build package index: process package ${JSON.stringify(name)}: ${(err as Error).message}`);
    }
    for (const [k, v] of m) model.set(k, v);
  }
  return { cfg, model };
}
