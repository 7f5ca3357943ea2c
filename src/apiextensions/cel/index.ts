// CEL validation rules (`x-kubernetes-validations`) for custom resources: compile at CRD
// create/update time, evaluate on every custom resource write. Built on @marcbachmann/cel-js
// (type checker with message types, macros, optionals) and re2js (linear-time regular expressions).
export {
  celErrorText,
  compileRules,
  validFieldPath,
  type CompileOptions,
  type CompileResult,
  type CompiledNode,
  type CompiledRule,
  type CompiledSchema,
  type Program,
} from './compile.js';
export { evaluate, type EvaluateOptions } from './evaluate.js';
export {
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
  costErrorMessage,
  estimateCost,
} from './cost.js';
export { escapeProperty } from './types.js';
