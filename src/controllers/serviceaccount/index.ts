// The ServiceAccount controllers of kube-controller-manager:
// - serviceaccount (pkg/controller/serviceaccount/serviceaccounts_controller.go): a ServiceAccount
//   `default` in every namespace that is not terminating, made again when deleted;
// - serviceaccount-token (tokens_controller.go): Secrets of type `kubernetes.io/service-account-token`
//   get `token` (a legacy JWT, signed with the service account key), `ca.crt` and `namespace`;
//   such Secrets whose ServiceAccount is gone (or another of the same name) are deleted, and so are
//   a ServiceAccount's token Secrets when it is deleted.
import { StatusError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { legacyClaims } from '../../auth/serviceaccount/token.js';
import type { GVR } from '../../client/types.js';
import { asLogger } from '../../golang/klog.js';
import { Controller } from '../runtime/controller.js';
import { keyOf, splitKey } from '../runtime/informer.js';
import { controllerFactory, type ControllerFactory } from '../types.js';

const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const SERVICE_ACCOUNTS: GVR = { group: '', version: 'v1', resource: 'serviceaccounts' };
const SECRETS: GVR = { group: '', version: 'v1', resource: 'secrets' };

export const SERVICE_ACCOUNT_TOKEN_TYPE = 'kubernetes.io/service-account-token';
export const SERVICE_ACCOUNT_NAME_ANNOTATION = 'kubernetes.io/service-account.name';
export const SERVICE_ACCOUNT_UID_ANNOTATION = 'kubernetes.io/service-account.uid';

const is = (e: unknown, ...codes: number[]): boolean => e instanceof StatusError && codes.includes(e.code);
/** The 403 of a namespace being deleted (apierrors.HasStatusCause(err, NamespaceTerminatingCause)), not of authorization. */
const namespaceTerminating = (e: unknown): boolean =>
  e instanceof StatusError && e.code === 403 && (e.status.details?.causes ?? []).some((c) => c.reason === 'NamespaceTerminating');

export interface ServiceAccountControllerOptions {
  /** ServiceAccountsToEnsure (default `default`). */
  readonly names?: readonly string[];
  readonly workers?: number;
}

export function serviceAccountController(opts: ServiceAccountControllerOptions = {}): ControllerFactory {
  const names = opts.names ?? ['default'];
  return controllerFactory({ name: 'serviceaccount', serviceAccountName: 'service-account-controller' }, (ctx) => {
    const namespaces = ctx.manager.informer(NAMESPACES);
    const serviceAccounts = ctx.manager.informer(SERVICE_ACCOUNTS);
    const controller = new Controller({
      name: 'serviceaccount',
      workers: opts.workers ?? 1,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: async (ns) => {
        const namespace = namespaces.store.get(ns);
        if (!namespace || namespace.metadata?.deletionTimestamp) return;
        for (const name of names) {
          if (serviceAccounts.store.get(`${ns}/${name}`)) continue;
          try {
            await ctx.client.create(SERVICE_ACCOUNTS, ns, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name } });
          } catch (e) {
            // Exists (the cache is behind), or the namespace is terminating or gone. Any other 403
            // (this controller's role lacks the permission) is an error, logged and retried.
            if (!is(e, 409, 404) && !namespaceTerminating(e)) throw e;
          }
        }
      },
    });
    controller.watches(namespaces, (o) => [keyOf(o)]);
    controller.watches(serviceAccounts, (o) => (names.includes(o.metadata?.name ?? '') ? [o.metadata?.namespace ?? ''] : []));
    return controller;
  });
}

