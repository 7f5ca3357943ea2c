// kplane catalog add-operator NAME --image IMG [--channel ...]: a new catalog/NAME/ with its
// semver template and OWNERS.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CATALOG_DIR, OWNERS_FILE, VENEER_FILE, exists, findRepoRoot } from '../repo/layout.js';
import { newOwners, newVeneer } from '../repo/veneer.js';
import { failer, operatorArgs, parseCommandArgs } from './common.js';

export const usage = `Usage: kplane catalog add-operator NAME --image IMG [flags]

Create catalog/NAME/veneer.yaml (a semver template listing IMG) and catalog/NAME/OWNERS.
Then run "kplane catalog generate" to render catalog/NAME/catalog.yaml.

Flags:
      --image string      the operator's first bundle image (required)
      --channel string    candidate, fast or stable; repeat for several (default candidate)
      --owner string      an approver/reviewer for OWNERS; repeat for several
      --minor-channels    also generate minor-version channels (GenerateMinorChannels)
      --no-major-channels do not generate major-version channels (GenerateMajorChannels: false)
      --root string       the catalog repository (default: the current directory)
`;

export async function run(argv: string[]): Promise<number> {
  const fail = failer('add-operator');
  const parsed = parseCommandArgs(
    argv,
    {
      image: { type: 'string' },
      channel: { type: 'string', multiple: true },
      owner: { type: 'string', multiple: true },
      'minor-channels': { type: 'boolean' },
      'no-major-channels': { type: 'boolean' },
      root: { type: 'string' },
    },
    fail,
  );
  if (typeof parsed === 'number') return parsed;
  const args = operatorArgs(usage, fail, parsed.positionals, parsed.values.image, parsed.values.channel ?? ['candidate']);
  if (typeof args === 'number') return args;
  const { name, image, channels } = args;
  try {
    const root = await findRepoRoot(parsed.values.root);
    const dir = join(root, CATALOG_DIR, name);
    if (await exists(dir)) return fail(`operator "${name}" already exists (${dir})`);
    const major = !parsed.values['no-major-channels'];
    const minor = parsed.values['minor-channels'] ?? false;
    if (!major && !minor) return fail('--no-major-channels needs --minor-channels: the template would generate no channels', 2);
    const veneer = newVeneer({ image, channels, generateMajorChannels: major, generateMinorChannels: minor });
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, VENEER_FILE), veneer, { flag: 'wx' });
    await writeFile(join(dir, OWNERS_FILE), newOwners(parsed.values.owner ?? []), { flag: 'wx' });
    process.stdout.write(`created ${join(CATALOG_DIR, name, VENEER_FILE)}\ncreated ${join(CATALOG_DIR, name, OWNERS_FILE)}\n`);
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}
