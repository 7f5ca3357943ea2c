// Pieces the catalog subcommands share: their error line, flag parsing, the operator arguments of
// add-operator/add-bundle, the catalog tools built from flags, and opm's registry flag values.
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { registryOptionsFromFlags, type RegistryFlagValues } from '../oci/flags.js';
import { defaultTools, parseMirror } from '../repo/toolkit.js';
import type { CatalogTools } from '../repo/tools.js';
import { CHANNEL_KINDS, checkImageRef, checkOperatorName, isChannelKind, type ChannelKind } from '../repo/veneer.js';

/** Reports msg and gives the exit code to return. */
export type Fail = (msg: string, code?: number) => number;

/** A Fail that writes "kplane catalog CMD: msg" to stderr; the exit code is 1 unless told. */
export function failer(cmd: string): Fail {
  return (msg, code = 1) => {
    process.stderr.write(`kplane catalog ${cmd}: ${msg}\n`);
    return code;
  };
}

type Options = NonNullable<ParseArgsConfig['options']>;
type Parsed<O extends Options> = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: O }>>;

/** node:util parseArgs with positionals allowed; a bad flag is reported through fail, exit code 2. */
export function parseCommandArgs<O extends Options>(argv: string[], options: O, fail: Fail): Parsed<O> | number {
  try {
    return parseArgs({ args: argv, allowPositionals: true, options });
  } catch (err) {
    return fail((err as Error).message, 2);
  }
}

/** The optional single positional argument of generate and test, or the exit code (cobra's message). */
export function atMostOneArg(positionals: readonly string[], fail: Fail): string | undefined | number {
  if (positionals.length > 1) return fail(`accepts at most 1 arg(s), received ${positionals.length}`, 2);
  return positionals[0];
}

export interface OperatorArgs {
  name: string;
  image: string;
  channels: ChannelKind[];
}

/**
 * NAME, --image and --channel of add-operator and add-bundle, checked in that order (usage errors,
 * exit code 2; then a bad NAME or image, exit code 1), or the exit code; channels undefined means
 * --channel was required and not given.
 */
export function operatorArgs(
  usage: string,
  fail: Fail,
  positionals: readonly string[],
  image: string | undefined,
  channels: readonly string[] | undefined,
): OperatorArgs | number {
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0) return fail(`expected exactly one operator NAME\n\n${usage}`, 2);
  if (image === undefined) return fail('--image is required', 2);
  if (channels === undefined) return fail(`--channel is required (${CHANNEL_KINDS.join(', ')})`, 2);
  const bad = channels.find((c) => !isChannelKind(c));
  if (bad !== undefined) return fail(`invalid channel "${bad}": use one of ${CHANNEL_KINDS.join(', ')}`, 2);
  try {
    checkOperatorName(name);
    checkImageRef(image);
  } catch (err) {
    return fail((err as Error).message);
  }
  return { name, image, channels: channels as ChannelKind[] };
}

/** The flags --legacy and --mirror of generate and test. */
export const toolFlagOptions = {
  legacy: { type: 'boolean' },
  mirror: { type: 'string', multiple: true },
} as const;

/** The real catalog tools for --legacy, --mirror and the registry flags; throws on a bad --mirror or registry flag. */
export function toolsFromFlags(v: { legacy?: boolean | undefined; mirror?: string[] | undefined }, registry: RegistryFlagValues): CatalogTools {
  return defaultTools({ legacy: v.legacy ?? false, mirrors: (v.mirror ?? []).map(parseMirror), pull: registryOptionsFromFlags(registry) });
}

/** The registry flags of render and render-template, as opm spells them there (--image-platform for --platform). */
export function renderRegistryFlags(values: Readonly<Record<string, string | undefined>>): RegistryFlagValues {
  return {
    'cache-dir': values['cache-dir'],
    creds: values['creds'],
    username: values['username'],
    password: values['password'],
    authfile: values['authfile'],
    platform: values['image-platform'],
    progress: values['progress'],
  };
}
