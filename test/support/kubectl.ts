// Runs one kubectl binary against one server from a private HOME (its own discovery cache), with
// the helpers the e2e files share: `k` (any exit code), `ok` (asserts exit 0) and `file`.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { AuthorizationMode } from '../../src/controlplane/controlplane.js';
import { adminCredentials, RawClient } from './https.js';
import { quietFeatureGates, startTestServer, type TestServer } from './server.js';
import type { FeatureGate } from '../../src/featuregate/index.js';
import { run, tools, type RunResult } from './tools.js';

/** The two kubectl versions the e2e tests run (oldest and newest supported), with the flag to show managedFields. */
export const KUBECTLS = [
  { name: '1.20', bin: tools.kubectl120, showManagedFields: [] as string[] },
  { name: '1.33', bin: tools.kubectl, showManagedFields: ['--show-managed-fields'] },
] as const;

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

/**
 * Writes `<dir>/<user>.kubeconfig`: the test server (trusting its CA) as `user` with a bearer
 * `token` (a `tokens` entry of the server), and returns its path.
 */
export async function writeTokenKubeconfig(dir: string, server: Pick<TestServer, 'url' | 'dataDir'>, user: string, token: string): Promise<string> {
  const path = join(dir, `${user}.kubeconfig`);
  await writeFile(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: kplane',
      `  cluster: {server: "${server.url}", certificate-authority: "${join(server.dataDir, 'pki', 'ca.crt')}"}`,
      'users:',
      `- name: ${user}`,
      `  user: {token: ${token}}`,
      'contexts:',
      `- name: ${user}`,
      `  context: {cluster: kplane, user: ${user}}`,
      `current-context: ${user}`,
      '',
    ].join('\n'),
  );
  return path;
}

export interface KubectlServer extends Pick<KubectlSession, 'k' | 'ok' | 'file'> {
  readonly server: TestServer;
  /** Raw HTTPS as the admin, for what kubectl does not expose. */
  readonly raw: RawClient;
  readonly kc: KubectlSession;
  /** The session's temp dir (HOME, and where `kc.file` writes). */
  readonly dir: string;
}

/**
 * Registers before/after hooks in the current describe: a server (memory storage unless told), a
 * RawClient as admin and a kubectl session from a temp dir named `<tmpPrefix>…`; all stopped and
 * removed after. The fields are valid inside tests (after `before` ran); k/ok/file may be
 * destructured at once.
 */
export function useKubectlServer(
  bin: string,
  tmpPrefix: string,
  opts: { storage?: 'memory' | 'sqlite'; featureGates?: Record<string, boolean>; authorizationModes?: readonly AuthorizationMode[] } = {},
): KubectlServer {
  let server: TestServer | undefined;
  let raw: RawClient | undefined;
  let kc: KubectlSession | undefined;
  let dir = '';
  before(async () => {
    let featureGates: FeatureGate | undefined;
    if (opts.featureGates) {
      featureGates = quietFeatureGates();
      featureGates.setFromMap(opts.featureGates);
    }
    server = await startTestServer({
      storage: opts.storage ?? 'memory',
      ...(featureGates ? { featureGates } : {}),
      ...(opts.authorizationModes ? { authorizationModes: opts.authorizationModes } : {}),
    });
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
    k: (args, extraEnv) => kc!.k(args, extraEnv),
    ok: (args, extraEnv) => kc!.ok(args, extraEnv),
    file: (name, text) => kc!.file(name, text),
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
