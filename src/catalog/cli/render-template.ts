// `kplane catalog render-template [TYPE] [FILE]` (alias `render-veneer`): opm's
// `alpha render-template` for semver templates. FILE '-' or none reads standard input; without
// TYPE the type comes from the file's `schema`. The catalog goes to stdout only once everything
// rendered; failures print opm's message on stderr and exit 1.
// `--legacy` renders as opm v1.26.3's `alpha render-veneer semver` did (see
// src/catalog/template/semver-legacy.ts), and reports failures as it did: through log.Fatalf,
// `semver "FILE": message`.
import { readFile } from 'node:fs/promises';
import { migrationsFor } from '../bundle/migrations.js';
import type { DeclarativeConfig } from '../declcfg/types.js';
import { writeJSON, writeMermaid, writeYAML } from '../declcfg/write.js';
import { registryOptionsFromFlags, type RegistryFlagValues } from '../oci/flags.js';
import { bundleImageRenderer, type RenderOptions } from '../render.js';
import { parseFlags, UsageError, type FlagSpec } from '../../golang/pflag.js';
import { goQuote } from '../../golang/strconv.js';
import { TEMPLATE_SCHEMAS, TEMPLATE_TYPES, detectSchema, typeOfSchema } from '../template/detect.js';
import { writeLegacyMermaid } from '../template/mermaid-legacy.js';
import { renderRegistryFlags } from './common.js';
import { renderSemverTemplate, type BundleRenderer } from '../template/semver.js';

export const usage = `Render a catalog template (auto-detects type from schema if TYPE not specified)

Usage:
  kplane catalog render-template [TYPE] [FILE] [flags]
  kplane catalog render-veneer [TYPE] [FILE] [flags]

TYPE is semver (opm also knows basic and substitutes, which kplane does not render). Without
TYPE, the type comes from the schema field of the input. When FILE is '-' or not provided, the
template is read from standard input.

Examples:
  kplane catalog render-template semver catalog/my-operator/veneer.yaml > catalog/my-operator/catalog.json
  kplane catalog render-template -o yaml < veneer.yaml
  kplane catalog render-template semver --legacy veneer.yaml     # as opm v1.23-v1.26 render-veneer did

Flags:
  -h, --help                   help for render-template
      --legacy                 the algorithm of opm v1.26.3 (render-veneer; AvoidSkipPatch, per-channel linking)
      --migrate-level string   Name of the last migration to run (default: none)
  -o, --output string          Output format (json|yaml|mermaid) (default "json")

Registry flags:
      --cache-dir DIR          content cache (default $KPLANE_CACHE_DIR, else ~/.cache/kplane)
      --skip-tls-verify        skip TLS certificate verification for container image registries while pulling bundles
      --use-http               use plain HTTP for container image registries while pulling bundles
      --creds USER:PASSWORD    credentials (default: REGISTRY_AUTH_FILE, else ~/.docker/config.json)
      --username, --password
      --authfile FILE          a docker config.json / containers auth.json to read credentials from
      --image-platform OS/ARCH which image of a manifest list (default: this machine's, then linux/amd64)
      --progress MODE          auto (on a terminal only), tty, plain or none
`;

/** A failure of the command itself: "Error: ..." (opm's RunE error), or the legacy log.Fatal line. */
class CommandError extends Error {
  override readonly name = 'CommandError';
}

export interface RenderTemplateFlags {
  args: string[];
  output: string;
  legacy: boolean;
  migrateLevel?: string;
  skipTLSVerify: boolean;
  useHTTP: boolean;
  registry: RegistryFlagValues;
}

const FLAGS: FlagSpec = {
  values: new Set(['output', 'migrate-level', 'cache-dir', 'creds', 'username', 'password', 'authfile', 'image-platform', 'progress']),
  bools: new Set(['legacy', 'skip-tls-verify', 'use-http', 'skip-tls']),
  output: true,
};

/** Flags as pflag reads them (anywhere among the arguments; "-" is an argument). */
export function parseRenderTemplateArgs(argv: readonly string[]): RenderTemplateFlags {
  const { args, values, bools } = parseFlags(argv, FLAGS);
  if (args.length > 2) throw new UsageError(`accepts between 0 and 2 arg(s), received ${args.length}`);
  const skipTLS = bools['skip-tls'] === true;
  const useHTTPFlag = bools['use-http'] === true;
  const skipTLSVerify = bools['skip-tls-verify'] === true;
  // opm's GetTLSOptions
  if ('skip-tls' in bools && 'use-http' in bools) throw new CommandError('invalid flag combination: cannot use --use-http with --skip-tls');
  if ('skip-tls' in bools && 'skip-tls-verify' in bools) throw new CommandError('invalid flag combination: cannot use --skip-tls-verify with --skip-tls');
  if (skipTLSVerify && useHTTPFlag) throw new CommandError('invalid flag combination: --use-http and --skip-tls-verify cannot both be true');
  const flags: RenderTemplateFlags = {
    args,
    output: values['output'] ?? 'json',
    legacy: bools['legacy'] === true,
    skipTLSVerify,
    useHTTP: useHTTPFlag || skipTLS,
    registry: renderRegistryFlags(values),
  };
  if (values['migrate-level'] !== undefined && values['migrate-level'] !== '') flags.migrateLevel = values['migrate-level'];
  return flags;
}

