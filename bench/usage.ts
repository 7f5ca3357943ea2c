// How the repository's command-line scripts (bench/run.ts, bench/compare.ts, bench/plot.ts,
// scripts/soak.ts) answer bad arguments: one line naming what is wrong, then the usage, exit 2 (as
// node's own and most CLIs do); `--help` prints the usage and exits 0.

/** A bad command line: what is wrong, in one line (the flag or value named). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Prints `<program>: <message>` and the usage to stderr and exits 2. */
export function exitWithUsage(program: string, usage: string, message: string): never {
  process.stderr.write(`${program}: ${message}\n${usage}\n`);
  process.exit(2);
}

/**
 * node:util parseArgs's errors (unknown option, missing value, unexpected argument) in one line
 * naming the flag, as a UsageError; anything else unchanged.
 */
export function asUsageError(err: unknown): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS_')) {
    // node's message may run over several lines (a hint on how to pass a negative number).
    return new UsageError((err as Error).message.split('\n')[0]!.replace(/\.$/, ''));
  }
  return err;
}
