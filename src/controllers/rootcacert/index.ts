// The root CA publisher (kube-controller-manager's root-ca-cert-publisher,
// pkg/controller/certificates/rootcacertpublisher): a ConfigMap `kube-root-ca.crt` in every
// namespace whose `ca.crt` is the CA clients verify the API server with, put back as it was when
// edited or deleted. Terminating namespaces are left alone.
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GVR } from '../../client/types.js';
import { asLogger } from '../../golang/klog.js';
import { Controller } from '../runtime/controller.js';
import { keyOf } from '../runtime/informer.js';
import { controllerFactory, type ControllerFactory } from '../types.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const CONFIGMAPS: GVR = { group: '', version: 'v1', resource: 'configmaps' };

const ignorable = (e: unknown, ...codes: number[]): boolean => e instanceof StatusError && codes.includes(e.code);

export interface RootCACertPublisherOptions {
  /** The CA bundle (PEM); default: the context's rootCA. */
  readonly rootCA?: string;
  readonly workers?: number;
}

export function rootCACertPublisher(opts: RootCACertPublisherOptions = {}): ControllerFactory {
  return controllerFactory({ name: 'root-ca-cert-publisher', serviceAccountName: 'root-ca-cert-publisher' }, (ctx) => {
    const rootCA = opts.rootCA ?? ctx.rootCA;
    const log = asLogger(ctx.log);
    const namespaces = ctx.manager.informer(NAMESPACES);
    const configMaps = ctx.manager.informer(CONFIGMAPS, { fieldSelector: `metadata.name=${ROOT_CA_CONFIGMAP}` });
    const controller = new Controller({
      name: 'root-ca-cert-publisher',
      workers: opts.workers ?? 1,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: async (ns) => {
        if (rootCA === undefined) return;
        const namespace = namespaces.store.get(ns);
        if (!namespace || namespace.metadata?.deletionTimestamp) return;
        const data = { 'ca.crt': rootCA };
        const cm = configMaps.store.get(`${ns}/${ROOT_CA_CONFIGMAP}`);
        try {
          if (!cm) {
            await ctx.client.create(CONFIGMAPS, ns, {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: ROOT_CA_CONFIGMAP, annotations: { [DESCRIPTION_ANNOTATION]: DESCRIPTION } },
              data,
            });
            return;
          }
          const current = (cm as { data?: Record<string, string> }).data ?? {};
          const sameData = Object.keys(current).length === 1 && current['ca.crt'] === rootCA;
          if (sameData && cm.metadata?.annotations?.[DESCRIPTION_ANNOTATION] === DESCRIPTION) return;
          const next = structuredClone(cm) as KubeObject & { data?: Record<string, string> };
          next.data = data;
          next.metadata = { ...next.metadata, annotations: { ...next.metadata?.annotations, [DESCRIPTION_ANNOTATION]: DESCRIPTION } };
          await ctx.client.update(CONFIGMAPS, ns, next);
        } catch (e) {
          // Exists already (the cache is behind), or the namespace went or is terminating.
          if (ignorable(e, 409, 404) || (ignorable(e, 403) && /being terminated/.test((e as Error).message))) {
            log.v(4).info('root CA ConfigMap not written', 'namespace', ns, 'err', (e as Error).message);
            if (ignorable(e, 409)) return { requeueAfterMs: 1000 };
            return;
          }
          throw e;
        }
        return;
      },
    });
    controller.watches(namespaces, (o) => [keyOf(o)]);
    controller.watches(configMaps, (o) => [o.metadata?.namespace ?? '']);
    return controller;
  });
}
