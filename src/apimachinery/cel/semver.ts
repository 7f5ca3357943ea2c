// kube's semver CEL library (k8s.io/apiserver/pkg/cel/library/semverlib.go, version 1, kube
// 1.33+), over blang/semver v4 (`golang/semver.ts`: its parsing, messages and ordering):
// `semver(s)`, `semver(s, true)` (normalized: a leading `v` dropped, a missing minor or patch added
// as 0, leading zeros removed), `isSemver(s[, normalize])`, `major()`, `minor()`, `patch()`,
// `isGreaterThan`, `isLessThan`, `compareTo` and `==` (build metadata ignored, as blang compares).
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';
import { parse, Version } from '../../golang/semver.js';
import { goSplitN } from '../../golang/strings.js';

/** semver.Parse: the version, or blang's error text. */
function parseSemver(s: string): Version | string {
  try {
    return parse(s);
  } catch (e) {
    return (e as Error).message;
  }
}

/** library.normalizeAndParse (kube's, not blang's ParseTolerant: no trimming, its own message). */
function normalizeAndParse(s: string): Version | string {
  const parts = goSplitN(s.startsWith('v') ? s.slice(1) : s, '.', 3).map((p) => {
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
  const parseCharged = (s: string, normalize: boolean): Version | string => (charge(1), normalize ? normalizeAndParse(s) : parseSemver(s));
  const must = (v: Version | string): Version => {
    if (typeof v === 'string') throw new EvaluationError(v);
    return v;
  };
  env.registerType('kubernetes.Semver', { ctor: Version, fields: {} } as never);
  fn('semver(string): kubernetes.Semver', (s: string) => must(parseCharged(s, false)));
  fn('semver(string, bool): kubernetes.Semver', (s: string, n: boolean) => must(parseCharged(s, n)));
  fn('isSemver(string): bool', (s: string) => typeof parseCharged(s, false) !== 'string');
  fn('isSemver(string, bool): bool', (s: string, n: boolean) => typeof parseCharged(s, n) !== 'string');
  fn('kubernetes.Semver.major(): int', (v: Version) => v.major);
  fn('kubernetes.Semver.minor(): int', (v: Version) => v.minor);
  fn('kubernetes.Semver.patch(): int', (v: Version) => v.patch);
  fn('kubernetes.Semver.isGreaterThan(kubernetes.Semver): bool', (a: Version, b: Version) => a.compare(b) === 1);
  fn('kubernetes.Semver.isLessThan(kubernetes.Semver): bool', (a: Version, b: Version) => a.compare(b) === -1);
  fn('kubernetes.Semver.compareTo(kubernetes.Semver): int', (a: Version, b: Version) => BigInt(a.compare(b)));
  env.registerOperator('kubernetes.Semver == kubernetes.Semver', (a: Version, b: Version) => a.compare(b) === 0);
}
