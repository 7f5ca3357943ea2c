// The admission chain (upstream's admission.chainAdmissionHandler): every mutating plugin in the
// order they joined, then, at the store's last step before storage, every validating one. A plugin
// that is both takes part in both phases. Joining is one call: `chain.add(plugin)`.
//
// One exception to join order, kube-apiserver's (AllOrderedPlugins): "webhook, resourcequota, and
// deny plugins must go at the end", in a fixed order, whichever module adds them first. So a
// webhook or policy that refuses a create does so before ResourceQuota charges it.
import type { AdmissionAttributes, AdmissionOperation, AdmissionPlugin, MutationInterface, ValidationInterface } from './interfaces.js';
import { takeReinvocation } from './reinvocation.js';

/** The plugins kube-apiserver runs after every other, in this order. */
export const LAST_PLUGINS: readonly string[] = [
  'MutatingAdmissionPolicy',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** Where `p` goes among `members`: after its own kind (join order), before any plugin that must run after it. */
function insertionIndex(members: readonly AdmissionPlugin[], p: AdmissionPlugin): number {
  // -1 for every plugin that is not one of LAST_PLUGINS: they keep join order, before those.
  const rank = (q: AdmissionPlugin): number => LAST_PLUGINS.indexOf(q.name);
  const r = rank(p);
  let at = members.length;
  while (at > 0 && rank(members[at - 1]!) > r) at--;
  return at;
}

export class AdmissionChain {
  private readonly members: AdmissionPlugin[] = [];
  // The phases apart, so a request walks only the plugins of the phase it is in.
  private readonly mutating: MutationInterface[] = [];
  private readonly validating: ValidationInterface[] = [];

  constructor(plugins: Iterable<AdmissionPlugin> = []) {
    for (const p of plugins) this.add(p);
  }

  /** Adds a plugin after those already in the chain (but before the LAST_PLUGINS that must follow it). */
  add(plugin: AdmissionPlugin): this {
    this.members.splice(insertionIndex(this.members, plugin), 0, plugin);
    this.mutating.length = 0;
    this.validating.length = 0;
    for (const p of this.members) {
      if (p.admit) this.mutating.push(p as MutationInterface);
      if (p.validate) this.validating.push(p as ValidationInterface);
    }
    return this;
  }

  /** The plugins in the order they joined. */
  get plugins(): readonly AdmissionPlugin[] {
    return this.members;
  }

  /** The mutating phase; the first plugin to throw ends it. */
  admit(a: AdmissionAttributes): Promise<void> {
    return this.startAdmit(a) ?? DONE;
  }

  /** The validating phase; the first plugin to throw ends it. */
  validate(a: AdmissionAttributes): Promise<void> {
    return this.startValidate(a) ?? DONE;
  }

  /**
   * The mutating phase for the request path: undefined when every plugin answered at once (most
   * writes: no webhook, policy or quota has work), else a promise of the rest. A plugin's throw is
   * always a rejected promise, never thrown from here, as from `admit`. When a webhook or policy
   * changed the object, the phase runs once more (upstream's reinvoker: every plugin again, and
   * the IfNeeded webhooks and policies due; reinvocation.ts).
   */
  startAdmit(a: AdmissionAttributes): Promise<void> | undefined {
    const first = runPhase(this.mutating, 0, a, admitOf);
    if (first === undefined) return takeReinvocation(a) ? runPhase(this.mutating, 0, a, admitOf) : undefined;
    return first.then(() => (takeReinvocation(a) ? runPhase(this.mutating, 0, a, admitOf) : undefined));
  }

  /** The validating phase for the request path, as `startAdmit`. */
  startValidate(a: AdmissionAttributes): Promise<void> | undefined {
    return runPhase(this.validating, 0, a, validateOf);
  }
}

/**
 * `plugin`, answering at once while `idle(a)` holds: its phases then return undefined without
 * being called, so that a write no configuration concerns costs no promise (the chain passes a
 * plugin that does not wait). For the plugins whose work is all configuration (webhooks,
 * policies), whose phases are async: with nothing configured they would cost a promise per write.
 */
export function unlessIdle(idle: (a: AdmissionAttributes) => boolean, plugin: AdmissionPlugin): AdmissionPlugin {
  return {
    name: plugin.name,
    ...(plugin.handles ? { handles: (op: AdmissionOperation) => plugin.handles!(op) } : {}),
    ...(plugin.admit ? { admit: (a: AdmissionAttributes) => (idle(a) ? undefined : plugin.admit!(a)) } : {}),
    ...(plugin.validate ? { validate: (a: AdmissionAttributes) => (idle(a) ? undefined : plugin.validate!(a)) } : {}),
  };
}

const DONE: Promise<void> = Promise.resolve();

const admitOf = (p: MutationInterface, a: AdmissionAttributes): void | Promise<void> => p.admit(a);
const validateOf = (p: ValidationInterface, a: AdmissionAttributes): void | Promise<void> => p.validate(a);

/**
 * Runs `plugins` from `from` on, one after another. Plugins that answer at once cost no promise
 * and no microtask turn; from the first that answers with a promise, the rest run after it settles.
 */
function runPhase<P extends AdmissionPlugin>(
  plugins: readonly P[],
  from: number,
  a: AdmissionAttributes,
  call: (p: P, a: AdmissionAttributes) => void | Promise<void>,
): Promise<void> | undefined {
  for (let i = from; i < plugins.length; i++) {
    const p = plugins[i]!;
    if (p.handles !== undefined && !p.handles(a.operation)) continue;
    let r: void | Promise<void>;
    try {
      r = call(p, a);
    } catch (e) {
      return Promise.reject(e);
    }
    if (r !== undefined) return r.then(() => runPhase(plugins, i + 1, a, call));
  }
  return undefined;
}
