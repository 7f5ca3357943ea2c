// kplane catalog bundle build|push|pull: bundle and catalog images without a container engine
// (../oci/: OCI layouts, the distribution API).
import { OciError } from '../oci/errors.js';
import { registryFlagOptions, registryFlagsUsage, registryOptionsFromFlags } from '../oci/flags.js';
import { buildBundleImage, buildCatalogImage, localStoreDir, parsePlatform, pullImage, pushImage } from '../oci/index.js';
import type { BuildOptions } from '../oci/index.js';
import { parseReference } from '../oci/reference.js';
import { failer, parseCommandArgs } from './common.js';

export const usage = `Usage:
  kplane catalog bundle build DIR --tag REF [--oci-layout DIR] [--push] [--label KEY=VALUE ...]
  kplane catalog bundle build --catalog DIR --tag REF [--oci-layout DIR] [--push]
  kplane catalog bundle push REF [--from oci:DIR[:TAG] | --oci-layout DIR]
  kplane catalog bundle pull REF [--output DIR]

build   Builds a registry+v1 bundle directory (manifests/, metadata/annotations.yaml) into an OCI
        image: one layer with manifests/ and metadata/, labelled with the bundle's annotations as
        opm's bundle Dockerfile does. With --catalog, builds a file-based catalog directory into a
        catalog image (the catalog at /configs, label operators.operatorframework.io.index.configs.v1).
        The image goes into --oci-layout DIR (named REF there), else into the local image store;
        --push pushes it to REF right away. Prints the image digest.
push    Pushes an image to REF: from --from oci:DIR[:TAG] (any OCI layout: ours, skopeo's, umoci's),
        from --oci-layout DIR (the image named REF there, as "bundle build --oci-layout" names it),
        else the image "bundle build --tag REF" put into the local image store.
pull    Pulls REF (HOST/REPO[:TAG][@DIGEST] or oci:DIR[:TAG]) through the content cache and prints
        its digest and labels; --output DIR unpacks its filesystem into DIR.

Build flags:
      --tag REF             the image name (required)
      --catalog DIR         build a catalog image from this file-based catalog instead
      --oci-layout DIR      write into this OCI layout (default: the local image store under the cache dir)
      --label KEY=VALUE     an extra label (repeatable)
      --platforms LIST      build an image index with one image per platform, e.g. linux/amd64,linux/arm64
      --push                push to --tag after building

${registryFlagsUsage}`;

const fail = failer('bundle');

export async function run(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'build' && sub !== 'push' && sub !== 'pull') return fail(`want a subcommand: build, push or pull\n\n${usage}`, 2);
  const parsed = parseCommandArgs(
    rest,
    {
      ...registryFlagOptions,
      tag: { type: 'string', short: 't' },
      catalog: { type: 'string' },
      'oci-layout': { type: 'string' },
      label: { type: 'string', multiple: true },
      platforms: { type: 'string' },
      push: { type: 'boolean' },
      from: { type: 'string' },
      output: { type: 'string', short: 'o' },
    },
    fail,
  );
  if (typeof parsed === 'number') return parsed;
  const v = parsed.values;
  try {
    const reg = registryOptionsFromFlags(v);
    if (sub === 'build') {
      const dirs = parsed.positionals;
      if (v.catalog === undefined && dirs.length !== 1) return fail('build wants one bundle directory (or --catalog DIR)', 2);
      if (v.catalog !== undefined && dirs.length !== 0) return fail('build --catalog DIR takes no other directory', 2);
      if (!v.tag) return fail('build needs --tag REF', 2);
      if (v.push) parseReference(v.tag); // a bad push target fails before anything is built
      const labels: Record<string, string> = {};
      for (const l of v.label ?? []) {
        const i = l.indexOf('=');
        if (i <= 0) return fail(`--label wants KEY=VALUE, not "${l}"`, 2);
        labels[l.slice(0, i)] = l.slice(i + 1);
      }
      const opts: BuildOptions = {
        labels,
        tag: v.tag,
        ...(v['oci-layout'] ? { layoutDir: v['oci-layout'] } : {}),
        ...(reg.cacheDir ? { cacheDir: reg.cacheDir } : {}),
        ...(v.platforms ? { platforms: v.platforms.split(',').map((p) => parsePlatform(p.trim())) } : {}),
      };
      const built = v.catalog !== undefined ? buildCatalogImage(v.catalog, opts) : buildBundleImage(dirs[0]!, opts);
      process.stderr.write(`built ${v.tag} into oci:${built.layoutDir}\n`);
      if (v.push) {
        const pushed = await pushImage({ layoutDir: built.layoutDir, tag: v.tag }, v.tag, reg);
        process.stderr.write(`pushed ${pushed.ref}@${pushed.digest}\n`);
      }
      process.stdout.write(`${built.digest}\n`);
      return 0;
    }
    if (sub === 'push') {
      if (parsed.positionals.length !== 1) return fail('push wants one image reference', 2);
      const dest = parsed.positionals[0]!;
      const from = v.from ?? (v['oci-layout'] ? `oci:${v['oci-layout']}:${dest}` : undefined);
      const source = from ?? { layoutDir: localStoreDir(reg.cacheDir), tag: dest };
      const pushed = await pushImage(source, dest, {
        ...reg,
        onBlob: (e) => {
          if (reg.progress) process.stderr.write(`${e.uploaded ? 'uploaded' : 'exists  '} ${e.digest} (${e.size} bytes)\n`);
        },
      });
      process.stderr.write(`pushed ${pushed.ref}@${pushed.digest}\n`);
      process.stdout.write(`${pushed.digest}\n`);
      return 0;
    }
    if (parsed.positionals.length !== 1) return fail('pull wants one image reference', 2);
    const img = await pullImage(parsed.positionals[0]!, { ...reg, ...(v.output ? { dest: v.output } : {}) });
    process.stdout.write(JSON.stringify({ digest: img.digest, manifestDigest: img.manifestDigest, root: img.root, labels: img.labels }, null, 2) + '\n');
    return 0;
  } catch (err) {
    if (err instanceof OciError) return fail(err.message);
    const e = err as Error;
    return fail(e.message ?? String(err));
  }
}
