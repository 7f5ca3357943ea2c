// kplane catalog add-operator NAME --image IMG [--channel ...]: a new catalog/NAME/ with its
// semver template and OWNERS.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CATALOG_DIR, OWNERS_FILE, VENEER_FILE, exists, findRepoRoot } from '../repo/layout.js';
import { CHANNEL_KINDS, checkImageRef, checkOperatorName, isChannelKind, newOwners, newVeneer, type ChannelKind } from '../repo/veneer.js';

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
  const fail = (msg: string, code = 1): number => {
    process.stderr.write(`kplane catalog add-operator: ${msg}\n`);
    return code;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        image: { type: 'string' },
        channel: { type: 'string', multiple: true },
        owner: { type: 'string', multiple: true },
        'minor-channels': { type: 'boolean' },
        'no-major-channels': { type: 'boolean' },
        root: { type: 'string' },
      },
    });
  } catch (err) {
    return fail((err as Error).message, 2);
  }
  const [name, ...extra] = parsed.positionals;
  if (name === undefined || extra.length > 0) return fail(`expected exactly one operator NAME\n\n${usage}`, 2);
  const image = parsed.values.image;
  if (image === undefined) return fail('--image is required', 2);
  const channels = parsed.values.channel ?? ['candidate'];
  const bad = channels.find((c) => !isChannelKind(c));
  if (bad !== undefined) return fail(`invalid channel "${bad}": use one of ${CHANNEL_KINDS.join(', ')}`, 2);
  try {
    checkOperatorName(name);
    checkImageRef(image);
    const root = await findRepoRoot(parsed.values.root);
    const dir = join(root, CATALOG_DIR, name);
    if (await exists(dir)) return fail(`operator "${name}" already exists (${dir})`);
    const major = !parsed.values['no-major-channels'];
    const minor = parsed.values['minor-channels'] ?? false;
    if (!major && !minor) return fail('--no-major-channels needs --minor-channels: the template would generate no channels', 2);
    const veneer = newVeneer({ image, channels: channels as ChannelKind[], generateMajorChannels: major, generateMinorChannels: minor });
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, VENEER_FILE), veneer, { flag: 'wx' });
    await writeFile(join(dir, OWNERS_FILE), newOwners(parsed.values.owner ?? []), { flag: 'wx' });
    process.stdout.write(`created ${join(CATALOG_DIR, name, VENEER_FILE)}\ncreated ${join(CATALOG_DIR, name, OWNERS_FILE)}\n`);
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}
