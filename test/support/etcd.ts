// Starts a throw-away single-member etcd for tests, bound to loopback only.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ETCD_BINARY = fileURLToPath(new URL('../../.tools/bin/etcd', import.meta.url));

export interface RunningEtcd {
  /** http://127.0.0.1:<port> */
  readonly endpoint: string;
  /** Graceful stop; removes the data directory. */
  stop(): Promise<void>;
  /** SIGKILL, immediately (the data directory stays until `stop`). */
  kill(): void;
  /** Starts etcd again on the same data directory and ports (after `kill`); resolves once healthy. */
  restart(): Promise<void>;
}

export interface StartEtcdOptions {
  readonly startTimeoutMs?: number;
  /** The client port to listen on (default: a free one). */
  readonly clientPort?: number;
}

export async function startEtcd(opts: StartEtcdOptions = {}): Promise<RunningEtcd> {
  if (!existsSync(ETCD_BINARY)) throw new Error(`etcd not found at ${ETCD_BINARY}; run: bash scripts/install-tools.sh`);
  const dataDir = await mkdtemp(join(tmpdir(), 'kplane-etcd-'));
  const clientPort = opts.clientPort ?? (await freePort());
  const peerPort = await freePort();
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name=kplane-test',
    `--data-dir=${join(dataDir, 'data')}`,
    `--listen-client-urls=${endpoint}`,
    `--advertise-client-urls=${endpoint}`,
    `--listen-peer-urls=${peerUrl}`,
    `--initial-advertise-peer-urls=${peerUrl}`,
    `--initial-cluster=kplane-test=${peerUrl}`,
    '--initial-cluster-state=new',
    '--logger=zap',
    '--log-level=error',
  ];
  let child!: ChildProcess;
  let exited!: Promise<void>;
  let stderr = '';
  const launch = async (): Promise<void> => {
    child = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    const proc = child;
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr = (stderr + d).slice(-4_000);
    });
    exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const deadline = Date.now() + (opts.startTimeoutMs ?? 20_000);
    for (;;) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`etcd exited during start (${proc.exitCode ?? proc.signalCode}): ${stderr}`);
      if (await isHealthy(endpoint)) return;
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        await exited;
        throw new Error(`etcd at ${endpoint} not healthy in time: ${stderr}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await launch();
  } catch (e) {
    await rm(dataDir, { recursive: true, force: true });
    throw e;
  }

  return {
    endpoint,
    kill() {
      child.kill('SIGKILL');
    },
    async restart() {
      if (!child.killed && child.exitCode === null) throw new Error('etcd is still running; kill it first');
      await exited;
      await launch();
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function isHealthy(endpoint: string): Promise<boolean> {
  try {
    const res = await fetch(`${endpoint}/health`, { signal: AbortSignal.timeout(1_000) });
    const body = (await res.json()) as { health?: string };
    return res.ok && body.health === 'true';
  } catch {
    return false;
  }
}

/** A port the OS considers free right now on 127.0.0.1 (a small race with other processes remains). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr !== null ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}
