// The processes of a local environment (`kplane ccm-test env up`): `kplane serve`, the
// cloud-controller-manager and node-sim, each detached with DIR/<part>.pid and DIR/<part>.log, and
// DIR/env.json recording each one's command line. `env up|down` (src/cli/ccm-test-env.ts) starts and
// stops them; the loopback driver's `upgrade` restarts one with other flags (drivers/env-upgrade.ts).
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The processes, in start order; `down` stops them in reverse. */
export const ENV_PARTS = ['serve', 'cloud-controller-manager', 'node-sim'] as const;
export type EnvPart = (typeof ENV_PARTS)[number];

const READY: Record<EnvPart, RegExp> = {
  serve: /kplane is serving on (https:\/\/\S+)/,
  'cloud-controller-manager': /kplane cloud-controller-manager started: .*/,
  'node-sim': /kplane node-sim started: .*/,
};

/** What `env up` records in DIR/env.json: each part's arguments after `kplane <part>`. */
export interface EnvRecord {
  readonly args: Readonly<Record<EnvPart, readonly string[]>>;
}

const ENV_FILE = 'env.json';

/** How to start this kplane again: the TypeScript source under tsx, or the compiled CLI. */
function kplaneCommand(): string[] {
  const self = import.meta.url;
  if (self.endsWith('.ts')) return ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../cli/main.ts', self))];
  return [fileURLToPath(new URL('../cli/main.js', self))];
}

export const pidFile = (dir: string, part: EnvPart): string => join(dir, `${part}.pid`);
export const logFile = (dir: string, part: EnvPart): string => join(dir, `${part}.log`);

/** Whether `pid` is alive and still a kplane `part` (a reused pid is not ours to signal). */
export function isOurs(pid: number, part: EnvPart): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return cmdline.includes(part);
  } catch {
    // No /proc (not Linux): the pid is alive; trust the pid file.
    return true;
  }
}

export function readPid(dir: string, part: EnvPart): number | undefined {
  try {
    const n = Number(readFileSync(pidFile(dir, part), 'utf8').trim());
    return Number.isInteger(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Starts `kplane <part> <args>` detached, its output in DIR/<part>.log, and waits for its ready
 * line. `append` keeps what the log holds (a restart) and looks for the line only after it.
 */
export async function startPart(
  dir: string,
  part: EnvPart,
  args: readonly string[],
  timeoutMs: number,
  opts: { append?: boolean } = {},
): Promise<{ pid: number; match: RegExpExecArray }> {
  const log = logFile(dir, part);
  let from = 0;
  if (opts.append) {
    try {
      from = statSync(log).size;
    } catch {
      from = 0;
    }
  }
  const fd = openSync(log, opts.append ? 'a' : 'w');
  const child = spawn(process.execPath, [...kplaneCommand(), part, ...args], { detached: true, stdio: ['ignore', fd, fd], cwd: dir });
  closeSync(fd);
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${part} could not be started`);
  let exited: string | undefined;
  child.once('exit', (code, sig) => (exited = `exited (${code ?? sig})`));
  child.unref();
  await writeFile(pidFile(dir, part), `${pid}\n`);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text = (await readFile(log, 'utf8')).slice(from);
    const match = READY[part].exec(text);
    if (match) return { pid, match };
    if (exited || Date.now() > until)
      throw new Error(`${part} ${exited ?? `did not start within ${timeoutMs / 1000} s`}; the end of ${log}:\n${text.slice(-2000)}`);
    await sleep(100);
  }
}

/** Stops one part: SIGTERM, then SIGKILL after `graceMs`. Says what happened. */
export async function stopPart(dir: string, part: EnvPart, graceMs = 15_000): Promise<string> {
  const pid = readPid(dir, part);
  if (pid === undefined) return `${part}: no pid file`;
  await rm(pidFile(dir, part), { force: true });
  if (!isOurs(pid, part)) return `${part} (pid ${pid}) was not running`;
  process.kill(pid, 'SIGTERM');
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    if (!isOurs(pid, part)) return `stopped ${part} (pid ${pid})`;
    await sleep(100);
  }
  process.kill(pid, 'SIGKILL');
  // Gone once the kernel reaps it; wait so that a restart finds its ports free.
  while (isOurs(pid, part)) await sleep(50);
  return `killed ${part} (pid ${pid}): it did not stop within ${graceMs / 1000} s of SIGTERM`;
}

export async function writeEnvRecord(dir: string, record: EnvRecord): Promise<void> {
  await writeFile(join(dir, ENV_FILE), `${JSON.stringify(record, null, 2)}\n`);
}

/** DIR/env.json, checked; the error names the file and what is wrong. */
export async function readEnvRecord(dir: string): Promise<EnvRecord> {
  const file = join(dir, ENV_FILE);
  let v: unknown;
  try {
    v = JSON.parse(await readFile(file, 'utf8'));
  } catch (e) {
    throw new Error(`${file}: ${(e as Error).message} (written by kplane ccm-test env up)`, { cause: e });
  }
  const args = (v as { args?: unknown } | null)?.args as Record<string, unknown> | undefined;
  for (const part of ENV_PARTS) {
    const a = args?.[part];
    if (!Array.isArray(a) || !a.every((x) => typeof x === 'string')) throw new Error(`${file}: args.${part} is not a list of strings`);
  }
  return v as EnvRecord;
}

/**
 * Restarts `part` with `args` (the same data directory and kubeconfig: what the arguments name):
 * stops it, starts it again with its log appended, and waits for its ready line.
 */
export async function restartPart(dir: string, part: EnvPart, args: readonly string[], timeoutMs: number): Promise<{ pid: number; match: RegExpExecArray }> {
  await stopPart(dir, part);
  return startPart(dir, part, args, timeoutMs, { append: true });
}
