// The cluster under test, from a kubeconfig: unreadable or unreachable is an error naming the file,
// the server's URL and why, before any test runs.
import { type ClientConfig, createHttpsClient, isNetworkError, isStatusError, type KubeClient, loadKubeconfig } from '../client/index.js';
import { CcmTestConfigError } from './capability-file.js';

export interface Cluster {
  readonly client: KubeClient;
  readonly server: string;
}

/** Reads the kubeconfig and asks the server once (a list of one Node) within `timeoutMs`. */
export async function connectCluster(kubeconfig: string, opts: { timeoutMs?: number; context?: string } = {}): Promise<Cluster> {
  let config: ClientConfig;
  try {
    config = loadKubeconfig(kubeconfig, opts.context);
  } catch (e) {
    throw new CcmTestConfigError(`kubeconfig ${kubeconfig}: ${(e as Error).message}`);
  }
  const client = createHttpsClient(config);
  const timeoutMs = opts.timeoutMs ?? 15_000;
  try {
    await client.list({ group: '', version: 'v1', resource: 'nodes' }, undefined, { limit: 1, signal: AbortSignal.timeout(timeoutMs) });
  } catch (e) {
    // Not awaited: the error is what matters, and a close that never settles must not hold it.
    void client.close().catch(() => {});
    const why = isStatusError(e)
      ? `the server answered ${e.status.code ?? ''} ${e.status.reason ?? ''}: ${e.status.message ?? ''}`.replace(/\s+/g, ' ')
      : (e as Error).message;
    const what = isNetworkError(e) || !isStatusError(e) ? 'cannot reach the cluster' : 'cannot list Nodes';
    throw new CcmTestConfigError(`${what} at ${config.server} (kubeconfig ${kubeconfig}): ${why}`);
  }
  return { client, server: config.server };
}
