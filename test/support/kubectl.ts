// Runs one kubectl binary against one server from a private HOME (its own discovery cache), with
// the helpers the e2e files share: `k` (any exit code), `ok` (asserts exit 0) and `file`.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { adminCredentials, RawClient } from './https.js';
import { startTestServer, type TestServer } from './server.js';
import { run, type RunResult } from './tools.js';

export interface KubectlSession {
  readonly env: NodeJS.ProcessEnv;
  k(args: readonly string[], extraEnv?: NodeJS.ProcessEnv): Promise<RunResult>;
  ok(args: readonly string[], extraEnv?: NodeJS.ProcessEnv): Promise<string>;
  /** Writes `text` to `<dir>/<name>` and returns the path. */
  file(name: string, text: string): Promise<string>;
}

export function kubectlSession(bin: string, kubeconfig: string, dir: string, timeoutMs = 30_000): KubectlSession {
  const env: NodeJS.ProcessEnv = { KUBECONFIG: kubeconfig, HOME: dir, KUBECACHEDIR: join(dir, 'cache') };
  const k = (args: readonly string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<RunResult> => run(bin, args, { env: { ...env, ...extraEnv }, timeoutMs });
  return {
    env,
    k,
    async ok(args, extraEnv = {}) {
      const r = await k(args, extraEnv);
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
      return r.stdout;
    },
    async file(name, text) {
      const p = join(dir, name);
      await writeFile(p, text);
      return p;
    },
  };
}

export interface KubectlServer {
  readonly server: TestServer;
  /** Raw HTTPS as the admin, for what kubectl does not expose. */
  readonly raw: RawClient;
  readonly kc: KubectlSession;
  /** The session's temp dir (HOME, and where `kc.file` writes). */
  readonly dir: string;
}

/**
 * Registers before/after hooks in the current describe: a server (memory storage), a RawClient as
 * admin and a kubectl session from a temp dir named `<tmpPrefix>…`; all stopped/removed after.
 * The fields are valid inside tests (after `before` ran).
 */
export function useKubectlServer(bin: string, tmpPrefix: string): KubectlServer {
  let server: TestServer | undefined;
  let raw: RawClient | undefined;
  let kc: KubectlSession | undefined;
  let dir = '';
  before(async () => {
    server = await startTestServer({ storage: 'memory' });
    raw = new RawClient(server.url, adminCredentials(server.dataDir));
    dir = await mkdtemp(join(tmpdir(), tmpPrefix));
    kc = kubectlSession(bin, server.kubeconfig, dir);
  });
  after(async () => {
    raw?.close();
    await server?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
  return {
    get server() {
      return server!;
    },
    get raw() {
      return raw!;
    },
    get kc() {
      return kc!;
    },
    get dir() {
      return dir;
    },
  };
}