/** Go's os error text for a failed open/read. */
function goFileError(op: string, path: string, err: NodeJS.ErrnoException): string {
  const why: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
    ENOTDIR: 'not a directory',
    ELOOP: 'too many levels of symbolic links',
  };
  return `${op} ${path}: ${why[err.code ?? ''] ?? err.message}`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The input text and the name opm gives its source ("stdin" or the path). */
async function readInput(file: string, legacy: boolean): Promise<{ text: string; source: string }> {
  if (file === '-') return { text: await readStdin(), source: 'stdin' };
  try {
    return { text: await readFile(file, 'utf8'), source: file };
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    // os.Open succeeds on a directory; reading it is what fails
    if (e.code === 'EISDIR') {
      const msg = goFileError('read', file, e);
      throw new CommandError(
        legacy ? `semver ${goQuote(file)}: semver-render: unable to read file: ${msg}` : `rendering template: render: unable to read file: ${msg}`,
      );
    }
    const msg = goFileError('open', file, e);
    throw new CommandError(legacy ? msg : `unable to open ${goQuote(file)}: ${msg}`);
  }
}

/** Renders as the flags say; returns the text for stdout. */
export async function renderTemplateToText(flags: RenderTemplateFlags, renderBundleOverride?: BundleRenderer): Promise<string> {
  let templateType = '';
  let file: string;
  const [a0, a1] = flags.args;
  if (a0 === undefined) file = '-';
  else if (a1 === undefined) {
    if (TEMPLATE_TYPES.includes(a0)) {
      templateType = a0;
      file = '-';
    } else file = a0;
  } else {
    templateType = a0;
    file = a1;
    if (!TEMPLATE_TYPES.includes(templateType))
      throw new CommandError(`invalid template type ${goQuote(templateType)}, must be one of: [${TEMPLATE_TYPES.join(' ')}]`);
  }

  const { text, source } = await readInput(file, flags.legacy);

  let write: (cfg: DeclarativeConfig) => string;
  switch (flags.output) {
    case 'json':
      write = writeJSON;
      break;
    case 'yaml':
      write = writeYAML;
      break;
    case 'mermaid':
      // v1.26 drew a simpler graph than today's writer
      write = flags.legacy ? (cfg) => writeLegacyMermaid(cfg) : (cfg) => writeMermaid(cfg);
      break;
    default:
      throw new CommandError(
        flags.legacy ? `invalid output format ${goQuote(flags.output)}` : `invalid --output value ${goQuote(flags.output)}, expected (json|yaml|mermaid)`,
      );
  }
  if (flags.migrateLevel !== undefined) {
    try {
      migrationsFor(flags.migrateLevel);
    } catch (err) {
      throw new CommandError((err as Error).message);
    }
  }

  if (templateType === '' && !flags.legacy) {
    try {
      templateType = typeOfSchema(detectSchema(text));
    } catch (err) {
      throw new CommandError(`auto-detecting template type: ${(err as Error).message}`);
    }
  }
  if (templateType !== '' && templateType !== 'semver') {
    const schema = Object.keys(TEMPLATE_SCHEMAS).find((s) => TEMPLATE_SCHEMAS[s] === templateType) ?? templateType;
    throw new CommandError(`the ${templateType} template (schema ${schema}) is not supported by kplane; only semver templates are rendered`);
  }

  let renderBundle = renderBundleOverride;
  if (renderBundle === undefined) {
    const pull = registryOptionsFromFlags({ ...flags.registry, 'use-http': flags.useHTTP });
    if (flags.skipTLSVerify) pull.skipTLSVerify = true;
    const opts: RenderOptions = { pull };
    if (flags.migrateLevel !== undefined) opts.migrateLevel = flags.migrateLevel;
    renderBundle = bundleImageRenderer(opts);
  }
  let cfg: DeclarativeConfig;
  try {
    cfg = await renderSemverTemplate(text, { legacy: flags.legacy, renderBundle });
  } catch (err) {
    const msg = (err as Error).message;
    throw new CommandError(flags.legacy ? `semver ${goQuote(source)}: ${msg}` : `rendering template: ${msg}`);
  }
  try {
    return write(cfg);
  } catch (err) {
    throw new CommandError(`writing output: ${(err as Error).message}`);
  }
}

/** Go's log.Fatal line: "2006/01/02 15:04:05 message" in local time. */
function logFatalLine(message: string, now = new Date()): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${now.getFullYear()}/${p(now.getMonth() + 1)}/${p(now.getDate())} ${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())} ${message}\n`;
}

export async function run(argv: string[], renderBundleOverride?: BundleRenderer): Promise<number> {
  let flags: RenderTemplateFlags;
  try {
    flags = parseRenderTemplateArgs(argv);
  } catch (err) {
    if (err instanceof UsageError) process.stderr.write(`Error: ${err.message}\n${usage.slice(usage.indexOf('Usage:'))}`);
    else process.stderr.write(`Error: ${(err as Error).message}\n`);
    return 1;
  }
  let text: string;
  try {
    text = await renderTemplateToText(flags, renderBundleOverride);
  } catch (err) {
    const msg = (err as Error).message;
    // v1.26's render failures went through log.Fatalf; everything else through cobra's "Error: "
    if (flags.legacy && msg.startsWith('semver "')) process.stderr.write(logFatalLine(msg));
    else process.stderr.write(`Error: ${msg}\n`);
    return 1;
  }
  await new Promise<void>((resolve, reject) => process.stdout.write(text, (e) => (e ? reject(e) : resolve())));
  return 0;
}
