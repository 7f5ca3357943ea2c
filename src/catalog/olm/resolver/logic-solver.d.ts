// The part of logic-solver (Meteor's MiniSat in JavaScript, MIT) the resolver uses; the package
// ships no types.
declare module 'logic-solver' {
  namespace Logic {
    /** A variable name, or a formula built from them. */
    type Term = string | number;
    interface Formula {
      readonly __formula: true;
    }
    type FormulaOrTerm = Formula | Term;
    class Bits {
      constructor(formulas: FormulaOrTerm[]);
    }
    interface Solution {
      getTrueVars(): string[];
      evaluate(f: FormulaOrTerm): boolean;
      getWeightedSum(formulas: FormulaOrTerm[], weights: number | number[]): number;
      ignoreUnknownVariables(): void;
    }
    class Solver {
      /** the variable's number, created when new: a NumTerm (negative for its negation) */
      getVarNum(name: string): number;
      require(...f: (FormulaOrTerm | FormulaOrTerm[])[]): void;
      forbid(...f: (FormulaOrTerm | FormulaOrTerm[])[]): void;
      solve(): Solution | null;
      solveAssuming(f: FormulaOrTerm): Solution | null;
      minimizeWeightedSum(solution: Solution, formulas: FormulaOrTerm[], weights: number | number[]): Solution;
    }
    /** runs f without logic-solver's run-time argument checks */
    function disablingAssertions<T>(f: () => T): T;
    function not(f: FormulaOrTerm): Formula;
    function or(...f: (FormulaOrTerm | FormulaOrTerm[])[]): Formula;
    function and(...f: (FormulaOrTerm | FormulaOrTerm[])[]): Formula;
    function implies(a: FormulaOrTerm, b: FormulaOrTerm): Formula;
    function atMostOne(...f: (FormulaOrTerm | FormulaOrTerm[])[]): Formula;
    function sum(...f: (FormulaOrTerm | FormulaOrTerm[])[]): Bits;
    function constantBits(n: number): Bits;
    function lessThanOrEqual(a: Bits, b: Bits): Formula;
    const TRUE: Term;
    const FALSE: Term;
  }
  export default Logic;
}
