// examples/feature/ runs as its README says (issue 24): the widget-operator, a third-party
// component on kplane's library, announces its own features in its own class (widgets-system),
// reports its uses, paints Widgets while WidgetColor is on, and when restarted with it off its
// feature flow clears spec.color from every Widget (ClearField) and ends Off.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import type { KubeObject } from '../../src/apimachinery/types.js';
import type { FeatureObject } from '../../src/registry/features/features/types.js';
import { eventually } from '../support/eventually.js';
import { kubectlSession } from '../support/kubectl.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { repoRoot, tools } from '../support/tools.js';

const FEATURES = { group: 'features.kplane.io', version: 'v1alpha1', resource: 'features' };
const WIDGETS = { group: 'example.com', version: 'v1', resource: 'widgets' };
type Feature = KubeObject & FeatureObject;
type Widget = KubeObject & { spec?: { color?: string; size?: number }; status?: { paint?: string } };

let s: TestServer;
let dir: string;
let child: ChildProcess | undefined;
let childLog = '';

const startOperator = (gates: string): ChildProcess => {
  const c = spawn(
    process.execPath,
    [
      '--conditions=kplane-source',
      '--import',
      'tsx',
      join(repoRoot, 'examples/feature/widget-operator.ts'),
      '--kubeconfig',
      s.kubeconfig,
      `--feature-gates=${gates}`,
      '--evaluation-period=1',
      '--interval=200',
    ],
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  c.stdout.setEncoding('utf8').on('data', (d: string) => (childLog += d));
  c.stderr.setEncoding('utf8').on('data', (d: string) => (childLog += d));
  return c;
};
const stopOperator = async (): Promise<void> => {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((ok) => child!.once('exit', ok));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5000).unref())]);
  child.kill('SIGKILL');
};

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'kplane-example-feature-'));
  s = await startTestServer();
});
after(async () => {
  await stopOperator();
  await s?.stop();
  await rm(dir, { recursive: true, force: true });
});

it('examples/feature: own class, reported uses, the feature in use, ClearField when turned off', { timeout: 180_000 }, async () => {
  const k = kubectlSession(tools.kubectl, s.kubeconfig, dir);
  await k.ok(['apply', '-f', join(repoRoot, 'examples/feature/widget-crd.yaml')]);
  await k.ok(['wait', '--for=condition=Established', 'crd/widgets.example.com', '--timeout=30s']);
  const c = s.cp.loopbackClient();
  for (let i = 0; i < 30; i++)
    await c.create(WIDGETS, 'default', {
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: `w${i}` },
      spec: { size: i, color: 'red' },
    });

  child = startOperator('WidgetColor=true');
  const feature = (name: string) => c.get<Feature>(FEATURES, 'widgets-system', name);
  await eventually(60_000, 'WidgetColor announced On with the operator use', async () => {
    const f = await feature('WidgetColor').catch(() => undefined);
    return f?.status?.state === 'On' && f.status.uses?.some((u) => u.component === 'widget-operator' && u.value === 'Enabled') ? f : undefined;
  }).catch((e: Error) => {
    throw new Error(`${e.message}\n${childLog}`);
  });
  // In use: status.paint copied from spec.color.
  await eventually(30_000, 'widgets painted', async () => {
    const l = await c.list<Widget>(WIDGETS, 'default');
    return l.items.every((w) => w.status?.paint === 'red') ? true : undefined;
  });
  // WidgetTurbo, announced Disabled by the operator, settles through TurningOff to Off.
  await eventually(30_000, 'WidgetTurbo Off', async () => ((await feature('WidgetTurbo').catch(() => undefined))?.status?.state === 'Off' ? true : undefined));
  const table = await k.ok(['get', 'features', '-n', 'widgets-system']);
  assert.match(table, /WidgetColor\s+On\s+Enabled\s+CommandLine\s+Beta\s+True/);
  assert.match(table, /WidgetTurbo\s+Off\s+Disabled\s+Default\s+Alpha\s+True/);

  await stopOperator();
  child = startOperator('WidgetColor=false');
  const off = await eventually(
    90_000,
    'WidgetColor Off',
    async () => {
      const f = await feature('WidgetColor');
      return f.status?.state === 'Off' ? f : undefined;
    },
    200,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n${childLog}`);
  });
  assert.equal(off.status?.source, 'CommandLine');
  const widgets = await c.list<Widget>(WIDGETS, 'default');
  assert.equal(widgets.items.length, 30);
  assert.deepEqual(
    widgets.items.filter((w) => w.spec?.color !== undefined).map((w) => w.metadata?.name),
    [],
  );
  assert.ok(widgets.items.every((w) => typeof w.spec?.size === 'number'));
  const events = await k.ok(['get', 'events', '-n', 'widgets-system', '--field-selector', 'involvedObject.name=WidgetColor']);
  assert.match(events, /FeatureTaskSucceeded/);
  assert.match(events, /clear-widget-color \(ClearField\): cleared spec.color on 30 of 30 object\(s\)/);
});
