// The namespace controller (kube's pkg/controller/namespace): reconciles terminating namespaces
// with the NamespacedResourcesDeleter until their content is gone and `kubernetes` is finalized.
import { Controller } from '../runtime/controller.js';
import { keyOf } from '../runtime/informer.js';
import { controllerFactory, type ControllerFactory } from '../types.js';
import { NAMESPACES, NamespacedResourcesDeleter, ResourcesRemainingError, type Namespace } from './deleter.js';

export { NamespacedResourcesDeleter, ResourcesRemainingError, NAMESPACES, KUBERNETES_FINALIZER } from './deleter.js';
export type { Namespace, NamespaceCondition, DeleterOptions } from './deleter.js';

export interface NamespaceDeletionOptions {
  /** Concurrent namespaces (upstream --concurrent-namespace-syncs, default 10). */
  readonly workers?: number;
  /** Assumed time for objects held by finalizers to go (upstream 15 s); the retry comes at half of it. */
  readonly finalizerEstimateSeconds?: number;
  /** Every namespace is looked at again this often (upstream 5 min). */
  readonly resyncPeriodMs?: number;
}

export function namespaceDeletion(opts: NamespaceDeletionOptions = {}): ControllerFactory {
  return controllerFactory({ name: 'namespace', serviceAccountName: 'namespace-controller' }, (ctx) => {
    const informer = ctx.manager.informer<Namespace>(NAMESPACES, { resyncPeriodMs: opts.resyncPeriodMs ?? 5 * 60_000 });
    const deleter = new NamespacedResourcesDeleter({
      client: ctx.client,
      ...(opts.finalizerEstimateSeconds !== undefined ? { finalizerEstimateSeconds: opts.finalizerEstimateSeconds } : {}),
      log: ctx.log,
    });
    const controller = new Controller({
      name: 'namespace',
      workers: opts.workers ?? 10,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: async (key, signal) => {
        // Only terminating namespaces have work; the cache answers that without a request.
        const cached = informer.store.get(key);
        if (cached && !cached.metadata?.deletionTimestamp) return;
        try {
          await deleter.delete(key, signal);
        } catch (e) {
          if (e instanceof ResourcesRemainingError) {
            // Content with finalizers goes at its own pace: look again in half the estimate.
            return { requeueAfterMs: Math.max(1, Math.floor(e.estimateSeconds / 2)) * 1000 };
          }
          throw e;
        }
        return;
      },
    });
    controller.watches(informer, (o) => [keyOf(o)]);
    return controller;
  });
}
