// What one validating webhook call costs kplane's main thread, alone: the ValidatingAdmissionWebhook
// plugin and its client (src/admission/webhook) calling the example webhook (its own process) at a
// fixed concurrency, with nothing else in this process. Prints the CPU per call of this process
// and of the webhook, per round and their medians. The `webhook` scenario's c=64 ratio depends on
// this figure (issue 23): with a create costing the server ~250–300 µs, a call must cost about
// 0.67 of that for 60 %. Alternate two trees' runs to compare a change (rounds move ±10 %).
// `--inline 0` puts every call on the transport thread (the server does so while 4 or more calls are
// under way); the CPU is then split into this process's main thread and the rest (the thread).
//   node --conditions=kplane-source --import tsx bench/webhook-call-probe.ts [--concurrency 64] [--calls 20000] [--rounds 10] [--inline N]
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { setInlineCalls, transportWorker } from '../src/admission/webhook/client.js';
import { compileConfigurations, releaseWebhooks, validatingWebhookPlugin } from '../src/admission/webhook/dispatcher.js';
import type { WebhookConfiguration } from '../src/admission/webhook/types.js';
import type { AdmissionAttributes } from '../src/admission/interfaces.js';
import { configMap, procCpuMs } from './common.js';
import { benchDir } from './context.js';

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '64' },
    calls: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '10' },
    inline: { type: 'string' },
  },
});
if (values.inline !== undefined) setInlineCalls(Number(values.inline));
const concurrency = Number(values.concurrency);
const calls = Number(values.calls);
const rounds = Number(values.rounds);

const dir = await mkdtemp(join(tmpdir(), 'kplane-webhook-probe-'));
const hook = spawn(process.execPath, ['--import', 'tsx', join(benchDir, '..', 'examples/webhook/server.ts'), '--port', '0', '--out', dir], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
let out = '';
hook.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
const deadline = Date.now() + 30_000;
while (!out.includes('webhooks serving at')) {
  if (Date.now() > deadline || hook.exitCode !== null) throw new Error(`the example webhook did not start: ${out}`);
  await new Promise((r) => setTimeout(r, 50));
}
const docs = (await readFile(join(dir, 'webhooks.yaml'), 'utf8')).split(/^---$/m).map((d) => parse(d) as WebhookConfiguration & { kind?: string });
const validating = docs.find((d) => d.kind === 'ValidatingWebhookConfiguration')!;
// Every ConfigMap, as the bench's webhook scenario configures it.
for (const w of validating.webhooks ?? []) delete w.namespaceSelector;
const hooks = compileConfigurations([validating]);
const plugin = validatingWebhookPlugin({ source: { webhooks: () => hooks }, namespaceLabels: async () => ({}), observe: () => undefined });

/** A create's attributes as the server hands them to admission: the bench's 1 KiB ConfigMap with the metadata a create sets. */
function attributes(i: number): AdmissionAttributes {
  const cm = configMap(`cm-${i}`, 'probe');
  const now = new Date().toISOString();
  const metadata = {
    name: `cm-${i}`,
    namespace: 'probe',
    uid: randomUUID(),
    creationTimestamp: now,
    managedFields: [
      {
        manager: 'probe',
        operation: 'Update' as const,
        apiVersion: 'v1',
        time: now,
        fieldsType: 'FieldsV1' as const,
        fieldsV1: { 'f:data': { '.': {}, 'f:payload': {}, 'f:seq': {} } },
      },
    ],
  };
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'configmaps' },
    subresource: '',
    kind: { group: '', version: 'v1', kind: 'ConfigMap' },
    namespace: 'probe',
    name: `cm-${i}`,
    object: { ...cm, metadata },
    dryRun: false,
    userInfo: { name: 'admin', groups: ['system:masters', 'system:authenticated'] },
  };
}

async function round(n: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await plugin.validate!(attributes(next++));
    }),
  );
}

/** This process's main thread's CPU in ms (its task has the process's id). */
const mainThreadCpuMs = (): number => procCpuMs(process.pid, process.pid);

if (values.inline === '0') await transportWorker();
await round(Math.min(calls, 4000));
const mine: number[] = [];
const main: number[] = [];
const theirs: number[] = [];
for (let r = 0; r < rounds; r++) {
  const c0 = process.cpuUsage();
  const m0 = mainThreadCpuMs();
  const w0 = procCpuMs(hook.pid!);
  await round(calls);
  const c = process.cpuUsage(c0);
  mine.push((c.user + c.system) / calls);
  main.push(((mainThreadCpuMs() - m0) * 1000) / calls);
  theirs.push(((procCpuMs(hook.pid!) - w0) * 1000) / calls);
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(
  `c=${concurrency}, ${rounds} rounds of ${calls} calls: kplane (plugin + client) CPU per call median ${median(mine).toFixed(1)} µs [${mine.map((x) => x.toFixed(0)).join(' ')}], of it the main thread ${median(main).toFixed(1)} µs; the example webhook ${median(theirs).toFixed(1)} µs`,
);
releaseWebhooks(hooks);
hook.kill('SIGTERM');
await rm(dir, { recursive: true, force: true });
