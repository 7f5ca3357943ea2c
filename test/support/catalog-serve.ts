// `kplane catalog serve DIR` as a child process, for the OLM tests (CatalogSource, install flow).
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './tools.js';

const kplane = join(repoRoot, 'bin/kplane.js');

/** The held-in DBaaS catalog (examples/dbaas-catalog/catalog). */
export const DBAAS_CATALOG = join(repoRoot, 'examples/dbaas-catalog/catalog');

export interface ServedCatalog {
  proc: ChildProcess;
  port: number;
  /** Everything it logged so far (stderr). */
  stderr: () => string;
  /** The exit code, once stderr is drained. */
  exited: Promise<number | null>;
}

/** `kplane catalog serve DIR --port PORT [flags]` (port 0: a free one), once it logs that it serves. */
export async function serveCatalog(dir = DBAAS_CATALOG, wantPort = 0, ...flags: string[]): Promise<ServedCatalog> {
  const proc = spawn(process.execPath, [kplane, 'catalog', 'serve', dir, '--port', String(wantPort), ...flags], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const exited = new Promise<number | null>((resolve) => proc.on('close', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`catalog serve did not start:\n${err}`)), 60_000);
    proc.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /msg="serving registry".* port=(\d+)/.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    void exited.then((code) => reject(new Error(`catalog serve exited with ${code}:\n${err}`)));
  });
  return { proc, port, stderr: () => err, exited };
}

/** SIGTERM, then waits for the exit; nothing when it is not running. */
export async function stopCatalog(s: ServedCatalog | undefined): Promise<void> {
  if (!s || s.proc.exitCode !== null) return;
  s.proc.kill('SIGTERM');
  await s.exited;
}
