// Reinvocation (k8s.io/apiserver/pkg/admission/reinvocation.go and the dispatchers' reinvoke
// contexts): when a mutating webhook or policy changed the object, the chain runs its whole mutating
// phase once more, and in that second pass the webhooks and policies with `reinvocationPolicy:
// IfNeeded` that ran before the change (in their own plugin, or before any change by the others)
// run again. At most two passes.
import { isDeepStrictEqual } from 'node:util';
import { deepCopyJSON } from '../apimachinery/deepcopy.js';
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
function reinvocationOf(a: AdmissionAttributes): ReinvocationContext {
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
export class ReinvokeState {
  private lastOutput: unknown;
  private previouslyInvoked = new Set<string>();
  private readonly reinvoke = new Set<string>();

  constructor(readonly rc: ReinvocationContext) {}

  /** In the second pass, one not due is skipped: nothing is invoked there for the first time. */
  skips(key: string): boolean {
    return this.rc.isReinvoke && !this.reinvoke.has(key);
  }

  /**
   * After an invocation (whatever its outcome): a change re-arms every IfNeeded one invoked before
   * it and asks the chain for its second pass; an IfNeeded one is remembered as invoked.
   */
  invoked(key: string, changed: boolean, ifNeeded: boolean): void {
    if (changed) {
      this.requireReinvokingPreviouslyInvoked();
      this.rc.setShouldReinvoke();
    }
    if (ifNeeded) this.previouslyInvoked.add(key);
  }

  /** When the plugin is done with the object: kept (a copy) only if an IfNeeded one ran that a later change would reinvoke. */
  leave(object: unknown): void {
    this.lastOutput = this.previouslyInvoked.size > 0 && object !== undefined ? deepCopyJSON(object) : undefined;
  }

  /** On entering the second pass: a change since the plugin left the object (another plugin's) re-arms every IfNeeded one. */
  enter(object: unknown): void {
    if (this.rc.isReinvoke && !isDeepStrictEqual(this.lastOutput, object)) this.requireReinvokingPreviouslyInvoked();
  }

  private requireReinvokingPreviouslyInvoked(): void {
    if (this.previouslyInvoked.size === 0) return;
    for (const k of this.previouslyInvoked) this.reinvoke.add(k);
    this.previouslyInvoked = new Set();
  }
}

/** The dispatcher `plugin`'s state for the request `a`, entered (see ReinvokeState.enter); `leave` it when done. */
export function enterDispatcher(a: AdmissionAttributes, plugin: string): ReinvokeState {
  const rc = reinvocationOf(a);
  const state = rc.value(plugin, () => new ReinvokeState(rc));
  state.enter(a.object);
  return state;
}
