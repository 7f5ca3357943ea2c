// Kubernetes' CEL libraries (k8s.io/apiserver/pkg/cel/library) on top of @marcbachmann/cel-js, plus
// the runtime cost meter that every library function and every comprehension step charges. Shared
// by the CRD validation rules (src/apiextensions/cel), admission policies and webhook matchConditions
// (src/admission/cel) and the JWT authenticators' claim expressions.
//
// Provided here (beyond the evaluator's built-ins: has/all/exists/exists_one/map/filter, size,
// contains/startsWith/endsWith, string.indexOf/lastIndexOf/substring/split, list.join, int/uint/
// double/string/bytes/dyn/type conversions, timestamp/duration, cel.bind):
//   lists:   isSorted, sum, min, max, indexOf, lastIndexOf
//   regex:   matches (RE2, linear time: replaces the evaluator's backtracking RegExp), find, findAll
//   strings: charAt, replace (2 and 3 args), reverse (lowerAscii, upperAscii, trim, indexOf,
//            lastIndexOf, split, substring, join are the evaluator's own)
//   urls:    url, isURL, getScheme, getHost, getHostname, getPort, getEscapedPath, getQuery
//   quantity: quantity, isQuantity, isInteger, asInteger, asApproximateFloat, sign, add, sub,
//             compareTo, isGreaterThan, isLessThan
//   format:  format.<name>(), format.named(), Format.validate (format-sets.ts)
//   sets:    sets.contains, sets.equivalent, sets.intersects (format-sets.ts)
//   ip/cidr: ip, isIP, ip.isCanonical, family, is*, cidr, isCIDR, containsIP, containsCIDR, ip,
//            masked, prefixLength, string(), == (net.ts)
//   semver:  semver (normalizing too), isSemver, major, minor, patch, isGreaterThan, isLessThan,
//            compareTo, == (semver.ts)
//   strings: string.format, strings.quote (strings-format.ts)
//   two-variable comprehensions: all/exists/existsOne(i, v, p), transformList, transformMap,
//            transformMapEntry (comprehensions.ts)
//   optional: optional.ofNonZeroValue, optMap, optFlatMap (optional.ts); `[?x]` and `{?k: v}`
//            entries through source.ts's parseCel, which every compile site parses with
//   image:   image, isImage, containsDigest, registry, repository, identifier, tag, digest
//            (image.ts)
//
// Nothing of kube's base environment is missing. The math.*, encoders and ext lists extensions
// are not in kube's environment (a rule using them fails to compile, as upstream).
import { Environment, EvaluationError } from '@marcbachmann/cel-js';
import { ERR_QUANTITY_FORMAT, Quantity, parseQuantity } from '../quantity.js';
import { findAllString, findString, mustCompileRegexp, type Regexp } from '../../golang/regexp.js';
import { registerFormatAndSets } from './format-sets.js';
import { registerNet } from './net.js';
import { registerSemver } from './semver.js';
import { registerStringFormat } from './strings-format.js';
import { registerTwoVarComprehensions } from './comprehensions.js';
import { registerOptionalHelpers } from './optional.js';
import { registerImage } from './image.js';
import { KubeURL, parseURL } from './url.js';

/** int and double compare by value, exactly: int64s past 2^53 differ even where their doubles do not. */
export function numbersEqual(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === typeof b) return a === b;
  const [n, big] = typeof a === 'number' ? [a, b as bigint] : [b as number, a];
  return Number.isInteger(n) && BigInt(n) === big;
}

/** Thrown (and recognised) when a rule runs past its per-call cost limit or the request's time guard. */
export class CostExceeded extends Error {
  override readonly name = 'CostExceeded';
  constructor() {
    super('operation cancelled: actual cost limit exceeded');
  }
}

/**
 * Runtime cost meter. Evaluation is synchronous, so one module-level meter is enough: evaluate()
 * arms it before each program run and reads it afterwards. Units roughly follow cel-go's: one per
 * AST node visited in a comprehension step, one per element or per ten characters a library
 * function touches.
 */
