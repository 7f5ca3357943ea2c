// `kplane catalog validate <directory> [-o json|yaml]`, as `opm validate`: load the file-based
// catalog (honouring .indexignore), convert it into the model (which validates it) and report.
// Without -o a failure is logged the way opm's logrus logger.Fatal logs it, on stderr, exit 1; with
// -o the result is printed to stdout as {passed, error.message} and the exit code still says it.
// Argument and flag mistakes are reported as cobra reports them: "Error: ..." and the usage.
import { stat } from 'node:fs/promises';

import { loadFS } from '../declcfg/load.js';
import { goJSON } from '../../golang/json.js';
import { jsonToYAML } from '../../golang/yaml-write.js';
import { convertToModel } from '../model/convert.js';
import { parseFlags, UsageError } from '../../golang/pflag.js';
import { goQuote } from '../../golang/strconv.js';
import { quote } from '../serve/log.js';

export const usage = `Validate the declarative config JSON file(s) in a given directory

Usage:
  kplane catalog validate <directory> [flags]

Flags:
  -h, --help            help for validate
  -o, --output string   Output format for validation results (json|yaml)
`;

/** Loads, converts and validates the catalog in dir; resolves to the first problem, if any. */
export async function validateCatalogDir(dir: string): Promise<Error | undefined> {
  try {
    convertToModel(await loadFS(dir));
    return undefined;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

interface Args {
  directory: string;
  output: string;
}

function parseArgs(argv: string[]): Args {
  const { args: positional, values } = parseFlags(argv, { values: new Set(['output']), bools: new Set(), output: true });
  const output = values['output'] ?? '';
  if (positional.length !== 1) throw new UsageError(`accepts 1 arg(s), received ${positional.length}`);
  return { directory: positional[0]!, output };
}

/** RFC 3339 in local time, to the second, as Go's time.Format(time.RFC3339). */
function localRfc3339(d: Date): string {
  const off = -d.getTimezoneOffset();
  const pad = (n: number): string => String(n).padStart(2, '0');
  const zone = off === 0 ? 'Z' : `${off > 0 ? '+' : '-'}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}${zone}`;
}

/** The line logrus writes for logger.Fatal(err): colored and short on a terminal, key=value otherwise. */
export function fatalLine(message: string, opts: { tty: boolean; now?: Date; startedAt?: number }): string {
  const now = opts.now ?? new Date();
  if (opts.tty) {
    const secs = Math.max(0, Math.floor((now.getTime() - (opts.startedAt ?? now.getTime())) / 1000));
    return `\x1b[31mFATA\x1b[0m[${String(secs).padStart(4, '0')}] ${message.replace(/\n$/, '').padEnd(44)} \n`;
  }
  return `time=${quote(localRfc3339(now))} level=fatal msg=${quote(message)}\n`;
}

function goErrorText(err: NodeJS.ErrnoException, path: string): string {
  // Go's *PathError for os.Stat: "stat <path>: <strerror>"
  const reasons: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    ENOTDIR: 'not a directory',
    ELOOP: 'too many levels of symbolic links',
    ENAMETOOLONG: 'file name too long',
  };
  return `stat ${path}: ${reasons[err.code ?? ''] ?? err.message}`;
}

export async function run(argv: string[]): Promise<number> {
  const startedAt = Date.now();
  const usageFailure = (message: string): number => {
    process.stderr.write(`Error: ${message}\n${usage.slice(usage.indexOf('Usage:'))}\n`);
    return 1;
  };
  let args: Args;
  try {
    args = parseArgs(argv);
  } catch (err) {
    return usageFailure((err as Error).message);
  }
  try {
    const s = await stat(args.directory);
    if (!s.isDirectory()) return usageFailure(`${goQuote(args.directory)} is not a directory`);
  } catch (err) {
    return usageFailure(goErrorText(err as NodeJS.ErrnoException, args.directory));
  }

  const failure = await validateCatalogDir(args.directory);

  if (args.output !== '') {
    const result = failure === undefined ? { passed: true } : { passed: false, error: { message: failure.message } };
    let text: string;
    if (args.output === 'json') text = goJSON(result, { indent: '  ', escapeHTML: true });
    else if (args.output === 'yaml') text = jsonToYAML(result);
    else return usageFailure(`invalid --output value ${goQuote(args.output)}, expected (json|yaml)`);
    process.stdout.write(`${text}\n`);
    return failure === undefined ? 0 : 1;
  }

  if (failure !== undefined) {
    process.stderr.write(fatalLine(failure.message, { tty: process.stderr.isTTY === true, startedAt }));
    return 1;
  }
  return 0;
}
