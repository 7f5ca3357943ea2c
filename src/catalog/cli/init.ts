// kplane catalog init [DIR]: lays out a platform catalog repository (./../repo/layout.ts).
import { parseArgs } from 'node:util';
import { initRepo } from '../repo/layout.js';
import { DEFAULT_OPM_IMAGE } from '../repo/dockerfile.js';

export const usage = `Usage: kplane catalog init [DIR] [flags]

Lay out a catalog repository in DIR (default: the current directory):
  catalog/.indexignore            keeps README.md, OWNERS and veneer.yaml out of the catalog
  catalog/README.md
  catalog.Dockerfile              the catalog image, as "opm generate dockerfile catalog"
  .github/workflows/catalog.yaml  CI: generate, validate, test, build the image
  platforms/                      platform definitions
  .gitignore
Existing files are left alone.

Flags:
  -i, --base-image string      Image base to use to build catalog (default "${DEFAULT_OPM_IMAGE}")
  -b, --builder-image string   Image to use as a build stage (default "${DEFAULT_OPM_IMAGE}")
`;

export async function run(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'base-image': { type: 'string', short: 'i' }, 'builder-image': { type: 'string', short: 'b' } },
    });
  } catch (err) {
    process.stderr.write(`kplane catalog init: ${(err as Error).message}\n`);
    return 2;
  }
  if (parsed.positionals.length > 1) {
    process.stderr.write(`kplane catalog init: accepts at most 1 arg(s), received ${parsed.positionals.length}\n`);
    return 2;
  }
  const root = parsed.positionals[0] ?? '.';
  const builder = parsed.values['builder-image'];
  if (builder === 'scratch') {
    process.stderr.write(`kplane catalog init: invalid builder image: "scratch"\n`);
    return 1;
  }
  try {
    const r = await initRepo(root, {
      ...(parsed.values['base-image'] !== undefined ? { baseImage: parsed.values['base-image'] } : {}),
      ...(builder !== undefined ? { builderImage: builder } : {}),
    });
    for (const f of r.created) process.stdout.write(`created ${f}\n`);
    for (const f of r.skipped) process.stdout.write(`kept    ${f} (exists)\n`);
    return 0;
  } catch (err) {
    process.stderr.write(`kplane catalog init: ${(err as Error).message}\n`);
    return 1;
  }
}
