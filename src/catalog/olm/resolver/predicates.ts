// A bundle's dependencies as predicates over entries (OLM's cache/predicates.go and resolver.go's
// predicateConverter): olm.gvk.required, olm.package.required, olm.label.required and
// olm.constraint (operator-framework/api pkg/constraints: gvk, package, cel, all, any, not).
// `String()` is OLM's text, which explanations quote ("bundle X requires an operator <text>");
// `key` identifies a predicate for caching (OLM's `not` prints like its operand, so the text cannot).
import { Environment } from '@marcbachmann/cel-js';
import { celErrorText } from '../../../apimachinery/cel/expressions.js';
import { parseRange, parseTolerant, type Range } from '../../../golang/semver.js';
import { gvkKey, gvkProperties, packageProperties, type Entry, type EntryIndex, type ParsedProperty } from './entries.js';

export interface Predicate {
  readonly test: (e: Entry) => boolean;
  toString(): string;
  readonly key: string;
  /** the entries that can match, when an index narrows them (a superset; `test` still decides) */
  readonly narrow?: ((index: EntryIndex) => readonly Entry[]) | undefined;
}

export function gvkPredicate(group: string, version: string, kind: string): Predicate {
  const k = gvkKey({ group, version, kind });
  return {
    key: `gvk:${k}`,
    test: (e) => gvkProperties(e).some((g) => g.group === group && g.version === version && g.kind === kind),
    toString: () => `providing an API with group: ${group}, version: ${version}, kind: ${kind}`,
    narrow: (index) => index.byGvk.get(k) ?? [],
  };
}

function pkgPredicate(pkg: string): Predicate {
  return {
    key: `pkg:${pkg}`,
    test: (e) => packageProperties(e).some((p) => p.packageName === pkg) || e.package === pkg,
    toString: () => `with package: ${pkg}`,
    narrow: (index) => index.byPackage.get(pkg) ?? [],
  };
}

function versionInRangePredicate(r: Range, text: string): Predicate {
  return {
    key: `range:${text}`,
    test: (e) => {
      for (const v of e.packageVersions) if (v && r(v)) return true;
      return e.version !== undefined && r(e.version);
    },
    toString: () => `with version in range: ${text}`,
  };
}

function labelPredicate(label: string): Predicate {
  return {
    key: `label:${label}`,
    test: (e) => e.properties.some((p) => p.type === 'olm.label' && (p.value as { label?: unknown } | undefined)?.label === label),
    toString: () => `with label: ${label}`,
  };
}

function and(...ps: Predicate[]): Predicate {
  return {
    key: `and(${ps.map((p) => p.key).join(',')})`,
    test: (e) => ps.every((p) => p.test(e)),
    toString: () => ps.map(String).join(' and '),
    // the narrowest operand's entries
    narrow: ps.some((p) => p.narrow)
      ? (index) => {
          let best: readonly Entry[] | undefined;
          for (const p of ps) {
            if (!p.narrow) continue;
            const n = p.narrow(index);
            if (!best || n.length < best.length) best = n;
          }
          return best!;
        }
      : undefined,
  };
}

function or(...ps: Predicate[]): Predicate {
  return {
    key: `or(${ps.map((p) => p.key).join(',')})`,
    test: (e) => ps.some((p) => p.test(e)),
    toString: () => ps.map(String).join(' or '),
    narrow: ps.length > 0 && ps.every((p) => p.narrow) ? (index) => [...new Set(ps.flatMap((p) => [...p.narrow!(index)]))] : undefined,
  };
}

function not(...ps: Predicate[]): Predicate {
  return {
    key: `not(${ps.map((p) => p.key).join(',')})`,
    test: (e) => !ps.some((p) => p.test(e)),
    toString: () => ps.map(String).join(' and not '),
  };
}

export function newPackageRequiredPredicate(name: string, versionRange: string): Predicate {
  // blang/semver's ParseRange, as OLM parses it; its error text is blang's
  const r = parseRange(versionRange);
  return and(pkgPredicate(name), versionInRangePredicate(r, versionRange));
}

// ---------- olm.constraint ----------

/** operator-framework/api constraints.maxConstraintSize */
const MAX_CONSTRAINT_SIZE = 2 << 16;

interface Constraint {
  failureMessage?: string;
  cel?: { rule: string };
  package?: { packageName: string; versionRange: string };
  gvk?: { group: string; kind: string; version: string };
  all?: { constraints: Constraint[] };
  any?: { constraints: Constraint[] };
  not?: { constraints: Constraint[] };
}

