// What a built-in (or user) controller gets, and how it is handed to a control plane or to
// `kplane controller-manager`: a factory from this context to a Runnable. The same factory runs
// in process over the loopback client and out of process over the HTTPS client.
import type { Registry } from 'prom-client';
import type { KubeClient } from '../client/types.js';
import type { Manager, Runnable } from './runtime/manager.js';

export interface ControllerContext {
  /** The only way to the API: loopback inside `kplane serve`, HTTPS in `kplane controller-manager`. */
  readonly client: KubeClient;
  /** Shared informers (ask for them in the factory, before the manager starts). */
  readonly manager: Manager;
  /** Metrics go here (the API server's registry in process, the controller-manager's otherwise). */
  readonly metrics?: Registry;
  readonly log: (msg: string) => void;
  /**
   * The CA bundle clients verify the API server with (kube-controller-manager's --root-ca-file):
   * published as `kube-root-ca.crt` and put in token Secrets. Absent: those controllers idle.
   */
  readonly rootCA?: string;
  /**
   * Signs the claims of a legacy ServiceAccount token (kube-controller-manager's
   * --service-account-private-key-file). Absent: token Secrets are not filled.
   */
  readonly serviceAccountTokenSigner?: (claims: object) => Promise<string>;
}

export interface ControllerFactory {
  (ctx: ControllerContext): Runnable;
  readonly controllerName: string;
  /**
   * The API server must add the `orphan`/`foregroundDeletion` finalizers on DELETE for this
   * controller to clear (only the garbage collector sets it).
   */
  readonly garbageCollection?: boolean;
  /**
   * The ServiceAccount (in kube-system) this controller acts as with service-account credentials,
   * upstream's name (bound to `system:controller:<name>` by the bootstrap policy). Absent: it runs
   * with the manager's own client, as upstream's token controller does.
   */
  readonly serviceAccountName?: string;
}

/**
 * Names a factory function as a ControllerFactory. `name` may carry the factory's other
 * properties: `{ name, serviceAccountName }`.
 */
export function controllerFactory(
  name: string | { readonly name: string; readonly serviceAccountName?: string },
  create: (ctx: ControllerContext) => Runnable,
  extra: { garbageCollection?: boolean; serviceAccountName?: string } = {},
): ControllerFactory {
  const { name: controllerName, ...more } = typeof name === 'string' ? { name } : name;
  return Object.assign((ctx: ControllerContext) => create(ctx), { controllerName, ...more, ...extra });
}
