// kplane catalog add-bundle NAME --image IMG --channel ...: lists a bundle image in an operator's
// semver template (promoting an image already in candidate to fast is the same command).
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { CATALOG_DIR, VENEER_FILE, exists, findRepoRoot } from '../repo/layout.js';
import { writeFileAtomic } from '../repo/atomic.js';
import { CHANNEL_KINDS, addBundleToVeneer, checkImageRef, checkOperatorName, isChannelKind, type ChannelKind } from '../repo/veneer.js';

export const usage = `Usage: kplane catalog add-bundle NAME --image IMG --channel KIND [flags]

Add bundle image IMG to the Bundles of channel KIND (candidate, fast or stable) in
catalog/NAME/veneer.yaml. Then run "kplane catalog generate".

Flags:
      --image string     the bundle image (required)
      --channel string   candidate, fast or stable; repeat for several (required)
      --root string      the catalog repository (default: the current directory)
`;

export async function run(argv: string[]): Promise<number> {
  const fail = (msg: string, code = 1): number => {
    process.stderr.write(`kplane catalog add-bundle: ${msg}\n`);
    return code;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { image: { type: 'string' }, channel: { type: 'string', multiple: true }, root: { type: 'string' } },
    });
  } catch (err) {
    return fail((err as Error).message, 2);
  }
  const [name, ...extra] = parsed.positionals;
  if (name === undefined || extra.length > 0) return fail(`expected exactly one operator NAME\n\n${usage}`, 2);
  const image = parsed.values.image;
  if (image === undefined) return fail('--image is required', 2);
  const channels = parsed.values.channel;
  if (channels === undefined) return fail(`--channel is required (${CHANNEL_KINDS.join(', ')})`, 2);
  const bad = channels.find((c) => !isChannelKind(c));
  if (bad !== undefined) return fail(`invalid channel "${bad}": use one of ${CHANNEL_KINDS.join(', ')}`, 2);
  try {
    checkOperatorName(name);
    checkImageRef(image);
    const root = await findRepoRoot(parsed.values.root);
    const path = join(root, CATALOG_DIR, name, VENEER_FILE);
    if (!(await exists(path))) return fail(`operator "${name}" not found: no ${join(CATALOG_DIR, name, VENEER_FILE)} (add it with "kplane catalog add-operator")`);
    const text = await readFile(path, 'utf8');
    const out = addBundleToVeneer(text, join(CATALOG_DIR, name, VENEER_FILE), image, channels as ChannelKind[]);
    await writeFileAtomic(path, out);
    process.stdout.write(`added ${image} to ${channels.join(', ')} in ${join(CATALOG_DIR, name, VENEER_FILE)}\n`);
    return 0;
  } catch (err) {
    return fail((err as Error).message);
  }
}
