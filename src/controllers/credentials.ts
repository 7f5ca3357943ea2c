// Controllers under their own identities, as kube-controller-manager's
// --use-service-account-credentials: each controller that names a ServiceAccount
// (ControllerFactory.serviceAccountName) acts as system:serviceaccount:kube-system:<name>, bound to
// system:controller:<name> by the bootstrap policy. Out of process the tokens come from
// TokenRequest, minted with the manager's own credentials and renewed before they expire, as
// upstream's DynamicControllerClientBuilder (k8s.io/controller-manager/pkg/clientbuilder) does.
import { isStatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import { createHttpsClient, type ClientConfig, type HttpsClientOptions } from '../client/https.js';
import { RestClient } from '../client/rest.js';
import type { GVR, KubeClient } from '../client/types.js';
import type { ControllerFactory } from './types.js';

/** Where the controllers' ServiceAccounts live (upstream's metav1.NamespaceSystem). */
export const CONTROLLER_SERVICE_ACCOUNT_NAMESPACE = 'kube-system';

const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const SERVICE_ACCOUNTS: GVR = { group: '', version: 'v1', resource: 'serviceaccounts' };

/** clientbuilder's defaultExpirationSeconds and defaultLeewayPercent. */
const TOKEN_EXPIRATION_SECONDS = 3600;
const TOKEN_LEEWAY_PERCENT = 20;

/** The user a controller's ServiceAccount token authenticates as (serviceaccount.UserInfo). */
export function controllerServiceAccountUser(name: string): { name: string; groups: string[] } {
  const ns = CONTROLLER_SERVICE_ACCOUNT_NAMESPACE;
  return { name: `system:serviceaccount:${ns}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`] };
}

/** The ServiceAccounts the `controllers` act as, each once. */
export function controllerServiceAccountNames(controllers: readonly ControllerFactory[]): string[] {
  return [...new Set(controllers.flatMap((c) => (c.serviceAccountName ? [c.serviceAccountName] : [])))];
}

/** Gets or creates kube-system (when missing) and each ServiceAccount, as clientbuilder's getOrCreateServiceAccount. */
export async function ensureControllerServiceAccounts(client: KubeClient, names: readonly string[]): Promise<void> {
  const ns = CONTROLLER_SERVICE_ACCOUNT_NAMESPACE;
  const createIgnoringExists = async (gvr: GVR, namespace: string | undefined, obj: KubeObject): Promise<void> => {
    try {
      await client.create(gvr, namespace, obj);
    } catch (e) {
      if (!(isStatusError(e) && e.reason === 'AlreadyExists')) throw e;
    }
  };
  for (const name of names) {
    try {
      await client.get(SERVICE_ACCOUNTS, ns, name);
      continue;
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) throw e;
    }
    try {
      await client.get(NAMESPACES, undefined, ns);
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) throw e;
      await createIgnoringExists(NAMESPACES, undefined, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    }
    await createIgnoringExists(SERVICE_ACCOUNTS, ns, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace: ns } });
  }
}

export interface ServiceAccountClientsOptions {
  /** The manager's own client (its kubeconfig's credentials): creates the ServiceAccounts and asks for their tokens. */
  readonly root: KubeClient;
  /** The server and CA of that kubeconfig; its credentials are not used by the controllers' clients. */
  readonly config: ClientConfig;
  readonly controllers: readonly ControllerFactory[];
  readonly clientOptions?: HttpsClientOptions;
  readonly log?: (msg: string) => void;
  /** Default 3600 (upstream's); the token is renewed when less than 20 % of its lifetime is left. */
  readonly expirationSeconds?: number;
}

export interface ServiceAccountClients {
  /** For RunControllersOptions.clientFor. */
  clientFor(controller: ControllerFactory): KubeClient | undefined;
  close(): Promise<void>;
}

interface TokenRequestStatus {
  readonly status?: { readonly token?: string; readonly expirationTimestamp?: string };
}

/**
 * One HTTPS client per controller that names a ServiceAccount, each sending a bearer token of that
 * ServiceAccount (and no client certificate: upstream builds it from an anonymous copy of the
 * config). Resolves once every ServiceAccount exists and has its first token.
 */
export async function serviceAccountClients(opts: ServiceAccountClientsOptions): Promise<ServiceAccountClients> {
  if (!(opts.root instanceof RestClient)) throw new TypeError('serviceAccountClients: the root client must be an HTTPS client');
  const root = opts.root;
  const log = opts.log ?? (() => {});
  const expirationSeconds = opts.expirationSeconds ?? TOKEN_EXPIRATION_SECONDS;
  const names = controllerServiceAccountNames(opts.controllers);
  await ensureControllerServiceAccounts(root, names);
  const { certPem: _cert, keyPem: _key, token: _token, ...anonymous } = opts.config;
  const tokens = new Map<string, string>();
  const timers = new Set<NodeJS.Timeout>();
  const clients = new Map<string, KubeClient>();
  let closed = false;

  const mint = async (name: string): Promise<void> => {
    const path = `/api/v1/namespaces/${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}/serviceaccounts/${encodeURIComponent(name)}/token`;
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds } };
    const tr = await root.request<TokenRequestStatus>('POST', path, Buffer.from(JSON.stringify(body)));
    const token = tr.status?.token;
    if (!token) throw new Error(`TokenRequest for ${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}/${name} returned no token`);
    tokens.set(name, token);
    const expires = Date.parse(tr.status?.expirationTimestamp ?? '');
    const lifetimeMs = Number.isFinite(expires) ? expires - Date.now() : expirationSeconds * 1000;
    schedule(name, Math.max(1000, lifetimeMs * (1 - TOKEN_LEEWAY_PERCENT / 100)));
  };
  const schedule = (name: string, afterMs: number): void => {
    if (closed) return;
    const t = setTimeout(() => {
      timers.delete(t);
      mint(name).catch((e: unknown) => {
        // The old token stays in use until it expires; try again soon.
        log(
          `controller credentials: renewing the token of ${CONTROLLER_SERVICE_ACCOUNT_NAMESPACE}/${name} failed: ${e instanceof Error ? e.message : String(e)}`,
        );
        schedule(name, 10_000);
      });
    }, afterMs);
    t.unref();
    timers.add(t);
  };

  for (const name of names) {
    await mint(name);
    const tokenSource = (): string | undefined => tokens.get(name);
    clients.set(name, createHttpsClient({ ...anonymous, tokenSource }, opts.clientOptions));
  }
  return {
    clientFor: (c) => (c.serviceAccountName ? clients.get(c.serviceAccountName) : undefined),
    async close() {
      closed = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await Promise.all([...clients.values()].map((c) => c.close()));
    },
  };
}
