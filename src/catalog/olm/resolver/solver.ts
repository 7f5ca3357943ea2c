// OLM's SAT layer (pkg/controller/registry/resolver/solver) on logic-solver (MiniSat): variables
// with Mandatory, Prohibited, Dependency, Conflict and AtMost constraints, each constraint guarded
// by its own activation literal so an unsatisfiable problem can be explained by the constraints
// that conflict, in OLM's words ("constraints not satisfiable: a, b, c", sorted).
//
// The answer is OLM's: starting from the mandatory variables, each Dependency's candidates are
// tried in the order given (the caller's preference order), breadth first, backtracking when a
// choice leaves the problem unsatisfiable (solver/search.go); then the variables not chosen that
// way are kept as few as possible (solve.go's cardinality minimisation). Every guess here is
// checked by a full solve, where OLM's search only propagates until its last step: the same
// depth-first order, so the same first answer, found with less backtracking.
import Logic from 'logic-solver';

export type Constraint =
  | { readonly kind: 'mandatory'; readonly text?: string }
  | { readonly kind: 'prohibited'; readonly text?: string }
  | { readonly kind: 'dependency'; readonly ids: readonly string[]; readonly text?: string }
  | { readonly kind: 'conflict'; readonly id: string; readonly text?: string }
  | { readonly kind: 'atMost'; readonly n: number; readonly ids: readonly string[]; readonly text?: string };

export interface Variable {
  readonly id: string;
  readonly constraints: Constraint[];
}

/** The problem has no solution; `constraints` are the texts of the ones that conflict, sorted. */
export class NotSatisfiable extends Error {
  override readonly name = 'NotSatisfiable';
  constructor(readonly constraints: readonly string[]) {
    super(constraints.length === 0 ? 'constraints not satisfiable' : `constraints not satisfiable: ${constraints.join(', ')}`);
  }
}

/** A constraint's text: the one given, or OLM's default for its kind. */
export function constraintText(subject: string, c: Constraint): string {
  if (c.text !== undefined) return c.text;
  switch (c.kind) {
    case 'mandatory':
      return `${subject} is mandatory`;
    case 'prohibited':
      return `${subject} is prohibited`;
    case 'dependency':
      return c.ids.length === 0
        ? `${subject} has a dependency without any candidates to satisfy it`
        : `${subject} requires at least one of ${c.ids.join(', ')}`;
    case 'conflict':
      return `${subject} conflicts with ${c.id}`;
    case 'atMost':
      return `${subject} permits at most ${c.n} of ${c.ids.join(', ')}`;
  }
}

interface Applied {
  readonly variable: Variable;
  readonly constraint: Constraint;
  /** the activation literal's number */
  readonly activation: number;
}

interface Choice {
  index: number;
  readonly candidates: readonly number[];
}

interface Guess {
  /** the literal assumed, or undefined when the choice was already met (or has no candidate left) */
  readonly m: number | undefined;
  readonly index: number;
  children: number;
  readonly candidates: readonly number[];
}

/** Solves the variables; returns the ids of those installed, or throws NotSatisfiable. */
export function solve(variables: readonly Variable[]): string[] {
  // logic-solver checks every argument's type at run time unless told not to: most of its time here
  return Logic.disablingAssertions(() => solveUnchecked(variables));
}

