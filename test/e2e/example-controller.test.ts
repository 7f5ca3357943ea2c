// examples/controller/ runs as the README says: the Greeting CRD applied with kubectl, the example
// controller (public library API only) run against the server as its own process; a Greeting gets
// status.message and an owned ConfigMap, and deleting it lets the garbage collector remove the
// ConfigMap.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import { createHttpsClient } from '../../src/client/https.js';
import type { GVR, KubeClient } from '../../src/client/types.js';
import { garbageCollector, namespaceDeletion } from '../../src/controllers/index.js';
import { CM } from '../support/gvrs.js';
import { eventually as pollUntil } from '../support/eventually.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { ensureTools, repoRoot, run, tools } from '../support/tools.js';

ensureTools();

const GREETINGS: GVR = { group: 'example.com', version: 'v1', resource: 'greetings' };

let server: TestServer;
let client: KubeClient;
let controller: ChildProcess | undefined;
let controllerLog = '';

before(async () => {
  // Discovery every second: the garbage collector picks up the new Greeting resource quickly.
  server = await startTestServer({ storage: 'sqlite', controllers: [namespaceDeletion(), garbageCollector({ discoveryPeriodMs: 1000 })] });
  client = createHttpsClient(server.kubeconfig);
});
after(async () => {
  if (controller && controller.exitCode === null && controller.signalCode === null) {
    const exited = new Promise((ok) => controller!.once('exit', ok));
    controller.kill('SIGTERM');
    await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5000).unref())]);
    controller.kill('SIGKILL');
  }
  await client?.close();
  await server?.stop();
});

/** test/support/eventually.ts, polling every 100 ms and showing the controller's log on failure. */
const eventually = <T>(ms: number, what: string, probe: () => Promise<T | undefined>): Promise<T> =>
  pollUntil(ms, what, probe, { intervalMs: 100, context: () => `controller log:\n${controllerLog}` });

const kubectl = (...args: string[]) => run(tools.kubectl, ['--kubeconfig', server.kubeconfig, ...args], { timeoutMs: 30_000 });

it('the Greeting example controller writes status and an owned ConfigMap; GC removes it with the Greeting', { timeout: 80_000 }, async () => {
  const crd = await kubectl('apply', '-f', 'examples/controller/greeting-crd.yaml');
  assert.equal(crd.code, 0, crd.stderr);
  await kubectl('wait', '--for=condition=Established', '--timeout=20s', 'crd/greetings.example.com');

  controller = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'examples/controller/greeting-controller.ts'), '--kubeconfig', server.kubeconfig], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  controller.stdout!.setEncoding('utf8').on('data', (d: string) => (controllerLog += d));
  controller.stderr!.setEncoding('utf8').on('data', (d: string) => (controllerLog += d));

  const cr = await kubectl('apply', '-f', 'examples/controller/greeting.yaml');
  assert.equal(cr.code, 0, cr.stderr);
  const greeting = await client.get<KubeObject>(GREETINGS, 'default', 'hello');

  const message = await eventually(30_000, 'status.message', async () => {
    const r = await kubectl('get', 'greeting', 'hello', '-o', 'jsonpath={.status.message}');
    return r.code === 0 && r.stdout ? r.stdout : undefined;
  });
  assert.equal(message, 'Hello, world!');
  const cm = await eventually(10_000, 'the owned ConfigMap', () => client.get<KubeObject & { data?: Record<string, string> }>(CM, 'default', 'hello-greeting'));
  assert.equal(cm.data?.message, 'Hello, world!');
  assert.deepEqual(
    cm.metadata?.ownerReferences?.map((r) => [r.kind, r.name, r.uid, r.controller]),
    [['Greeting', 'hello', greeting.metadata?.uid, true]],
  );

  // Drift is repaired: the ConfigMap deleted by hand comes back.
  await client.delete(CM, 'default', 'hello-greeting');
  await eventually(15_000, 'the ConfigMap re-created', () => client.get(CM, 'default', 'hello-greeting'));

  const del = await kubectl('delete', 'greeting', 'hello', '--timeout=20s');
  assert.equal(del.code, 0, del.stderr);
  await eventually(20_000, 'the garbage collector removes the owned ConfigMap', async () => {
    try {
      await client.get(CM, 'default', 'hello-greeting');
      return undefined;
    } catch (e) {
      return (e as { code?: number }).code === 404 ? true : undefined;
    }
  });
});
