// A third-party component with its own features, on kplane's library (KEP-0007):
// - its own gate (`kplane/featuregate`) with its own features and `--feature-gates`;
// - its own class: its Feature objects live in its namespace, `widgets-system`;
// - the reporting gate: `featureReporter` announces its features there and reports this
//   instance's value of each, so `kubectl get features -n widgets-system` shows them;
// - a ClearField task: turning WidgetColor off clears `spec.color` from every stored Widget
//   (the feature flow, which this component runs for its own class);
// - the feature in use: while WidgetColor is on, each Widget's status.paint copies spec.color.
// Run (in the repository, from source):
//   node --conditions=kplane-source --import tsx examples/feature/widget-operator.ts --kubeconfig .kplane/admin.kubeconfig --feature-gates=WidgetColor=true
import { parseArgs } from 'node:util';
import { createHttpsClient, isStatusError, type GVR, type KubeObject } from 'kplane';
import { featureFlow, featureReporter } from 'kplane/controllers';
import { Alpha, Beta, FeatureGate, Version } from 'kplane/featuregate';

const CLASS = 'widgets-system';
const COMPONENT = 'widget-operator';
const VERSION = '0.1.0';
const WIDGETS: GVR = { group: 'example.com', version: 'v1', resource: 'widgets' };
const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };

/** The component's features: its own names, its own versions (0.1 is its first release). */
export const WidgetColor = 'WidgetColor';
export const WidgetTurbo = 'WidgetTurbo';

const { values } = parseArgs({
  options: {
    kubeconfig: { type: 'string', default: process.env.KUBECONFIG },
    'feature-gates': { type: 'string', multiple: true },
    // A stable name per instance (a StatefulSet pod's): a restart replaces its own use.
    identity: { type: 'string', default: `${COMPONENT}-0` },
    'evaluation-period': { type: 'string', default: '60' },
    interval: { type: 'string', default: '5000' },
  },
});
if (!values.kubeconfig) throw new Error('needs --kubeconfig FILE (or KUBECONFIG)');

const gate = new FeatureGate(Version.majorMinor(0, 1));
gate.addVersioned({
  [WidgetColor]: [{ version: Version.majorMinor(0, 1), default: true, preRelease: Beta }],
  [WidgetTurbo]: [{ version: Version.majorMinor(0, 1), default: false, preRelease: Alpha }],
});
for (const v of values['feature-gates'] ?? []) {
  try {
    gate.set(v);
  } catch (e) {
    console.error(`widget-operator: invalid argument ${JSON.stringify(v)} for "--feature-gates" flag: ${(e as Error).message}`);
    process.exit(2);
  }
}
gate.close();

const client = createHttpsClient(values.kubeconfig);
try {
  await client.create(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CLASS } });
} catch (e) {
  if (!isStatusError(e) || e.code !== 409) throw e;
}

const log = (m: string): void => console.error(m);
const reporter = featureReporter(client, gate, { component: COMPONENT, identity: values.identity, version: VERSION, namespace: CLASS, log });
const flow = featureFlow(client, gate, {
  standalone: true,
  leaseName: values.identity,
  version: VERSION,
  namespace: CLASS,
  tasks: {
    [WidgetColor]: {
      disable: [{ name: 'clear-widget-color', type: 'ClearField', params: { resource: 'example.com/v1/widgets', fieldPath: '.spec.color' } }],
    },
  },
  intervalMs: Number(values.interval),
  evaluationPeriodSeconds: Number(values['evaluation-period']),
  log,
});
reporter.start();
flow.start();

// The feature in use: the gate is asked on every pass (one Map lookup), never cached by the caller.
type Widget = KubeObject & { spec?: { color?: string }; status?: { paint?: string } };
const paint = async (): Promise<void> => {
  if (!gate.enabled(WidgetColor)) return;
  for (const w of (await client.list<Widget>(WIDGETS)).items) {
    const color = w.spec?.color;
    if (!color || w.status?.paint === color) continue;
    try {
      await client.updateStatus(WIDGETS, w.metadata!.namespace, { ...w, status: { ...w.status, paint: color } });
    } catch (e) {
      if (!isStatusError(e) || (e.code !== 409 && e.code !== 404)) throw e;
    }
  }
};
const timer = setInterval(() => void paint().catch((e: unknown) => log(`paint: ${String(e)}`)), Number(values.interval));
console.log(`widget-operator ${VERSION} started: ${WidgetColor}=${gate.enabled(WidgetColor)} ${WidgetTurbo}=${gate.enabled(WidgetTurbo)}`);

const stop = (): void => {
  clearInterval(timer);
  void Promise.all([flow.stop(), reporter.stop()])
    .then(() => client.close())
    .then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
