// Runs one kubectl binary against one server from a private HOME (its own discovery cache), with
// the helpers the e2e files share: `k` (any exit code), `ok` (asserts exit 0) and `file`.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