const FIELDS: Record<string, readonly string[]> = {
  Constraint: ['failureMessage', 'cel', 'package', 'gvk', 'all', 'any', 'not'],
  Cel: ['rule'],
  PackageConstraint: ['packageName', 'versionRange'],
  GVKConstraint: ['group', 'kind', 'version'],
  CompoundConstraint: ['constraints'],
};

/**
 * constraints.Parse: Go's json decoding with DisallowUnknownFields, and its error texts for the
 * cases a catalog author meets (an unknown field, a value of the wrong type).
 */
function decodeConstraint(v: unknown, path: string): Constraint {
  const o = decodeStruct(v, 'Constraint', path);
  const c: Constraint = {};
  if (o.failureMessage !== undefined && o.failureMessage !== null) c.failureMessage = decodeString(o.failureMessage, `${path}failureMessage`);
  if (o.cel !== undefined && o.cel !== null) {
    const cel = decodeStruct(o.cel, 'Cel', `${path}cel.`);
    c.cel = { rule: cel.rule === undefined || cel.rule === null ? '' : decodeString(cel.rule, `${path}cel.rule`) };
  }
  if (o.package !== undefined && o.package !== null) {
    const p = decodeStruct(o.package, 'PackageConstraint', `${path}package.`);
    c.package = { packageName: optString(p.packageName, `${path}package.packageName`), versionRange: optString(p.versionRange, `${path}package.versionRange`) };
  }
  if (o.gvk !== undefined && o.gvk !== null) {
    const g = decodeStruct(o.gvk, 'GVKConstraint', `${path}gvk.`);
    c.gvk = { group: optString(g.group, `${path}gvk.group`), kind: optString(g.kind, `${path}gvk.kind`), version: optString(g.version, `${path}gvk.version`) };
  }
  for (const k of ['all', 'any', 'not'] as const) {
    const raw = o[k];
    if (raw === undefined || raw === null) continue;
    const cc = decodeStruct(raw, 'CompoundConstraint', `${path}${k}.`);
    const list = cc.constraints;
    if (list !== undefined && list !== null && !Array.isArray(list)) throw typeError(list, `${path}${k}.constraints`, '[]constraints.Constraint');
    c[k] = { constraints: ((list as unknown[] | null | undefined) ?? []).map((x) => decodeConstraint(x, `${path}${k}.constraints.`)) };
  }
  return c;
}

const optString = (v: unknown, field: string): string => (v === undefined || v === null ? '' : decodeString(v, field));

function decodeString(v: unknown, field: string): string {
  if (typeof v !== 'string') throw typeError(v, field, 'string');
  return v;
}

function decodeStruct(v: unknown, type: string, path: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw typeError(v, path.replace(/\.$/, ''), `constraints.${type}`);
  }
  const o = v as Record<string, unknown>;
  // Go matches field names case-insensitively; an unmatched key is an unknown field
  const known = FIELDS[type]!;
  const out: Record<string, unknown> = {};
  for (const [k, val] of Object.entries(o)) {
    const f = known.find((n) => n === k) ?? known.find((n) => n.toLowerCase() === k.toLowerCase());
    if (!f) throw new Error(`json: unknown field ${JSON.stringify(k)}`);
    out[f] = val;
  }
  return out;
}

function typeError(v: unknown, field: string, goType: string): Error {
  const jsType = v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v;
  return new Error(`json: cannot unmarshal ${jsType} into Go struct field ${field ? `Constraint.${field}` : 'Constraint'} of type ${goType}`);
}

/** Parses an olm.constraint value and converts it to a predicate (OLM's messages). */
export function predicateForConstraint(text: string, cel: CelEnvironment): Predicate {
  let c: Constraint;
  try {
    if (text.length > MAX_CONSTRAINT_SIZE) throw new Error(`olm.constraint value is greater than max constraint size ${MAX_CONSTRAINT_SIZE} bytes`);
    let v: unknown;
    try {
      v = JSON.parse(text) as unknown;
    } catch (err) {
      throw new Error(goJSONSyntaxError(err as Error), { cause: err });
    }
    c = decodeConstraint(v, '');
  } catch (err) {
    throw new Error(`parse olm.constraint: ${(err as Error).message}`, { cause: err });
  }
  try {
    return convertConstraints([c], cel)[0]!;
  } catch (err) {
    throw new Error(`convert olm.constraint to resolver predicate: ${(err as Error).message}`, { cause: err });
  }
}

const goJSONSyntaxError = (err: Error): string => err.message.replace(/^Unexpected token/, 'invalid character');

