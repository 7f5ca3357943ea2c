// What `kplane serve` says about a command line it cannot use: a flag it does not know (with the
// closest one it does), a stray argument (with the `npm start -- ...` form when npm took the flag
// for its own option), and a file a flag names that cannot be read (naming the flag and the path).
import { statSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The message for a parseArgs error (`Unknown option '--x'`, `Unexpected argument 'y'`), given the
 * flags the command knows and the environment: run as `npm start --secure-port 16443`, npm keeps
 * `--secure-port` as its own config (npm_config_secure_port) and passes only `16443` on.
 */
export function argumentError(message: string, flags: readonly string[], env: NodeJS.ProcessEnv = process.env): string {
  const unknown = /^Unknown option '(--?[^']+)'/.exec(message)?.[1];
  if (unknown) {
    const near = closestFlag(unknown.replace(/^-+/, '').split('=')[0] ?? '', flags);
    return `unknown flag: ${unknown}${near ? ` (did you mean --${near}?)` : ''}; kplane serve --help lists the flags`;
  }
  const positional = /^Unexpected argument '([^']*)'/.exec(message)?.[1];
  if (positional !== undefined) {
    const script = env.npm_lifecycle_event;
    const taken = script ? flags.find((f) => env[`npm_config_${f.replace(/-/g, '_')}`] !== undefined) : undefined;
    if (script && taken) {
      const command = script === 'start' ? 'npm start' : `npm run ${script}`;
      return `unexpected argument ${JSON.stringify(positional)}: npm took --${taken} as its own option; through npm, flags go after "--": ${command} -- --${taken} ${positional}`;
    }
    return `unexpected argument ${JSON.stringify(positional)}: kplane serve takes flags only (kplane serve --help lists them)`;
  }
  return `${message}; kplane serve --help lists the flags`;
}

/** The known flag within edit distance 2 of `name`, the closest first. */
export function closestFlag(name: string, flags: readonly string[]): string | undefined {
  let best: { flag: string; d: number } | undefined;
  for (const flag of flags) {
    const d = editDistance(name, flag);
    if (d <= 2 && (!best || d < best.d)) best = { flag, d };
  }
  return best?.flag;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/**
 * The first file named by a flag that is not a readable file, as `--flag=FILE: <why> (<absolute
 * path>)`; undefined when all are. Flags given several times list each value.
 */
export function unreadableFlagFile(flags: readonly (readonly [string, string | readonly string[] | undefined])[]): string | undefined {
  for (const [flag, value] of flags) {
    for (const file of typeof value === 'string' ? [value] : (value ?? [])) {
      const path = resolve(file);
      let why: string | undefined;
      try {
        if (statSync(path).isDirectory()) why = 'is a directory, not a file';
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (e as Error).message;
      }
      if (why) return `--${flag}=${file}: ${why} (${path})`;
    }
  }
  return undefined;
}
