// kplane catalog add-bundle NAME --image IMG --channel ...: lists a bundle image in an operator's
// semver template (promoting an image already in candidate to fast is the same command).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CATALOG_DIR, VENEER_FILE, exists, findRepoRoot } from '../repo/layout.js';
import { writeFileAtomic } from '../repo/atomic.js';
import { addBundleToVeneer } from '../repo/veneer.js';
import { failer, operatorArgs, parseCommandArgs } from './common.js';

export const usage = `Usage: kplane catalog add-bundle NAME --image IMG --channel KIND [flags]

Add bundle image IMG to the Bundles of channel KIND (candidate, fast or stable) in
catalog/NAME/veneer.yaml. Then run "kplane catalog generate".

Flags:
      --image string     the bundle image (required)
      --channel string   candidate, fast or stable; repeat for several (required)
      --root string      the catalog repository (default: the current directory)
`;

export async function run(argv: string[]): Promise<number> {
  const fail = failer('add-bundle');
  const parsed = parseCommandArgs(argv, { image: { type: 'string' }, channel: { type: 'string', multiple: true }, root: { type: 'string' } }, fail);
  if (typeof parsed === 'number') return parsed;
  const args = operatorArgs(usage, fail, parsed.positionals, parsed.values.image, parsed.values.channel);
  if (typeof args === 'number') return args;
  const { name, image, channels } = args;
  try {
    const root = await findRepoRoot(parsed.values.root);
    const path = join(root, CATALOG_DIR, name, VENEER_FILE);
    if (!(await exists(path)))
      return fail(`operator "${name}" not found: no ${join(CATALOG_DIR, name, VENEER_FILE)} (add it with "kplane catalog add-operator")`);
    const text = await readFile(path, 'utf8');
    const out = addBundleToVeneer(text, join(CATALOG_DIR, name, VENEER_FILE), image, channels);
    await writeFileAtomic(path, out);
    process.stdout.write(`added ${image} to ${channels.join(', ')} in ${join(CATALOG_DIR, name, VENEER_FILE)}\n`);
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}
