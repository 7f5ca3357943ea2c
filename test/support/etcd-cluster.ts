// A throw-away 3-member etcd cluster for tests, every member on loopback ports with its own data
// directory: kill -9, SIGSTOP/SIGCONT and restart a member, and ask which member leads.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ETCD_BINARY, freePort } from './etcd.js';

export interface EtcdMember {
  readonly name: string;
  /** http://127.0.0.1:<client port> */
  readonly endpoint: string;
  /** The running process (undefined while killed). */
  readonly child: ChildProcess | undefined;
  /** kill -9; resolves once the process is gone. The data directory stays. */
  kill(): Promise<void>;
  /** SIGSTOP: the process hangs, its sockets stay open. */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
  /** Starts the member again on its data directory and ports; resolves once it answers /health. */
  restart(): Promise<void>;
  /** Whether the process runs and is not stopped. */
  readonly running: boolean;
}

export interface EtcdCluster {
  readonly members: readonly EtcdMember[];
  /** Every member's client URL, comma-separated (for --etcd-servers). */
  readonly endpoints: string[];
  /** The member the reachable members agree leads (asked through the gRPC gateway), or undefined. */
  leader(): Promise<EtcdMember | undefined>;
  /** Waits (at most `timeoutMs`) until the running members agree on a leader; returns it. */
  waitForLeader(timeoutMs?: number): Promise<EtcdMember>;
  /** SIGTERM (SIGKILL after 5 s) to every member; removes the data directories. */
  stop(): Promise<void>;
}

export interface StartEtcdClusterOptions {
  readonly size?: number;
  readonly startTimeoutMs?: number;
}

interface MemberStatus {
  readonly memberId: string;
  readonly leaderId: string;
}

/** Starts `size` (default 3) members that form one cluster; resolves once they agree on a leader. */
export async function startEtcdCluster(opts: StartEtcdClusterOptions = {}): Promise<EtcdCluster> {
  if (!existsSync(ETCD_BINARY)) throw new Error(`etcd not found at ${ETCD_BINARY}; run: bash scripts/install-tools.sh`);
  const size = opts.size ?? 3;
  const startTimeoutMs = opts.startTimeoutMs ?? 30_000;
  const root = await mkdtemp(join(tmpdir(), 'kplane-etcd-cluster-'));
  const specs: { name: string; clientUrl: string; peerUrl: string }[] = [];
  for (let i = 0; i < size; i++) {
    specs.push({ name: `m${i}`, clientUrl: `http://127.0.0.1:${await freePort()}`, peerUrl: `http://127.0.0.1:${await freePort()}` });
  }
  const initialCluster = specs.map((s) => `${s.name}=${s.peerUrl}`).join(',');
  const token = `kplane-test-${process.pid}-${Date.now()}`;

  const members = specs.map((spec): EtcdMember & { launch(): void; exited: Promise<void>; log(): string } => {
    let child: ChildProcess | undefined;
    let exited: Promise<void> = Promise.resolve();
    let stopped = false;
    let stderr = '';
    const args = [
      `--name=${spec.name}`,
      `--data-dir=${join(root, spec.name)}`,
      `--listen-client-urls=${spec.clientUrl}`,
      `--advertise-client-urls=${spec.clientUrl}`,
      `--listen-peer-urls=${spec.peerUrl}`,
      `--initial-advertise-peer-urls=${spec.peerUrl}`,
      `--initial-cluster=${initialCluster}`,
      `--initial-cluster-token=${token}`,
      '--initial-cluster-state=new',
      '--logger=zap',
      '--log-level=error',
    ];
    return {
      name: spec.name,
      endpoint: spec.clientUrl,
      get child() {
        return child;
      },
      get running() {
        return child !== undefined && child.exitCode === null && child.signalCode === null && !stopped;
      },
      get exited() {
        return exited;
      },
      log: () => stderr,
      launch() {
        const proc = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
        child = proc;
        // Not left running when the process that started it exits.
        const onExit = (): void => void proc.kill('SIGKILL');
        process.once('exit', onExit);
        proc.once('exit', () => process.off('exit', onExit));
        stopped = false;
        proc.stderr?.setEncoding('utf8').on('data', (d: string) => {
          stderr = (stderr + d).slice(-4_000);
        });
        exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      },
      async kill() {
        if (!child) return;
        if (stopped) child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
        child = undefined;
      },
      pause() {
        child?.kill('SIGSTOP');
        stopped = true;
      },
      resume() {
        child?.kill('SIGCONT');
        stopped = false;
      },
      async restart() {
        if (child) throw new Error(`etcd member ${spec.name} is still running; kill it first`);
        this.launch();
        const proc = child!;
        const deadline = Date.now() + startTimeoutMs;
        while (!(await isHealthy(spec.clientUrl))) {
          if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`etcd member ${spec.name} exited on restart: ${stderr}`);
          if (Date.now() > deadline) throw new Error(`etcd member ${spec.name} not healthy ${startTimeoutMs} ms after restart: ${stderr}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      },
    };
  });

  const status = async (endpoint: string): Promise<MemberStatus | undefined> => {
    try {
      const res = await fetch(`${endpoint}/v3/maintenance/status`, { method: 'POST', body: '{}', signal: AbortSignal.timeout(1_000) });
      const body = (await res.json()) as { header?: { member_id?: string }; leader?: string };
      return body.header?.member_id && body.leader && body.leader !== '0' ? { memberId: body.header.member_id, leaderId: body.leader } : undefined;
    } catch {
      return undefined;
    }
  };

  const cluster: EtcdCluster = {
    members,
    endpoints: members.map((m) => m.endpoint),
    async leader() {
      const running = members.filter((m) => m.running);
      const statuses = await Promise.all(running.map((m) => status(m.endpoint)));
      const known = statuses.filter((s): s is MemberStatus => s !== undefined);
      // A majority of the members must answer and name the same leader, itself one of them.
      if (known.length * 2 <= members.length) return undefined;
      const leaderId = known[0]!.leaderId;
      if (!known.every((s) => s.leaderId === leaderId)) return undefined;
      const i = statuses.findIndex((s) => s?.memberId === leaderId);
      return i < 0 ? undefined : running[i];
    },
    async waitForLeader(timeoutMs = startTimeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const l = await cluster.leader();
        if (l) return l;
        if (Date.now() > deadline)
          throw new Error(`etcd cluster: no leader within ${timeoutMs} ms\n${members.map((m) => `${m.name}: ${m.log().slice(-500)}`).join('\n')}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async stop() {
      await Promise.all(
        members.map(async (m) => {
          const c = m.child;
          if (!c || c.exitCode !== null || c.signalCode !== null) return;
          c.kill('SIGCONT');
          c.kill('SIGTERM');
          const timer = setTimeout(() => c.kill('SIGKILL'), 5_000);
          await m.exited;
          clearTimeout(timer);
        }),
      );
      await rm(root, { recursive: true, force: true });
    },
  };

  for (const m of members) m.launch();
  try {
    const deadline = Date.now() + startTimeoutMs;
    for (const m of members) {
      while (!(await isHealthy(m.endpoint))) {
        const c = m.child!;
        if (c.exitCode !== null || c.signalCode !== null) throw new Error(`etcd member ${m.name} exited during start: ${m.log()}`);
        if (Date.now() > deadline) throw new Error(`etcd member ${m.name} not healthy within ${startTimeoutMs} ms: ${m.log()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    await cluster.waitForLeader();
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
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