function convertConstraints(cs: readonly Constraint[], cel: CelEnvironment): Predicate[] {
  return cs.map((c) => {
    if (c.gvk) return gvkPredicate(c.gvk.group, c.gvk.version, c.gvk.kind);
    if (c.package) return newPackageRequiredPredicate(c.package.packageName, c.package.versionRange);
    if (c.all) return and(...convertConstraints(c.all.constraints, cel));
    if (c.any) return or(...convertConstraints(c.any.constraints, cel));
    if (c.not) return not(...convertConstraints(c.not.constraints, cel));
    if (c.cel) return cel.predicate(c.cel.rule, c.failureMessage ?? '');
    throw new Error('constraint is empty');
  });
}

/** One dependency property → its predicate; undefined for a property that is not a dependency. */
export function predicateForProperty(p: ParsedProperty, cel: CelEnvironment): Predicate | undefined {
  switch (p.type) {
    case 'olm.constraint':
      return predicateForConstraint(p.text, cel);
    case 'olm.gvk.required': {
      const v = jsonObject(p);
      return gvkPredicate(s(v.group), s(v.version), s(v.kind));
    }
    case 'olm.package.required': {
      const v = jsonObject(p);
      return newPackageRequiredPredicate(s(v.packageName), s(v.versionRange));
    }
    case 'olm.label.required':
      return labelPredicate(s(jsonObject(p).label));
    default:
      // unknown properties are ignored (olm.maxOpenShiftVersion among them: kplane is no OpenShift)
      return undefined;
  }
}

function jsonObject(p: ParsedProperty): Record<string, unknown> {
  if (p.value === undefined) {
    try {
      JSON.parse(p.text);
    } catch (err) {
      throw new Error(goJSONSyntaxError(err as Error), { cause: err });
    }
  }
  if (p.value === null || typeof p.value !== 'object' || Array.isArray(p.value)) {
    throw new Error(`json: cannot unmarshal ${Array.isArray(p.value) ? 'array' : typeof p.value} into Go value of type struct`);
  }
  return p.value as Record<string, unknown>;
}
const s = (v: unknown): string => (typeof v === 'string' ? v : '');

// ---------- CEL (operator-framework/api pkg/constraints/cel.go) ----------

/**
 * OLM's CEL environment: one variable, `properties` (a list of {type, value} maps), and
 * `semver_compare(a, b)`, blang's Compare of two tolerantly parsed versions. A rule must be of
 * type bool; a rule that fails while evaluating matches nothing.
 */
export class CelEnvironment {
  private readonly env: Environment;
  private readonly programs = new Map<string, Predicate>();

  constructor() {
    this.env = new Environment({ homogeneousAggregateLiterals: false });
    this.env.registerVariable('properties', 'list<map<string, dyn>>');
    this.env.registerFunction('semver_compare(dyn, dyn): int', (a: unknown, b: unknown) => {
      const va = parseTolerant(goSprint(a));
      const vb = parseTolerant(goSprint(b));
      return BigInt(va.compare(vb));
    });
  }

  predicate(rule: string, failureMessage: string): Predicate {
    const key = `cel:${JSON.stringify([rule, failureMessage])}`;
    const cached = this.programs.get(key);
    if (cached) return cached;
    let program: ReturnType<Environment['parse']>;
    try {
      program = this.env.parse(rule);
    } catch (e) {
      throw new Error(celErrorText(rule, e), { cause: e });
    }
    const checked = program.check();
    if (!checked.valid) throw new Error(celErrorText(rule, checked.error));
    if (checked.type !== 'bool') throw new Error('cel expressions must have type Bool');
    const p: Predicate = {
      key,
      test: (e) => {
        try {
          return program({ properties: e.properties.map(celProperty) }) === true;
        } catch {
          return false;
        }
      },
      toString: () => `with constraint: ${goQuote(rule)} and message: ${goQuote(failureMessage)}`,
    };
    this.programs.set(key, p);
    return p;
  }
}

const celCache = new WeakMap<ParsedProperty, unknown>();

function celProperty(p: ParsedProperty): unknown {
  let v = celCache.get(p);
  if (v === undefined) {
    v = new Map<string, unknown>([
      ['type', p.type],
      ['value', toCEL(p.value)],
    ]);
    celCache.set(p, v);
  }
  return v;
}

/** JSON as CEL sees it from Go's interface{} values: numbers are doubles, objects are maps. */
function toCEL(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toCEL);
  if (v !== null && typeof v === 'object') return new Map(Object.entries(v).map(([k, x]) => [k, toCEL(x)]));
  return v ?? null;
}

/** fmt.Sprint of a CEL value, as semver_compare formats its arguments. */
function goSprint(v: unknown): string {
  return typeof v === 'string' ? v : String(v);
}

/** Go's %q for the texts OLM quotes. */
const goQuote = (t: string): string => JSON.stringify(t);