export const meter = {
  /** Cost charged so far in the current program run. */
  used: 0,
  /** Per-call limit for the current run. */
  limit: Number.POSITIVE_INFINITY,
  /** Wall-clock deadline (performance.now()) for the current run. */
  deadline: Number.POSITIVE_INFINITY,
  exceeded: false,
  ticks: 0,
};

export function armMeter(limit: number, deadline: number): void {
  meter.used = 0;
  meter.limit = limit;
  meter.deadline = deadline;
  meter.exceeded = false;
  meter.ticks = 0;
}

/** Charges `n` cost units; throws {@link CostExceeded} once the run is over its limit or deadline. */
export function charge(n: number): void {
  meter.used += n;
  if (meter.exceeded || meter.used > meter.limit) {
    meter.exceeded = true;
    throw new CostExceeded();
  }
  // Checking the clock is not free: every 256 charges.
  if ((++meter.ticks & 255) === 0 && performance.now() > meter.deadline) {
    meter.exceeded = true;
    throw new CostExceeded();
  }
}

const strCost = (s: string): number => 1 + Math.ceil(s.length / 10);

function evalError(message: string): EvaluationError {
  return new EvaluationError(message);
}

// ---------- regex (RE2 semantics, linear time) ----------

function re2(pattern: string): Regexp {
  try {
    return mustCompileRegexp(pattern);
  } catch (e) {
    throw evalError(`invalid regular expression: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function runeCount(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0xd800 || c > 0xdbff) n++;
  }
  return n;
}

/**
 * cel-go's runtime cost of matches (and kube's of find/findAll): the string's traversal times a
 * guess at the pattern's size, one expression per four characters; sizes are in code points.
 */
function regexCost(s: string, pattern: string): number {
  return Math.ceil((1 + runeCount(s)) * 0.1) * Math.ceil(runeCount(pattern) * 0.25);
}

/** Name the evaluator's own `matches` is renamed to before type checking (see compile.ts). */
export const RE2_MATCHES = '__re2_matches';

// ---------- lists ----------

type Scalar = bigint | number | string | boolean;

function cmp(a: unknown, b: unknown): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  if ((typeof a === 'number' || typeof a === 'bigint') && (typeof b === 'number' || typeof b === 'bigint')) {
    // < and > compare a bigint with a number exactly (an int64 past 2^53 with a double).
    return a < b ? -1 : a > b ? 1 : 0;
  }
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a instanceof Quantity && b instanceof Quantity) return a.cmp(b);
  throw evalError('no such overload');
}

function listOf(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (v instanceof Set) return [...v];
  throw evalError('no such overload');
}

function equalValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof a === 'number') return (typeof b === 'bigint' || typeof b === 'number') && numbersEqual(a, b);
  return false;
}

// ---------- urls: url.ts ----------

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);

function qty(v: unknown): Quantity {
  if (v instanceof Quantity) return v;
  if (typeof v === 'bigint') return new Quantity(v, 1n);
  throw evalError('no such overload');
}

/** Registers kube's libraries on `env` (a fresh environment that is cloned per schema afterwards). */
export function registerKubeLibraries(env: Environment): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    // The evaluator types handlers loosely (any[] → any); narrowing per signature is done inside.
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };

  env.registerType('kubernetes.URL', { ctor: KubeURL, fields: {} });
  env.registerType('Quantity', { ctor: Quantity, fields: {} });

  // ----- lists -----
  for (const t of ['int', 'double', 'string', 'bool', 'google.protobuf.Timestamp', 'Quantity']) {
    fn(`list<${t}>.isSorted(): bool`, (l: unknown[]) => {
      const a = listOf(l);
      charge(a.length);
      for (let i = 1; i < a.length; i++) if (cmp(a[i - 1], a[i]) > 0) return false;
      return true;
    });
  }
  fn('list<int>.sum(): int', (l: bigint[]) => {
    charge(l.length);
    let s = 0n;
    for (const x of l) s += x;
    if (s > INT64_MAX || s < INT64_MIN) throw evalError('integer overflow');
    return s;
  });
  fn('list<double>.sum(): double', (l: number[]) => {
    charge(l.length);
    let s = 0;
    for (const x of l) s += x;
    return s;
  });
  for (const t of ['int', 'double', 'string', 'bool', 'google.protobuf.Timestamp']) {
    for (const name of ['min', 'max'] as const) {
      fn(`list<${t}>.${name}(): ${t}`, (l: unknown[]) => {
        const a = listOf(l);
        charge(a.length);
        if (a.length === 0) throw evalError(`${name}(list) called on empty list`);
        let best = a[0];
        for (let i = 1; i < a.length; i++) {
          const c = cmp(a[i], best);
          if (name === 'min' ? c < 0 : c > 0) best = a[i];
        }
        return best;
      });
    }
  }
  for (const t of ['int', 'double', 'string', 'bool', 'bytes', 'google.protobuf.Timestamp']) {
    fn(`list<${t}>.indexOf(${t}): int`, (l: unknown[], v: Scalar) => {
      const a = listOf(l);
      charge(a.length);
      for (let i = 0; i < a.length; i++) if (equalValues(a[i], v)) return BigInt(i);
      return -1n;
    });
    fn(`list<${t}>.lastIndexOf(${t}): int`, (l: unknown[], v: Scalar) => {
      const a = listOf(l);
      charge(a.length);
      for (let i = a.length - 1; i >= 0; i--) if (equalValues(a[i], v)) return BigInt(i);
      return -1n;
    });
  }

  // ----- regex -----
  fn(`string.${RE2_MATCHES}(string): bool`, (s: string, p: string) => {
    charge(regexCost(s, p));
    return re2(p).test(s);
  });
  fn(`${RE2_MATCHES}(string, string): bool`, (s: string, p: string) => {
    charge(regexCost(s, p));
    return re2(p).test(s);
  });
  fn('string.find(string): string', (s: string, p: string) => {
    charge(regexCost(s, p));
    return findString(re2(p), s);
  });
  const findAll = (s: string, p: string, limit: bigint): string[] => {
    charge(regexCost(s, p));
    // FindAllString's n is a Go int; any count past the string's length means "all".
    return findAllString(re2(p), s, limit < 0n || limit > BigInt(s.length + 1) ? -1 : Number(limit));
  };
  fn('string.findAll(string): list<string>', (s: string, p: string) => findAll(s, p, -1n));
  fn('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => findAll(s, p, n));

  // ----- strings (cel-go ext strings, as kube enables it) -----
  fn('string.charAt(int): string', (s: string, i: bigint) => {
    charge(1);
    const cps = [...s];
    const n = Number(i);
    if (n < 0 || n > cps.length) throw evalError(`index out of range: ${i}`);
    return cps[n] ?? '';
  });
  const replace = (s: string, from: string, to: string, n: bigint): string => {
    charge(strCost(s) + strCost(to));
    if (n === 0n) return s;
    if (n < 0n) return s.split(from).join(to);
    let out = '';
    let rest = s;
    let k = 0n;
    while (k < n) {
      const i = rest.indexOf(from);
      if (i < 0) break;
      out += rest.slice(0, i) + to;
      rest = rest.slice(i + from.length);
      k++;
      if (from === '') {
        // Go's strings.Replace with an empty old string inserts between runes.
        if (!rest) break;
        const cp = [...rest][0]!;
        out += cp;
        rest = rest.slice(cp.length);
      }
    }
    return out + rest;
  };
  fn('string.replace(string, string): string', (s: string, a: string, b: string) => replace(s, a, b, -1n));
  fn('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => replace(s, a, b, n));
  fn('string.reverse(): string', (s: string) => (charge(strCost(s)), [...s].reverse().join('')));

  // ----- urls -----
  fn('url(string): kubernetes.URL', (s: string) => {
    charge(strCost(s));
    const u = parseURL(s);
    if (!u) throw evalError(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
    return u;
  });
  fn('isURL(string): bool', (s: string) => (charge(strCost(s)), parseURL(s) !== undefined));
  const isAbs = (u: KubeURL): boolean => !u.raw.startsWith('/');
  fn('kubernetes.URL.getScheme(): string', (u: KubeURL) => (isAbs(u) ? u.url.protocol.replace(/:$/, '') : ''));
  fn('kubernetes.URL.getHost(): string', (u: KubeURL) => (isAbs(u) ? u.url.host : ''));
  fn('kubernetes.URL.getHostname(): string', (u: KubeURL) => (isAbs(u) ? u.url.hostname.replace(/^\[|\]$/g, '') : ''));
  fn('kubernetes.URL.getPort(): string', (u: KubeURL) => (isAbs(u) ? u.url.port : ''));
  fn('kubernetes.URL.getEscapedPath(): string', (u: KubeURL) => u.url.pathname);
  fn('kubernetes.URL.getQuery(): map<string, list<string>>', (u: KubeURL) => {
    const out = new Map<string, string[]>();
    for (const [k, v] of u.url.searchParams) {
      const l = out.get(k);
      if (l) l.push(v);
      else out.set(k, [v]);
    }
    return out;
  });

  // ----- quantity -----
  fn('quantity(string): Quantity', (s: string) => {
    charge(1);
    const q = parseQuantity(s).quantity;
    if (!q) throw evalError(ERR_QUANTITY_FORMAT);
    return q;
  });
  fn('isQuantity(string): bool', (s: string) => (charge(1), parseQuantity(s).quantity !== undefined));
  fn('Quantity.isInteger(): bool', (q: Quantity) => q.den === 1n && q.num <= INT64_MAX && q.num >= INT64_MIN);
  fn('Quantity.asInteger(): int', (q: Quantity) => {
    if (q.den !== 1n || q.num > INT64_MAX || q.num < INT64_MIN) throw evalError('cannot convert value to integer');
    return q.num;
  });
  fn('Quantity.asApproximateFloat(): double', (q: Quantity) => Number(q.num) / Number(q.den));
  fn('Quantity.sign(): int', (q: Quantity) => (q.num > 0n ? 1n : q.num < 0n ? -1n : 0n));
  fn('Quantity.compareTo(Quantity): int', (a: Quantity, b: Quantity) => BigInt(a.cmp(b)));
  fn('Quantity.isGreaterThan(Quantity): bool', (a: Quantity, b: Quantity) => a.cmp(b) > 0);
  fn('Quantity.isLessThan(Quantity): bool', (a: Quantity, b: Quantity) => a.cmp(b) < 0);
  fn('Quantity.add(Quantity): Quantity', (a: Quantity, b: Quantity) => a.add(b));
  fn('Quantity.add(int): Quantity', (a: Quantity, b: bigint) => a.add(qty(b)));
  fn('Quantity.sub(Quantity): Quantity', (a: Quantity, b: Quantity) => a.add(b.neg()));
  fn('Quantity.sub(int): Quantity', (a: Quantity, b: bigint) => a.add(qty(b).neg()));
  env.registerOperator('Quantity == Quantity', (a: Quantity, b: Quantity) => a.cmp(b) === 0);

  // ----- format, sets -----
  registerFormatAndSets(env, charge);

  // ----- ip, cidr -----
  registerNet(env, charge);

  // ----- semver -----
  registerSemver(env, charge);

  // ----- string.format, strings.quote -----
  registerStringFormat(env, charge);

  // ----- two-variable comprehensions -----
  registerTwoVarComprehensions(env, charge);

  // ----- optional.ofNonZeroValue, optMap, optFlatMap (entries: source.ts parseCel) -----
  registerOptionalHelpers(env);

  // ----- image -----
  registerImage(env, charge);
}

let base: Environment | undefined;

/** The shared environment with kube's libraries; per-schema environments are clones of it. */
export function baseEnvironment(): Environment {
  if (!base) {
    base = new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false });
    registerKubeLibraries(base);
  }
  return base;
}