function solveUnchecked(variables: readonly Variable[]): string[] {
  const solver = new Logic.Solver();
  const lit = new Map<string, number>();
  const byLit = new Map<number, Variable>();
  variables.forEach((v, i) => {
    if (lit.has(v.id)) throw new Error(`duplicate identifier ${JSON.stringify(v.id)} in input`);
    const n = solver.getVarNum(`v${i}`);
    lit.set(v.id, n);
    byLit.set(n, v);
  });
  const missing: string[] = [];
  let auxiliaries = 0;
  /** a new auxiliary variable (counters, dependency groups, explanation selectors) */
  const fresh = (): number => solver.getVarNum(`x${auxiliaries++}`);
  const falseLit = solver.getVarNum('false');
  solver.forbid(falseLit);
  const litOf = (id: string): number => {
    const l = lit.get(id);
    if (l !== undefined) return l;
    missing.push(`variable ${JSON.stringify(id)} referenced but not provided`);
    return falseLit;
  };
  // A dependency's candidates, shared by every bundle with that dependency (all versions of a
  // package usually ask for the same thing): one auxiliary literal implies "one of them", so the
  // candidates are written once, not once per dependent bundle.
  const groups = new Map<string, number>();
  const groupOf = (ids: readonly number[]): number => {
    const key = ids.join(',');
    let g = groups.get(key);
    if (g === undefined) {
      g = fresh();
      groups.set(key, g);
      clause(solver, [-g, ...ids]);
    }
    return g;
  };

  const applied: Applied[] = [];
  for (const v of variables) {
    const x = litOf(v.id);
    for (const c of v.constraints) {
      const a = solver.getVarNum(`a${applied.length}`);
      applied.push({ variable: v, constraint: c, activation: a });
      switch (c.kind) {
        case 'mandatory':
          clause(solver, [-a, x]);
          break;
        case 'prohibited':
          clause(solver, [-a, -x]);
          break;
        case 'dependency':
          clause(solver, c.ids.length > 2 ? [-a, -x, groupOf(c.ids.map(litOf))] : [-a, -x, ...c.ids.map(litOf)]);
          break;
        case 'conflict':
          clause(solver, [-a, -x, -litOf(c.id)]);
          break;
        case 'atMost': {
          const ids = c.ids.map(litOf);
          if (c.n === 1) atMostOne(solver, a, ids, fresh);
          else solver.require(Logic.implies(a, Logic.lessThanOrEqual(Logic.sum(ids), Logic.constantBits(c.n))));
          break;
        }
      }
    }
  }
  if (missing.length > 0) throw new Error(missing.length === 1 ? missing[0] : `${missing.length} errors encountered: ${missing.join(', ')}`);

  const allActive = Logic.and(applied.map((a) => a.activation));
  if (!solver.solveAssuming(allActive)) throw new NotSatisfiable(explain(solver, applied, fresh));
  solver.require(allActive);

  // search.go, optimistically: guess without solving and solve once at the end, which is all it takes
  // when the preferred candidates fit together. When they do not, search again checking every guess.
  // Both find the same answer, the first satisfiable leaf in the same depth-first order.
  const anchors: number[] = [];
  for (const v of variables) if (v.constraints.some((c) => c.kind === 'mandatory')) anchors.push(litOf(v.id));
  const search = (checkEach: boolean): Logic.Solution | null => {
    const choices: Choice[] = anchors.map((m) => ({ index: 0, candidates: [m] }));
    const guesses: Guess[] = [];
    const assumed = new Set<number>();
    const sat = (): boolean => solver.solveAssuming(Logic.and([...assumed])) !== null;
    let ok = true;
    const pushGuess = (): void => {
      const c = choices.shift()!;
      let m: number | undefined = c.index < c.candidates.length ? c.candidates[c.index] : undefined;
      if (c.candidates.some((x) => assumed.has(x))) m = undefined;
      const g: Guess = { m, index: c.index, children: 0, candidates: c.candidates };
      guesses.push(g);
      if (m === undefined) return;
      for (const con of byLit.get(m)!.constraints) {
        if (con.kind !== 'dependency' || con.ids.length === 0) continue;
        g.children++;
        choices.push({ index: 0, candidates: con.ids.map(litOf) });
      }
      assumed.add(m);
      if (checkEach) ok = sat();
    };
    const popGuess = (): void => {
      const g = guesses.pop()!;
      if (g.m !== undefined) {
        assumed.delete(g.m);
        // every guess kept on the stack was satisfiable with the ones below it
        ok = true;
      }
      for (; g.children > 0; g.children--) choices.pop();
      choices.unshift({ index: g.m !== undefined ? g.index + 1 : g.index, candidates: g.candidates });
    };
    for (;;) {
      if (!ok) {
        if (guesses.length === 0) break;
        popGuess();
        continue;
      }
      if (choices.length === 0) break;
      pushGuess();
    }
    guessedLits = [...assumed];
    return solver.solveAssuming(Logic.and(guessedLits));
  };
  let guessedLits: number[] = [];
  const found = search(false) ?? search(true);
  // the initial problem was satisfiable and the checked search never keeps a failing guess
  if (!found) throw new NotSatisfiable(explain(solver, applied, fresh));
  const assumed = new Set(guessedLits);
  const guessed = guessedLits;

  // solve.go: keep the guesses, exclude what is false, and install as few of the rest as possible
  const extras: number[] = [];
  for (const l of lit.values()) {
    if (assumed.has(l)) continue;
    if (found.evaluate(l)) extras.push(l);
    else solver.forbid(l);
  }
  solver.require(guessed);
  let best = found;
  if (extras.length > 0) best = solver.minimizeWeightedSum(found, extras, 1);
  const out: string[] = [];
  for (const [id, l] of lit) if (best.evaluate(l)) out.push(id);
  return out;
}

