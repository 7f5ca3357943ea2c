// `kplane catalog render REF...`, as `opm render`: bundle directories, file-based catalog
// directories, bundle images and catalog images rendered into one stream of FBC blobs on stdout
// (JSON or YAML, written only once everything rendered). Failures are logged as Go's log.Fatal
// logs them ("2006/01/02 15:04:05 message" on stderr, exit 1); argument mistakes as cobra reports them.
import type { DeclarativeConfig } from '../declcfg/types.js';
import { writeJSON, writeYAML } from '../declcfg/write.js';
import { migrationsFor, migrationsHelpText } from '../bundle/migrations.js';
import { registryOptionsFromFlags, type RegistryFlagValues } from '../oci/flags.js';
import { render, type RenderOptions } from '../render.js';
import { parseFlags, UsageError, type FlagSpec } from '../../golang/pflag.js';
import { goQuote } from '../../golang/strconv.js';
import { renderRegistryFlags } from './common.js';

export const usage = `Generate a stream of file-based catalog objects to stdout from the provided
catalog images, file-based catalog directories, bundle images, and bundle directories.

Usage:
  kplane catalog render [catalog-image | catalog-directory | bundle-image | bundle-directory]... [flags]

Flags:
      --alpha-image-ref-template string   When bundle image reference information is unavailable, populate it with this template
  -h, --help                              help for render
      --migrate                           Perform all available schema migrations on the rendered FBC
      --migrate-level string              Name of the last migration to run (default: none)
${migrationsHelpText()
  .split('\n')
  .map((l) => (l === '' ? '' : `                                          ${l}`))
  .join('\n')}
  -o, --output string                     Output format of the streamed file-based catalog objects (json|yaml) (default "json")
      --platform FILE                     Keep only the operators and channels of this platform definition (kplane)

Registry flags:
      --cache-dir DIR                     content cache (default $KPLANE_CACHE_DIR, else ~/.cache/kplane)
      --skip-tls-verify                   skip TLS certificate verification for container image registries while pulling bundles
      --skip-tls                          plain HTTP (as opm: same as --use-http)
      --use-http                          use plain HTTP for container image registries while pulling bundles
      --creds USER:PASSWORD               credentials (default: REGISTRY_AUTH_FILE, else ~/.docker/config.json)
      --username, --password
      --authfile FILE                     a docker config.json / containers auth.json to read credentials from
      --image-platform OS/ARCH            which image of a manifest list (default: this machine's, then linux/amd64)
      --progress MODE                     auto (on a terminal only), tty, plain or none
`;

/** The parsed command line. */
export interface RenderFlags {
  refs: string[];
  output: string;
  migrateLevel?: string;
  migrateAll: boolean;
  imageRefTemplate?: string;
  platformFile?: string;
  skipTLSVerify: boolean;
  skipTLS: boolean;
  useHTTP: boolean;
  registry: RegistryFlagValues;
}

const FLAGS: FlagSpec = {
  values: new Set([
    'output',
    'migrate-level',
    'alpha-image-ref-template',
    'platform',
    'cache-dir',
    'creds',
    'username',
    'password',
    'authfile',
    'image-platform',
    'progress',
  ]),
  bools: new Set(['migrate', 'skip-tls-verify', 'skip-tls', 'use-http']),
  output: true,
};

export function parseRenderArgs(argv: readonly string[]): RenderFlags {
  const { args: refs, values, bools, changed } = parseFlags(argv, FLAGS);
  if (changed.has('migrate') && changed.has('migrate-level')) {
    throw new UsageError('if any flags in the group [migrate migrate-level] are set none of the others can be; [migrate migrate-level] were all set');
  }
  if (refs.length < 1) throw new UsageError(`requires at least 1 arg(s), only received ${refs.length}`);
  const flags: RenderFlags = {
    refs,
    output: values['output'] ?? 'json',
    migrateAll: bools['migrate'] === true,
    skipTLSVerify: bools['skip-tls-verify'] === true,
    skipTLS: bools['skip-tls'] === true,
    useHTTP: bools['use-http'] === true,
    registry: renderRegistryFlags(values),
  };
  if (values['migrate-level'] !== undefined) flags.migrateLevel = values['migrate-level'];
  if (values['alpha-image-ref-template'] !== undefined) flags.imageRefTemplate = values['alpha-image-ref-template'];
  if (values['platform'] !== undefined) flags.platformFile = values['platform'];
  // opm's GetTLSOptions
  if (changed.has('skip-tls') && changed.has('use-http')) throw new FatalError('invalid flag combination: cannot use --use-http with --skip-tls');
  if (changed.has('skip-tls') && changed.has('skip-tls-verify')) throw new FatalError('invalid flag combination: cannot use --skip-tls-verify with --skip-tls');
  if (flags.skipTLSVerify && flags.useHTTP) throw new FatalError('invalid flag combination: --use-http and --skip-tls-verify cannot both be true');
  return flags;
}

/** A failure opm reports through log.Fatal. */
class FatalError extends Error {
  override readonly name = 'FatalError';
}

/** Go's log.Fatal line: "2006/01/02 15:04:05 message" in local time. */
export function logFatalLine(message: string, now = new Date()): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}/${p(now.getMonth() + 1)}/${p(now.getDate())} ${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
  return `${stamp} ${message}${message.endsWith('\n') ? '' : '\n'}`;
}

/**
 * The platform filter of `--platform FILE` (kplane's addition, from the catalog repository
 * workflow): the rendered config keeps only the platform's operators and channels.
 */
export async function filterForPlatform(cfg: DeclarativeConfig, platformFile: string): Promise<DeclarativeConfig> {
  const { loadPlatform, filterCatalogForPlatform } = await import('../repo/platform.js');
  return filterCatalogForPlatform(cfg, await loadPlatform(platformFile));
}

/** Renders as the flags say and returns the text for stdout (throws FatalError-worthy errors). */
export async function renderToText(flags: RenderFlags): Promise<string> {
  let write: (cfg: DeclarativeConfig) => string;
  if (flags.output === 'json') write = writeJSON;
  else if (flags.output === 'yaml') write = writeYAML;
  else throw new FatalError(`invalid --output value ${goQuote(flags.output)}, expected (json|yaml)`);

  const level = flags.migrateAll ? 'all' : flags.migrateLevel;
  if (level) migrationsFor(level); // unknown levels fail before anything is pulled
  const reg = registryOptionsFromFlags({ ...flags.registry, 'use-http': flags.useHTTP || flags.skipTLS });
  if (flags.skipTLSVerify) reg.skipTLSVerify = true;
  const opts: RenderOptions = { pull: reg };
  if (level) opts.migrateLevel = level;
  if (flags.imageRefTemplate !== undefined) opts.imageRefTemplate = flags.imageRefTemplate;
  let cfg = await render(flags.refs, opts);
  if (flags.platformFile !== undefined) cfg = await filterForPlatform(cfg, flags.platformFile);
  return write(cfg);
}

export async function run(argv: string[]): Promise<number> {
  let flags: RenderFlags;
  try {
    flags = parseRenderArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`Error: ${err.message}\n${usage.slice(usage.indexOf('Usage:'))}\n`);
      return 1;
    }
    process.stderr.write(logFatalLine((err as Error).message));
    return 1;
  }
  let text: string;
  try {
    text = await renderToText(flags);
  } catch (err) {
    process.stderr.write(logFatalLine((err as Error).message));
    return 1;
  }
  await new Promise<void>((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));
  return 0;
}
