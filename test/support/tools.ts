// Real components the end-to-end tests drive, installed into .tools/ by scripts/install-tools.sh.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const toolsBin = join(repoRoot, '.tools', 'bin');

export const tools = {
  kubectl120: join(toolsBin, 'kubectl-1.20'),
  kubectl: join(toolsBin, 'kubectl'),
  helm: join(toolsBin, 'helm'),
  etcd: join(toolsBin, 'etcd'),
  /** /usr/bin/python3 with Debian's python3-kubernetes unpacked under .tools/root (a wrapper sets PYTHONPATH). */
  python: join(toolsBin, 'python3'),
  /** Debian's docker-registry (distribution 2.8); see test/support/registry.ts. */
  registry: join(toolsBin, 'docker-registry'),
  /** Debian's skopeo and umoci, to cross-check the images kplane builds and pushes. */
  skopeo: join(toolsBin, 'skopeo'),
  umoci: join(toolsBin, 'umoci'),
  /** Debian's htpasswd (apache2-utils), for bcrypt htpasswd files. */
  htpasswd: join(toolsBin, 'htpasswd'),
};

let ensured = false;
/** Installs the tools once per process if any is missing (the script itself is idempotent). */
export function ensureTools(): void {
  if (ensured) return;
  const missing = [tools.kubectl120, tools.kubectl, tools.helm, tools.etcd, tools.python, tools.registry, tools.skopeo, tools.umoci, tools.htpasswd].some(
    (p) => !existsSync(p),
  );
  if (missing) execFileSync('bash', [join(repoRoot, 'scripts', 'install-tools.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
  ensured = true;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with a deadline; never throws for a non-zero exit (tests assert on `code`). */
export function run(
  cmd: string,
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: { ...process.env, ...opts.env }, cwd: opts.cwd ?? repoRoot, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} timed out after ${opts.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    if (opts.input !== undefined) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}
