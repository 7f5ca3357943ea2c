// The admission chain (upstream's admission.chainAdmissionHandler): every mutating plugin in the
// order they joined, then, at the store's last step before storage, every validating one. A plugin
// that is both takes part in both phases. Joining is one call: `chain.add(plugin)`.
import type { AdmissionAttributes, AdmissionPlugin, MutationInterface, ValidationInterface } from './interfaces.js';

export class AdmissionChain {
  private readonly members: AdmissionPlugin[] = [];
  // The phases apart, so a request walks only the plugins of the phase it is in.
  private readonly mutating: MutationInterface[] = [];
  private readonly validating: ValidationInterface[] = [];

  constructor(plugins: Iterable<AdmissionPlugin> = []) {
    for (const p of plugins) this.add(p);
  }

  /** Adds a plugin after those already in the chain. */
  add(plugin: AdmissionPlugin): this {
    this.members.push(plugin);
    if (plugin.admit) this.mutating.push(plugin as MutationInterface);
    if (plugin.validate) this.validating.push(plugin as ValidationInterface);
    return this;
  }

  /** The plugins in the order they joined. */
  get plugins(): readonly AdmissionPlugin[] {
    return this.members;
  }

  /** The mutating phase; the first plugin to throw ends it. */
  async admit(a: AdmissionAttributes): Promise<void> {
    for (const p of this.mutating) if (p.handles === undefined || p.handles(a.operation)) await p.admit(a);
  }

  /** The validating phase; the first plugin to throw ends it. */
  async validate(a: AdmissionAttributes): Promise<void> {
    for (const p of this.validating) if (p.handles === undefined || p.handles(a.operation)) await p.validate(a);
  }
}
