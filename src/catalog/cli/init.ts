// kplane catalog init [DIR]: lays out a platform catalog repository (./../repo/layout.ts).
import { initRepo } from '../repo/layout.js';
import { DEFAULT_OPM_IMAGE } from '../repo/dockerfile.js';
import { atMostOneArg, failer, parseCommandArgs } from './common.js';

export const usage = `Usage: kplane catalog init [DIR] [flags]

Lay out a catalog repository in DIR (default: the current directory):
  catalog/.indexignore            keeps README.md, OWNERS and veneer.yaml out of the catalog
  catalog/README.md
  catalog.Dockerfile              the catalog image, as "opm generate dockerfile catalog"
  .github/workflows/catalog.yaml  CI: generate, validate, test, build the image
  platforms/README.md             where platform definitions go (platforms/<name>.yaml)
  .gitignore
Existing files are left alone.

Flags:
  -i, --base-image string      Image base to use to build catalog (default "${DEFAULT_OPM_IMAGE}")
  -b, --builder-image string   Image to use as a build stage (default "${DEFAULT_OPM_IMAGE}")
`;

export async function run(argv: string[]): Promise<number> {
  const fail = failer('init');
  const parsed = parseCommandArgs(argv, { 'base-image': { type: 'string', short: 'i' }, 'builder-image': { type: 'string', short: 'b' } }, fail);
  if (typeof parsed === 'number') return parsed;
  const arg = atMostOneArg(parsed.positionals, fail);
  if (typeof arg === 'number') return arg;
  const root = arg ?? '.';
  const builder = parsed.values['builder-image'];
  if (builder === 'scratch') return fail('invalid builder image: "scratch"');
  try {
    const r = await initRepo(root, {
      ...(parsed.values['base-image'] !== undefined ? { baseImage: parsed.values['base-image'] } : {}),
      ...(builder !== undefined ? { builderImage: builder } : {}),
    });
    for (const f of r.created) process.stdout.write(`created ${f}\n`);
    for (const f of r.skipped) process.stdout.write(`kept    ${f} (exists)\n`);
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}
