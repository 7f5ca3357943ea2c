// The hook for `x-kubernetes-validations` (CEL): CRD validation and custom resource strategies
// call rules only through this interface. `celValidationRules()` plugs in src/apiextensions/cel
// (the default); `apiextensions({ rules: null })` leaves rules shape-checked but not evaluated.
import type { FieldIssue } from '../apimachinery/errors.js';
import { compileRules, evaluate, type CompileOptions } from './cel/index.js';
import type { Structural } from './schema/index.js';

/** Compiled rules of one version's schema. */
export interface CompiledRules {
  /**
   * Evaluates every rule against `obj` (and `old` for transition rules; undefined on create).
   * Returns kube's field errors (`spec: Invalid value: "object": <message>`), never throws.
   */
  validate(obj: unknown, old: unknown): FieldIssue[];
}

export interface ValidationRulesEngine {
  /**
   * CRD-time check of one version's schema: every rule compiles and stays within the cost
   * limits. `fieldPath` is the schema's path (`spec.validation.openAPIV3Schema`). Issues are
   * reported with upstream's paths (`...openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`).
   */
  check(schema: Structural, fieldPath: string): FieldIssue[];
  /** Rules of one schema ready to run; undefined when the schema has none. */
  compile(schema: Structural): CompiledRules | undefined;
}

export interface CelValidationRulesOptions {
  /**
   * Whether the cost limits apply (asked at each check and compile): false lifts the static
   * per-rule and whole-schema estimates, the per-call limit and the per-request budget (the
   * KplaneCELCostLimits gate). The wall-clock guard of evaluate() stays, so no rule can hang a
   * request either way. Default: always on.
   */
  readonly costLimits?: () => boolean;
}

/** The CEL engine of src/apiextensions/cel as the rules hook (the default of `apiextensions()`). */
export function celValidationRules(opts: CelValidationRulesOptions = {}): ValidationRulesEngine {
  const unlimited = (): boolean => opts.costLimits?.() === false;
  const limits = (): CompileOptions => (unlimited() ? { staticCostLimit: Infinity, crdCostLimit: Infinity, perCallLimit: Infinity } : {});
  return {
    check: (schema, fieldPath) => compileRules(schema, { path: fieldPath, ...limits() }).issues,
    compile(schema) {
      const { compiled } = compileRules(schema, limits());
      if (!compiled.root) return undefined;
      const evalOpts = unlimited() ? { budget: Infinity } : {};
      return { validate: (obj, old) => evaluate(compiled, obj, old, evalOpts) };
    },
  };
}
