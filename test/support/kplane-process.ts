// `kplane <subcommand>` as child processes (src/cli/main.ts under tsx), for the tests of the
// out-of-process layout (`kplane serve --controllers=false` plus `kplane controller-manager`).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './tools.js';

export interface KplaneProcess {
  readonly child: ChildProcess;
  /** The text that matched `ready`. */
  readonly firstLine: string;
  readonly exited: Promise<void>;
  /** Everything the process wrote to stderr so far. */
  log(): string;
}

export interface KplaneProcesses {
  /** Every child started, in order. */
  readonly children: ChildProcess[];
  /** Starts `kplane <args>` and waits (30 s at most) until its stdout matches `ready`. */
  readonly start: (args: readonly string[], ready: RegExp) => Promise<KplaneProcess>;
  /** SIGKILL to every child still running. */
  killAll(): void;
}

/**
 * `startTimeoutMs` (default 30 s): how long `start` waits for `ready`; on a loaded 2-core machine
 * several servers compiling their source under tsx may need more (the HA suite gives 120 s).
 */
export function kplaneProcesses(opts: { startTimeoutMs?: number } = {}): KplaneProcesses {
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const children: ChildProcess[] = [];
  return {
    children,
    async start(args, ready) {
      const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'src/cli/main.ts'), ...args], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      // Not left running when the test or script that started it exits (bench/run.ts, the soak).
      const onExit = (): void => void child.kill('SIGKILL');
      process.once('exit', onExit);
      const exited = new Promise<void>((ok) =>
        child.once('exit', () => {
          process.off('exit', onExit);
          ok();
        }),
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const firstLine = await new Promise<string>((resolve, reject) => {
        let out = '';
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`kplane ${args[0]} did not start in ${startTimeoutMs / 1000} s: ${stderr}`));
        }, startTimeoutMs);
        child.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          const m = ready.exec(out);
          if (m) {
            clearTimeout(timer);
            resolve(m[0]);
          }
        });
        child.once('exit', (code, sig) => {
          clearTimeout(timer);
          reject(new Error(`kplane ${args[0]} exited (${code ?? sig}) before it was ready: ${stderr}`));
        });
      });
      return { child, firstLine, exited, log: () => stderr };
    },
    killAll() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    },
  };
}
