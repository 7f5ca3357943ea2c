// A process left running (kubectl get -w, kubectl delete --wait) whose output is read as it comes.
import { spawn } from 'node:child_process';

export class Background {
  stdout = '';
  stderr = '';
  code: number | null | undefined;
  readonly exited: Promise<number | null>;
  private readonly child;
  constructor(bin: string, args: readonly string[], env: NodeJS.ProcessEnv) {
    this.child = spawn(bin, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (d: Buffer) => (this.stdout += d.toString()));
    this.child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.child.on('close', (c) => resolve((this.code = c))));
  }
  async waitFor(pred: (b: this) => boolean, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  async stop(): Promise<void> {
    if (this.code === undefined) this.child.kill('SIGTERM');
    await this.exited;
  }
}
