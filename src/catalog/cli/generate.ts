// kplane catalog generate dockerfile DIR: the catalog image Dockerfile, as opm generate dockerfile.
// kplane catalog generate [ROOT]: renders every catalog/<operator>/veneer.yaml of a catalog
// repository into its catalog.yaml (only what changed) and validates the whole catalog.
import { open, stat } from 'node:fs/promises';
import { basename, dirname, join, normalize } from 'node:path';
import { registryFlagOptions, registryFlagsUsage } from '../oci/flags.js';
import { DEFAULT_OPM_IMAGE, generateDockerfile, parseLabels } from '../repo/dockerfile.js';
import { generate } from '../repo/generate.js';
import { findRepoRoot } from '../repo/layout.js';
import { atMostOneArg, failer, parseCommandArgs, toolFlagOptions, toolsFromFlags } from './common.js';

export const usage = `Usage:
  kplane catalog generate dockerfile <fbcRootDir> [flags]
  kplane catalog generate [ROOT] [flags]

generate dockerfile: generate a Dockerfile for a file-based catalog, as "opm generate dockerfile".
It is written beside <fbcRootDir>, named <fbcRootDir>.Dockerfile; if that file exists, the
command fails. A separate builder and base image can be specified. The builder image may not be
"scratch".
  -i, --base-image string       Image base to use to build catalog. (default "${DEFAULT_OPM_IMAGE}")
  -b, --builder-image string    Image to use as a build stage. (default "${DEFAULT_OPM_IMAGE}")
  -l, --extra-labels strings    Extra labels to include in the generated Dockerfile. Labels should be of the form 'key=value'.

generate [ROOT]: render each catalog/<operator>/veneer.yaml of the catalog repository ROOT (default:
the current directory) into catalog/<operator>/catalog.yaml when the template (or the rendered
file) changed since the last run, then validate the whole catalog.
      --force                  render every template
      --operator string        render only this operator; repeat for several
      --legacy                 render with the opm v1.23-v1.26 algorithm (render-veneer)
      --mirror FROM=TO         pull images under FROM from TO instead (the catalog keeps FROM); repeatable

${registryFlagsUsage}`;

export async function run(argv: string[]): Promise<number> {
  if (argv[0] === 'dockerfile') return dockerfile(argv.slice(1));
  return generateRepo(argv);
}

async function generateRepo(argv: string[]): Promise<number> {
  const fail = failer('generate');
  const parsed = parseCommandArgs(
    argv,
    { ...registryFlagOptions, force: { type: 'boolean' }, operator: { type: 'string', multiple: true }, ...toolFlagOptions },
    fail,
  );
  if (typeof parsed === 'number') return parsed;
  const arg = atMostOneArg(parsed.positionals, fail);
  if (typeof arg === 'number') return arg;
  try {
    const root = await findRepoRoot(arg);
    const v = parsed.values;
    const tools = toolsFromFlags(v, v);
    const result = await generate({
      root,
      tools,
      force: v.force ?? false,
      ...(v.operator ? { operators: v.operator } : {}),
      mode: v.legacy ? 'legacy' : 'default',
      progress: (line) => process.stderr.write(`${line}\n`),
    });
    const failed = result.operators.filter((o) => o.status === 'failed');
    for (const f of failed) process.stderr.write(`kplane catalog generate: ${f.operator}: ${f.error}\n`);
    if (result.validationError !== undefined) process.stderr.write(`kplane catalog generate: ${result.validationError}\n`);
    return result.ok ? 0 : 1;
  } catch (err) {
    return fail((err as Error).message);
  }
}

async function dockerfile(argv: string[]): Promise<number> {
  const fail = failer('generate dockerfile');
  const parsed = parseCommandArgs(
    argv,
    {
      'base-image': { type: 'string', short: 'i', default: DEFAULT_OPM_IMAGE },
      'binary-image': { type: 'string' },
      'builder-image': { type: 'string', short: 'b' },
      'extra-labels': { type: 'string', short: 'l', multiple: true, default: [] },
    },
    fail,
  );
  if (typeof parsed === 'number') return parsed;
  if (parsed.positionals.length !== 1) return fail(`accepts 1 arg(s), received ${parsed.positionals.length}`, 2);
  const v = parsed.values;
  if (v['binary-image'] !== undefined && argv.some((a) => a === '-i' || a.startsWith('--base-image'))) {
    return fail('if any flags in the group [binary-image base-image] are set none of the others can be; [base-image binary-image] were all set', 2);
  }
  // --binary-image is opm's deprecated name of --base-image; alone, it also sets the builder image.
  const baseImage = v['binary-image'] ?? v['base-image'];
  const builderImage = v['builder-image'] ?? (v['binary-image'] !== undefined ? baseImage : DEFAULT_OPM_IMAGE);
  if (builderImage === 'scratch') return fail(`invalid builder image: "${builderImage}"`);
  let labels: Record<string, string>;
  try {
    // opm's StringSlice flag also splits each value on commas
    labels = parseLabels(v['extra-labels'].flatMap((l) => l.split(',')));
  } catch (err) {
    return fail((err as Error).message);
  }
  const fromDir = normalize(parsed.positionals[0]!).replace(/\/+$/, '') || '/';
  const indexName = basename(fromDir);
  const dockerfilePath = join(dirname(fromDir), `${indexName}.Dockerfile`);
  let text: string;
  try {
    text = generateDockerfile({ baseImage, builderImage, indexDir: indexName, extraLabels: labels });
  } catch (err) {
    return fail((err as Error).message);
  }
  try {
    await stat(dockerfilePath);
    return fail(`path "${dockerfilePath}": file already exists`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') return fail((err as Error).message);
  }
  try {
    const s = await stat(fromDir);
    if (!s.isDirectory()) return fail(`provided root path "${fromDir}" is not a directory`);
  } catch {
    return fail(`stat ${fromDir}: no such file or directory`);
  }
  // "wx": never overwrite a Dockerfile that appeared since the check above
  const f = await open(dockerfilePath, 'wx');
  try {
    await f.writeFile(text);
  } finally {
    await f.close();
  }
  return 0;
}
