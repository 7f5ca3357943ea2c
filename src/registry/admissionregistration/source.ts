// Admission's configurations as the admission plugins read them: a list, then a watch of the
// store (its watch cache), kept compiled in memory, so a request never reads storage for them
// (upstream's configuration manager over a shared informer). Relists after a broken watch.
// WatchedObjects (../watched-objects.ts) is the list+watch loop; the webhook configurations and
// the policies with their bindings are compiled from it.
import { compileConfigurations, releaseWebhooks, type CompiledWebhook, type WebhookSource } from '../../admission/webhook/dispatcher.js';
import type { ServiceResolver } from '../../admission/webhook/service-resolver.js';
import type { WebhookConfiguration } from '../../admission/webhook/types.js';
import { compilePolicies, type CompiledPolicy, type PolicySource } from '../../admission/policy/validating.js';
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from '../../admission/policy/types.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { GenericStore } from '../store.js';
import { WatchedObjects } from '../watched-objects.js';

export class WebhookConfigurationCache implements WebhookSource {
  private compiled: CompiledWebhook[] = [];
  private readonly watched: WatchedObjects<WebhookConfiguration>;

  constructor(
    store: () => GenericStore | undefined,
    log?: (msg: string) => void,
    private readonly resolver?: ServiceResolver,
  ) {
    this.watched = new WatchedObjects(store, 'webhook configurations', () => this.rebuild(), log);
  }

  webhooks(): readonly CompiledWebhook[] {
    return this.compiled;
  }

  start(): Promise<void> {
    return this.watched.start();
  }

  async close(): Promise<void> {
    await this.watched.close();
    releaseWebhooks(this.compiled);
    this.compiled = [];
  }

  private rebuild(): void {
    const old = this.compiled;
    this.compiled = compileConfigurations([...this.watched.items.values()], old, this.resolver);
    releaseWebhooks(old, this.compiled);
  }
}

/**
 * Admission policies with their bindings (ValidatingAdmissionPolicy, MutatingAdmissionPolicy), kept
 * compiled by `compile` and compiled again whenever a policy or a binding changes.
 */
export class PolicyCache<P extends KubeObject, B extends KubeObject, C> {
  private compiled: C[] = [];
  private readonly policiesWatch: WatchedObjects<P>;
  private readonly bindingsWatch: WatchedObjects<B>;

  constructor(
    what: string,
    policies: () => GenericStore | undefined,
    bindings: () => GenericStore | undefined,
    compile: (policies: P[], bindings: B[]) => C[],
    log?: (msg: string) => void,
  ) {
    const rebuild = (): void => {
      this.compiled = compile([...this.policiesWatch.items.values()], [...this.bindingsWatch.items.values()]);
    };
    this.policiesWatch = new WatchedObjects(policies, `${what} policies`, rebuild, log);
    this.bindingsWatch = new WatchedObjects(bindings, `${what} policy bindings`, rebuild, log);
  }

  policies(): readonly C[] {
    return this.compiled;
  }

  async start(): Promise<void> {
    await Promise.all([this.policiesWatch.start(), this.bindingsWatch.start()]);
  }

  async close(): Promise<void> {
    await Promise.all([this.policiesWatch.close(), this.bindingsWatch.close()]);
    this.compiled = [];
  }
}

/** ValidatingAdmissionPolicies with their bindings, as the validating policy plugin reads them. */
export function validatingPolicyCache(
  policies: () => GenericStore | undefined,
  bindings: () => GenericStore | undefined,
  log?: (msg: string) => void,
): PolicyCache<ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, CompiledPolicy> & PolicySource {
  return new PolicyCache('validating admission', policies, bindings, compilePolicies, log);
}
