// The real CatalogTools: semver templates rendered by template/semver.ts, bundle images pulled by
// oci/pull.ts and rendered by bundle/render.ts, catalogs read and written by declcfg/, validated
// by model/. Image mirrors let a repository whose templates name its production registry be
// rendered from another one (a CI cache, or the loopback registry of the tests): the bundle is
// pulled from the mirror and keeps the name the template gives it.
import type { Bundle, DeclarativeConfig } from '../declcfg/types.js';
import { loadFS } from '../declcfg/load.js';
import { writeYAML } from '../declcfg/write.js';
import { convertToModel } from '../model/convert.js';
import { renderSemverTemplate } from '../template/semver.js';
import { renderBundleImage } from '../render.js';
import { pullImage, type PullOptions } from '../oci/pull.js';
import type { CatalogTools } from './tools.js';

export interface Mirror {
  /** an image name prefix, e.g. "registry.example.com/bundles" */
  from: string;
  /** what replaces it when pulling, e.g. "127.0.0.1:5000/bundles" */
  to: string;
}

/** "FROM=TO" */
export function parseMirror(s: string): Mirror {
  const i = s.indexOf('=');
  if (i <= 0 || i === s.length - 1) throw new Error(`invalid --mirror "${s}": want FROM=TO, e.g. registry.example.com/bundles=127.0.0.1:5000/bundles`);
  return { from: s.slice(0, i).replace(/\/+$/, ''), to: s.slice(i + 1).replace(/\/+$/, '') };
}

/** The reference to pull for image: the longest matching mirror prefix replaced (at a path boundary). */
export function mirrored(image: string, mirrors: readonly Mirror[]): string {
  let best: Mirror | undefined;
  for (const m of mirrors) {
    const boundary = image.length === m.from.length || '/:@'.includes(image[m.from.length] ?? '');
    if (image.startsWith(m.from) && boundary && (!best || m.from.length > best.from.length)) best = m;
  }
  return best ? best.to + image.slice(best.from.length) : image;
}

export interface ToolkitOptions {
  legacy?: boolean;
  mirrors?: readonly Mirror[];
  pull?: PullOptions;
}

/** A bundle image → its olm.bundle blob (render.ts, as opm's template renders it), pulled through the mirrors. */
export function mirroredBundleRenderer(o: ToolkitOptions): (image: string) => Promise<Bundle> {
  const mirrors = o.mirrors ?? [];
  return (image) =>
    renderBundleImage(image, {
      pull: o.pull ?? {},
      pullImage: async (ref, opts) => {
        const from = mirrored(ref, mirrors);
        try {
          return await pullImage(from, opts);
        } catch (err) {
          if (from === ref) throw err;
          throw new Error(`${(err as Error).message} (pulled from mirror ${from})`, { cause: err });
        }
      },
    });
}

export function defaultTools(o: ToolkitOptions = {}): CatalogTools {
  const renderBundle = mirroredBundleRenderer(o);
  return {
    renderTemplate: (text: string): Promise<DeclarativeConfig> => renderSemverTemplate(text, { legacy: o.legacy ?? false, renderBundle }),
    writeYAML,
    loadFS,
    validate(cfg: DeclarativeConfig): void {
      convertToModel(cfg); // links and validates; throws as opm does
    },
  };
}
