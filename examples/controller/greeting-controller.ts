// A controller for the Greeting custom resource (greeting-crd.yaml), written against kplane's
// public library API. For every Greeting it writes `status.message` and a ConfigMap holding the
// message, owned by the Greeting (ownerReferences), so deleting the Greeting lets the garbage
// collector remove the ConfigMap.
// Run (in the repository, from source): node --conditions=kplane-source --import tsx examples/controller/greeting-controller.ts --kubeconfig .kplane/admin.kubeconfig
import { parseArgs } from 'node:util';
import { Manager, createHttpsClient, isStatusError, splitKey, type GVR, type KubeObject } from 'kplane';

interface Greeting extends KubeObject {
  spec: { name: string };
  status?: { message?: string };
}

const GREETINGS: GVR = { group: 'example.com', version: 'v1', resource: 'greetings' };
const CONFIGMAPS: GVR = { group: '', version: 'v1', resource: 'configmaps' };

const { values } = parseArgs({ options: { kubeconfig: { type: 'string', default: process.env.KUBECONFIG } } });
if (!values.kubeconfig) throw new Error('needs --kubeconfig FILE (or KUBECONFIG)');
const client = createHttpsClient(values.kubeconfig);
const manager = new Manager({ client, log: (m) => console.error(m) });
const greetings = manager.informer<Greeting>(GREETINGS);
const configMaps = manager.informer(CONFIGMAPS, { labelSelector: 'example.com/greeting' });

manager
  .controller({
    name: 'greeting',
    reconciler: async (key) => {
      const g = greetings.store.get(key);
      if (!g || g.metadata?.deletionTimestamp) return; // gone: the garbage collector does the rest
      const { namespace, name } = splitKey(key);
      const message = `Hello, ${g.spec.name}!`;
      const configMap: KubeObject & { data: Record<string, string> } = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: `${name}-greeting`,
          labels: { 'example.com/greeting': name },
          ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Greeting', name, uid: g.metadata!.uid!, controller: true, blockOwnerDeletion: true }],
        },
        data: { message },
      };
      try {
        await client.create(CONFIGMAPS, namespace, configMap);
      } catch (e) {
        if (!isStatusError(e) || e.code !== 409) throw e; // errors are retried with backoff
        await client.patch(CONFIGMAPS, namespace, configMap.metadata!.name!, 'merge', {
          metadata: { ownerReferences: configMap.metadata!.ownerReferences },
          data: configMap.data,
        });
      }
      if (g.status?.message !== message) {
        await client.patch(GREETINGS, namespace, name, 'merge', { status: { message } }, { subresource: 'status' });
      }
    },
  })
  .for(greetings)
  .owns(configMaps, 'Greeting', 'example.com/v1');

const stop = new AbortController();
process.on('SIGINT', () => stop.abort());
process.on('SIGTERM', () => stop.abort());
console.log('greeting controller started');
await manager.start(stop.signal);
await client.close();
