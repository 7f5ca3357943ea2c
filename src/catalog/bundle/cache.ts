// Rendered bundle images kept on disk, keyed by the image's manifest digest and the reference it
// was rendered under (the reference is the bundle's image and one of its related images). An image
// digest names immutable content, so a render of it never changes; only this renderer can, hence
// RENDER_FORMAT in the key. Parsing a bundle's manifests is the slow part of rendering a template
// from a warm image cache; this makes the second render of the same image a file read.
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { htmlEscaped, isHTMLEscaped } from '../../golang/json.js';
import type { Bundle, Property } from '../declcfg/types.js';

/** Bump when the rendered output of the same bundle would change. */
const RENDER_FORMAT = 'kplane-render-1';

interface CachedProperty {
  type: string;
  value: unknown;
  /** the value keeps Go's HTML escapes when written (see htmlEscaped) */
  escaped?: true;
}

interface CachedBundle {
  format: string;
  bundle: Omit<Bundle, 'properties'> & { properties?: CachedProperty[] };
}

function cachePath(cacheDir: string, manifestDigest: string, ref: string): string {
  const key = createHash('sha256').update(`${RENDER_FORMAT}\n${manifestDigest}\n${ref}`).digest('hex');
  return join(cacheDir, 'renders', `${key}.json`);
}

/** The bundle rendered earlier from this image under this reference, if any. */
export async function readCachedRender(cacheDir: string, manifestDigest: string, ref: string): Promise<Bundle | undefined> {
  let text: string;
  try {
    text = await readFile(cachePath(cacheDir, manifestDigest, ref), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const cached = JSON.parse(text) as CachedBundle;
    if (cached.format !== RENDER_FORMAT) return undefined;
    const { properties, ...rest } = cached.bundle;
    const bundle: Bundle = { ...rest };
    if (properties) {
      bundle.properties = properties.map((p): Property => ({ type: p.type, value: p.escaped ? htmlEscaped(p.value) : p.value }));
    }
    return bundle;
  } catch {
    return undefined; // a damaged entry is rendered again (and rewritten)
  }
}

/** Keeps a rendered bundle (before migrations) for the next render of the same image. */
export async function writeCachedRender(cacheDir: string, manifestDigest: string, ref: string, bundle: Bundle): Promise<void> {
  const path = cachePath(cacheDir, manifestDigest, ref);
  const { properties, ...rest } = bundle;
  const cached: CachedBundle = { format: RENDER_FORMAT, bundle: { ...rest } };
  if (properties) {
    cached.bundle.properties = properties.map((p) =>
      isHTMLEscaped(p.value) ? { type: p.type, value: p.value, escaped: true } : { type: p.type, value: p.value },
    );
  }
  try {
    await mkdir(join(cacheDir, 'renders'), { recursive: true });
    const tmp = `${path}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, JSON.stringify(cached));
    await rename(tmp, path);
  } catch {
    // the cache is only a speed-up: a read-only or full disk must not fail the render
  }
}