/**
 * One clause of literal numbers. logic-solver's public path (require of a disjunction) spends most
 * of its time normalising the formula; a disjunction of numbered literals is already a clause, so it
 * goes straight to the solver's clause list when the library has the internal method for it.
 */
function clause(solver: Logic.Solver, lits: number[]): void {
  const internal = solver as unknown as { _addClause?: (c: unknown) => void };
  const Clause = (Logic as unknown as { Clause?: new (terms: number[]) => unknown }).Clause;
  if (typeof internal._addClause === 'function' && Clause) internal._addClause(new Clause(lits));
  else solver.require(Logic.or(lits));
}

/**
 * activation → at most one of xs, as Sinz's sequential counter: s_i is "one of x_1..x_i is true",
 * 3n clauses and n new variables where the pairwise encoding needs n²/2 clauses (a package's
 * bundles, an API's providers: dozens each).
 */
function atMostOne(solver: Logic.Solver, a: number, xs: readonly number[], fresh: () => number): void {
  let prev = 0;
  xs.forEach((x) => {
    const si = fresh();
    clause(solver, [-a, -x, si]);
    if (prev !== 0) {
      clause(solver, [-a, -prev, si]);
      clause(solver, [-a, -x, -prev]);
    }
    prev = si;
  });
}

/**
 * The constraints to blame: a minimal set whose activation alone is unsatisfiable. OLM asks gini for
 * the failed assumptions instead, which is a conflicting set but not always a minimal one.
 *
 * Deletion over a tree of selectors: each inner node's literal implies its two halves', a leaf is a
 * constraint's activation. Starting from the root, a part is dropped when the rest still conflicts,
 * kept when it is one constraint, split otherwise; so a problem of n constraints with k to blame
 * takes O(k log n) solves, each assuming O(k log n) literals, where dropping constraints one by one
 * would take n solves over n literals each (minutes for a catalog-sized problem).
 */
function explain(solver: Logic.Solver, applied: readonly Applied[], fresh: () => number): string[] {
  interface Node {
    readonly lit: number;
    readonly leaf?: Applied;
    readonly children?: readonly [Node, Node];
  }
  const build = (from: number, to: number): Node => {
    if (to - from === 1) return { lit: applied[from]!.activation, leaf: applied[from]! };
    const mid = (from + to) >> 1;
    const children = [build(from, mid), build(mid, to)] as const;
    const lit = fresh();
    for (const c of children) clause(solver, [-lit, c.lit]);
    return { lit, children };
  };
  if (applied.length === 0) return [];
  const kept: Node[] = [];
  const undecided: Node[] = [build(0, applied.length)];
  const conflicts = (nodes: readonly Node[]): boolean => !solver.solveAssuming(Logic.and(nodes.map((n) => n.lit)));
  while (undecided.length > 0) {
    const x = undecided.pop()!;
    if (conflicts([...kept, ...undecided])) continue; // x is not needed for the conflict
    if (x.leaf) kept.push(x);
    else undecided.push(...x.children!);
  }
  return kept.map((n) => constraintText(n.leaf!.variable.id, n.leaf!.constraint)).sort(goCompare);
}

/** Go's string comparison: bytes, which for these texts is UTF-16 order. */
const goCompare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
