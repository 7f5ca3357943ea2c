// Catalog dir → DeclarativeConfig → model, through the team's loader (declcfg/load.ts) and
// converter (model/convert.ts).
//
// TEMPORARY: until declcfg/load.ts lands, a minimal loader below reads the directory (JSON streams and
// YAML documents, `.indexignore` not honoured). It is replaced by loadFS as soon as that exists.
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import {
  SchemaBundle,
  SchemaChannel,
  SchemaDeprecation,
  SchemaPackage,
  emptyConfig,
  type DeclarativeConfig,
} from '../declcfg/types.js';
import { convertToModel } from '../model/convert.js';
import type { Model } from '../model/types.js';
import { csvOf, objectsFromProperties } from './api-bundle.js';

type LoadFS = (dir: string) => Promise<DeclarativeConfig>;

async function teamLoader(): Promise<LoadFS | undefined> {
  // A computed specifier keeps the type checker from requiring the module before it exists.
  const spec = '../declcfg/load.js';
  try {
    const mod = (await import(spec)) as { loadFS?: LoadFS };
    return mod.loadFS;
  } catch {
    return undefined;
  }
}

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
  const loadFS = (await teamLoader()) ?? minimalLoadFS;
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

async function walk(dir: string, out: string[]): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) await walk(p, out);
    else if (/\.(json|ya?ml)$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Splits a stream of concatenated JSON values (FBC's JSON files) into values. */
function parseJSONStream(text: string, path: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
    } else if (depth === 0 && !/\s/.test(c!)) {
      throw new Error(`${path}: unexpected ${JSON.stringify(c)} between JSON values`);
    }
  }
  return out;
}

async function minimalLoadFS(root: string): Promise<DeclarativeConfig> {
  const cfg = emptyConfig();
  for (const file of await walk(root, [])) {
    const text = await readFile(file, 'utf8');
    const rel = relative(root, file);
    const docs = file.endsWith('.json') ? parseJSONStream(text, rel) : parseAllDocuments(text).map((d) => d.toJS() as unknown);
    for (const doc of docs) {
      if (doc === null || typeof doc !== 'object') continue;
      const blob = doc as Record<string, unknown>;
      switch (blob.schema) {
        case SchemaPackage:
          cfg.packages.push(blob as never);
          break;
        case SchemaChannel:
          cfg.channels.push(blob as never);
          break;
        case SchemaBundle: {
          const b = blob as unknown as DeclarativeConfig['bundles'][number];
          b.objects = objectsFromProperties(b.package, b.name, b.properties ?? []);
          b.csvJSON = csvOf(b.objects);
          cfg.bundles.push(b);
          break;
        }
        case SchemaDeprecation:
          cfg.deprecations.push(blob as never);
          break;
        case undefined:
          throw new Error(`${rel}: missing schema`);
        default:
          cfg.others.push({ schema: String(blob.schema), package: String(blob.package ?? ''), name: String(blob.name ?? ''), blob });
      }
    }
  }
  return cfg;
}
