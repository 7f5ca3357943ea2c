// kube's semver CEL library (k8s.io/apiserver/pkg/cel/library/semverlib.go, version 1, kube
// 1.33+), over blang/semver v4's parsing, messages and ordering: `semver(s)`, `semver(s, true)`
// (normalized: a leading `v` dropped, a missing minor or patch added as 0, leading zeros removed),
// `isSemver(s[, normalize])`, `major()`, `minor()`, `patch()`, `isGreaterThan`, `isLessThan`,
// `compareTo` and `==` (build metadata ignored, as blang compares).
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';

type PR = bigint | string;

/** apiservercel.Semver: a semver.Version. */
export class SemverValue {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly PR[],
  ) {}

  /** semver.Version.Compare: -1, 0 or 1. */
  compare(o: SemverValue): number {
    for (const [a, b] of [
      [this.major, o.major],
      [this.minor, o.minor],
      [this.patch, o.patch],
    ] as const) {
      if (a !== b) return a < b ? -1 : 1;
    }
    // A version without a prerelease is the greater; otherwise part by part.
    if (this.pre.length === 0 || o.pre.length === 0) return this.pre.length === o.pre.length ? 0 : this.pre.length === 0 ? 1 : -1;
    for (let i = 0; i < Math.min(this.pre.length, o.pre.length); i++) {
      const a = this.pre[i]!;
      const b = o.pre[i]!;
      if (a === b) continue;
      // Numeric parts come before alphanumeric ones.
      if (typeof a !== typeof b) return typeof a === 'bigint' ? -1 : 1;
      return a < b ? -1 : 1;
    }
    return this.pre.length === o.pre.length ? 0 : this.pre.length < o.pre.length ? -1 : 1;
  }
}

const onlyDigits = (s: string): boolean => /^[0-9]*$/.test(s);
const onlyAlnum = (s: string): boolean => /^[0-9A-Za-z-]*$/.test(s);
const MAX_UINT64 = 2n ** 64n - 1n;

/** strconv.ParseUint(s, 10, 64) as blang calls it. */
function parseUint(s: string): bigint | string {
  if (s === '') return `strconv.ParseUint: parsing "": invalid syntax`;
  const v = BigInt(s);
  return v > MAX_UINT64 ? `strconv.ParseUint: parsing ${JSON.stringify(s)}: value out of range` : v;
}

/** semver.Parse: the version, or blang's error text. */
export function parseSemver(s: string): SemverValue | string {
  if (s.length === 0) return 'Version string empty';
  const parts = splitN(s, '.', 3);
  if (parts.length !== 3) return 'No Major.Minor.Patch elements found';
  const numbers: bigint[] = [];
  for (const [i, name] of ['major', 'minor'].entries()) {
    const p = parts[i]!;
    if (!onlyDigits(p)) return `Invalid character(s) found in ${name} number ${JSON.stringify(p)}`;
    if (p.length > 1 && p.startsWith('0')) return `${name === 'major' ? 'Major' : 'Minor'} number must not contain leading zeroes ${JSON.stringify(p)}`;
    const v = parseUint(p);
    if (typeof v === 'string') return v;
    numbers.push(v);
  }
  let patchStr = parts[2]!;
  let build: string[] = [];
  let pre: string[] = [];
  const plus = patchStr.indexOf('+');
  if (plus >= 0) {
    build = patchStr.slice(plus + 1).split('.');
    patchStr = patchStr.slice(0, plus);
  }
  const dash = patchStr.indexOf('-');
  if (dash >= 0) {
    pre = patchStr.slice(dash + 1).split('.');
    patchStr = patchStr.slice(0, dash);
  }
  if (!onlyDigits(patchStr)) return `Invalid character(s) found in patch number ${JSON.stringify(patchStr)}`;
  if (patchStr.length > 1 && patchStr.startsWith('0')) return `Patch number must not contain leading zeroes ${JSON.stringify(patchStr)}`;
  const patch = parseUint(patchStr);
  if (typeof patch === 'string') return patch;
  const prs: PR[] = [];
  for (const p of pre) {
    if (p.length === 0) return 'Prerelease is empty';
    if (onlyDigits(p)) {
      if (p.length > 1 && p.startsWith('0')) return `Numeric PreRelease version must not contain leading zeroes ${JSON.stringify(p)}`;
      const v = parseUint(p);
      if (typeof v === 'string') return v;
      prs.push(v);
    } else if (onlyAlnum(p)) prs.push(p);
    else return `Invalid character(s) found in prerelease ${JSON.stringify(p)}`;
  }
  for (const b of build) {
    if (b.length === 0) return 'Build meta data is empty';
    if (!onlyAlnum(b)) return `Invalid character(s) found in build meta data ${JSON.stringify(b)}`;
  }
  return new SemverValue(numbers[0]!, numbers[1]!, patch, prs);
}

/** Go's strings.SplitN. */
function splitN(s: string, sep: string, n: number): string[] {
  const out: string[] = [];
  let rest = s;
  while (out.length < n - 1) {
    const i = rest.indexOf(sep);
    if (i < 0) break;
    out.push(rest.slice(0, i));
    rest = rest.slice(i + sep.length);
  }
  out.push(rest);
  return out;
}

/** library.normalizeAndParse. */
function normalizeAndParse(s: string): SemverValue | string {
  const parts = splitN(s.startsWith('v') ? s.slice(1) : s, '.', 3).map((p) => {
    if (p.length <= 1) return p;
    const t = p.replace(/^0+/, '');
    return t.length === 0 || !/^[0-9]/.test(t) ? `0${t}` : t;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1]!)) return 'short version cannot contain PreRelease/Build meta data';
    while (parts.length < 3) parts.push('0');
  }
  return parseSemver(parts.join('.'));
}

/** Declares the semver library on `env`; `charge` takes each call's cost. */
export function registerSemver(env: Environment, charge: (n: number) => void): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  const parse = (s: string, normalize: boolean): SemverValue | string => (charge(1), normalize ? normalizeAndParse(s) : parseSemver(s));
  const must = (v: SemverValue | string): SemverValue => {
    if (typeof v === 'string') throw new EvaluationError(v);
    return v;
  };
  env.registerType('kubernetes.Semver', { ctor: SemverValue, fields: {} } as never);
  fn('semver(string): kubernetes.Semver', (s: string) => must(parse(s, false)));
  fn('semver(string, bool): kubernetes.Semver', (s: string, n: boolean) => must(parse(s, n)));
  fn('isSemver(string): bool', (s: string) => typeof parse(s, false) !== 'string');
  fn('isSemver(string, bool): bool', (s: string, n: boolean) => typeof parse(s, n) !== 'string');
  fn('kubernetes.Semver.major(): int', (v: SemverValue) => v.major);
  fn('kubernetes.Semver.minor(): int', (v: SemverValue) => v.minor);
  fn('kubernetes.Semver.patch(): int', (v: SemverValue) => v.patch);
  fn('kubernetes.Semver.isGreaterThan(kubernetes.Semver): bool', (a: SemverValue, b: SemverValue) => a.compare(b) === 1);
  fn('kubernetes.Semver.isLessThan(kubernetes.Semver): bool', (a: SemverValue, b: SemverValue) => a.compare(b) === -1);
  fn('kubernetes.Semver.compareTo(kubernetes.Semver): int', (a: SemverValue, b: SemverValue) => BigInt(a.compare(b)));
  env.registerOperator('kubernetes.Semver == kubernetes.Semver', (a: SemverValue, b: SemverValue) => a.compare(b) === 0);
}