export interface ServiceAccountTokenControllerOptions {
  readonly workers?: number;
  /** The CA put in `ca.crt`; default: the context's rootCA. */
  readonly rootCA?: string;
  /** Signs legacy tokens; default: the context's serviceAccountTokenSigner. */
  readonly signer?: (claims: object) => Promise<string>;
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

export function serviceAccountTokenController(opts: ServiceAccountTokenControllerOptions = {}): ControllerFactory {
  return controllerFactory('serviceaccount-token', (ctx) => {
    const rootCA = opts.rootCA ?? ctx.rootCA;
    const signer = opts.signer ?? ctx.serviceAccountTokenSigner;
    const log = asLogger(ctx.log);
    const serviceAccounts = ctx.manager.informer(SERVICE_ACCOUNTS);
    const secrets = ctx.manager.informer(SECRETS, { fieldSelector: `type=${SERVICE_ACCOUNT_TOKEN_TYPE}` });
    const annotations = (o: KubeObject): Record<string, string> => o.metadata?.annotations ?? {};

    const deleteSecret = async (secret: KubeObject): Promise<void> => {
      try {
        await ctx.client.delete(SECRETS, secret.metadata?.namespace, secret.metadata?.name ?? '', {
          preconditions: { uid: secret.metadata?.uid ?? '' },
        });
      } catch (e) {
        if (!is(e, 404, 409)) throw e;
      }
    };

    const syncSecret = async (key: string): Promise<void> => {
      const secret = secrets.store.get(key);
      if (!secret || secret.metadata?.deletionTimestamp) return;
      const { namespace = '' } = splitKey(key);
      const saName = annotations(secret)[SERVICE_ACCOUNT_NAME_ANNOTATION] ?? '';
      const saUid = annotations(secret)[SERVICE_ACCOUNT_UID_ANNOTATION] ?? '';
      let sa: KubeObject | undefined = serviceAccounts.store.get(`${namespace}/${saName}`);
      if (!sa) {
        // The cache may be behind a ServiceAccount made just before its Secret: ask the server.
        try {
          sa = await ctx.client.get(SERVICE_ACCOUNTS, namespace, saName);
        } catch (e) {
          if (!is(e, 404)) throw e;
        }
      }
      if (!sa || (saUid !== '' && sa.metadata?.uid !== saUid)) {
        log.v(2).info('Deleting a token Secret whose ServiceAccount is gone', 'secret', key, 'serviceAccount', saName);
        await deleteSecret(secret);
        return;
      }
      if (!signer) return;
      const data = { ...((secret as { data?: Record<string, string> }).data ?? {}) };
      const want: Record<string, string> = { namespace: b64(namespace) };
      if (rootCA !== undefined) want['ca.crt'] = b64(rootCA);
      const needsToken = !data['token'];
      const missing = Object.entries(want).some(([k, v]) => data[k] !== v);
      const needsUid = saUid === '';
      if (!needsToken && !missing && !needsUid) return;
      Object.assign(data, want);
      if (needsToken) data['token'] = b64(await signer(legacyClaims(sa, secret.metadata?.name ?? '')));
      const next = structuredClone(secret) as KubeObject & { data?: Record<string, string> };
      next.data = data;
      next.metadata = { ...next.metadata, annotations: { ...next.metadata?.annotations, [SERVICE_ACCOUNT_UID_ANNOTATION]: sa.metadata?.uid ?? '' } };
      try {
        await ctx.client.update(SECRETS, namespace, next);
      } catch (e) {
        // Changed meanwhile: its event brings it back. Gone: nothing to fill.
        if (!is(e, 409, 404)) throw e;
      }
    };

    /** A deleted ServiceAccount takes its token Secrets with it. */
    const syncServiceAccount = async (key: string, uid: string): Promise<void> => {
      const { namespace = '', name } = splitKey(key);
      const live = serviceAccounts.store.get(key);
      if (live && live.metadata?.uid === uid) return;
      for (const secret of secrets.store.list()) {
        if (secret.metadata?.namespace !== namespace) continue;
        const a = annotations(secret);
        if (a[SERVICE_ACCOUNT_NAME_ANNOTATION] !== name) continue;
        if (a[SERVICE_ACCOUNT_UID_ANNOTATION] && a[SERVICE_ACCOUNT_UID_ANNOTATION] !== uid) continue;
        await deleteSecret(secret);
      }
    };

    const controller = new Controller({
      name: 'serviceaccount-token',
      workers: opts.workers ?? 1,
      log: ctx.log,
      ...(ctx.metrics ? { registry: ctx.metrics } : {}),
      reconciler: async (key) => {
        // Keys: `secret:<ns>/<name>` and `sa:<ns>/<name>:<uid>` (a ServiceAccount deleted).
        if (key.startsWith('secret:')) return syncSecret(key.slice('secret:'.length));
        const rest = key.slice('sa:'.length);
        const at = rest.lastIndexOf(':');
        return syncServiceAccount(rest.slice(0, at), rest.slice(at + 1));
      },
    });
    controller.watches(secrets, (o) => [`secret:${keyOf(o)}`]);
    serviceAccounts.addEventHandler({
      onDelete: (o) => controller.enqueue(`sa:${keyOf(o)}:${o.metadata?.uid ?? ''}`),
      // A new ServiceAccount may be what a waiting token Secret names.
      onAdd: (o) => {
        for (const s of secrets.store.list()) {
          if (s.metadata?.namespace === o.metadata?.namespace && annotations(s)[SERVICE_ACCOUNT_NAME_ANNOTATION] === o.metadata?.name) {
            controller.enqueue(`secret:${keyOf(s)}`);
          }
        }
      },
    });
    return controller;
  });
}
