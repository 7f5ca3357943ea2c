// Reinvocation (k8s.io/apiserver/pkg/admission/reinvocation.go and the dispatchers' reinvoke
// contexts): when a mutating webhook or policy changed the object, the chain runs its whole mutating
// phase once more, and in that second pass the webhooks and policies with `reinvocationPolicy:
// IfNeeded` that ran before the change (in their own plugin, or before any change by the others)
// run again. At most two passes.
import type { AdmissionAttributes } from './interfaces.js';

/** admission.ReinvocationContext: which pass this is, whether a second is due, and each plugin's own state. */
export class ReinvocationContext {
  /** The second pass of the mutating phase. */
  isReinvoke = false;
  /** A plugin changed the object in the first pass: the chain runs the mutating phase again. */
  shouldReinvoke = false;
  private readonly values = new Map<string, unknown>();

  setShouldReinvoke(): void {
    this.shouldReinvoke = true;
  }

  /** The plugin's state across the passes (upstream's Value/SetValue under the plugin's name). */
  value<T>(plugin: string, init: () => T): T {
    let v = this.values.get(plugin) as T | undefined;
    if (v === undefined) {
      v = init();
      this.values.set(plugin, v);
    }
    return v;
  }
}

// By the request's attributes; made when a plugin first asks (most writes never do).
const contexts = new WeakMap<AdmissionAttributes, ReinvocationContext>();

/** The request's reinvocation context (admission.Attributes.GetReinvocationContext). */
export function reinvocationOf(a: AdmissionAttributes): ReinvocationContext {
  let rc = contexts.get(a);
  if (!rc) {
    rc = new ReinvocationContext();
    contexts.set(a, rc);
  }
  return rc;
}

/** The second pass the chain owes `a`, if a plugin asked for one and it has not run yet (marked as running). */
export function takeReinvocation(a: AdmissionAttributes): boolean {
  const rc = contexts.get(a);
  if (!rc || !rc.shouldReinvoke || rc.isReinvoke) return false;
  rc.isReinvoke = true;
  return true;
}

/**
 * A dispatcher's reinvocation state (upstream's webhookReinvokeContext and policyReinvokeContext):
 * the IfNeeded webhooks or policies invoked since the object last changed, those to run in the
 * second pass, and the object as the plugin last left it (only kept while something could be
 * reinvoked: only then is it compared).
 */
export class ReinvokeState<K> {
  private lastOutput: unknown;
  private previouslyInvoked = new Set<K>();
  private readonly reinvoke = new Set<K>();

  shouldReinvoke(k: K): boolean {
    return this.reinvoke.has(k);
  }

  /** On entering the second pass: whether the object changed since the plugin last ran (another plugin changed it). */
  outputChanged(object: unknown, equal: (x: unknown, y: unknown) => boolean): boolean {
    return !equal(this.lastOutput, object);
  }

  /** When the plugin is done with the object: kept (a copy) only if an IfNeeded one ran that a later change would reinvoke. */
  setLastOutput(object: unknown, copy: (o: unknown) => unknown): void {
    this.lastOutput = this.previouslyInvoked.size > 0 && object !== undefined ? copy(object) : undefined;
  }

  addPreviouslyInvoked(k: K): void {
    this.previouslyInvoked.add(k);
  }

  /** The object changed: every IfNeeded one invoked before runs again in the second pass. */
  requireReinvokingPreviouslyInvoked(): void {
    if (this.previouslyInvoked.size === 0) return;
    for (const k of this.previouslyInvoked) this.reinvoke.add(k);
    this.previouslyInvoked = new Set();
  }
}
