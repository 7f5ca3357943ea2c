// Semantic versions as github.com/blang/semver/v4 (v4.0.0) parses, orders, prints and matches them.
// opm uses this library for bundle versions (olm.package), channel ordering in the semver template and
// `skipRange` in validation, so every quirk matters: the error texts, the uint64 range of numbers,
// build metadata ignored by compare, and ParseRange's tokenizer (which drops one-byte tokens and keeps
// an operator glued to the version after it). Numbers are bigint because blang's are uint64.
import { goAtoi, goQuote, NumError, parseGoUint } from './strconv.js';
import { goSplitN, goTrimSpace } from './strings.js';

export class SemverError extends Error {
  override readonly name = 'SemverError';
}

/** One dot-separated pre-release identifier: numeric (compared as a number) or alphanumeric. */
export interface PRVersion {
  readonly versionStr: string;
  readonly versionNum: bigint;
  readonly isNum: boolean;
}

const NUMBERS = '0123456789';
const ALPHAS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-';
const ALPHANUM = ALPHAS + NUMBERS;

export class Version {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: readonly PRVersion[] = [],
    /** no precedence: ignored by compare */
    readonly build: readonly string[] = [],
  ) {}

  toString(): string {
    let s = `${this.major}.${this.minor}.${this.patch}`;
    if (this.pre.length > 0) s += '-' + this.pre.map(prString).join('.');
    if (this.build.length > 0) s += '+' + this.build.join('.');
    return s;
  }

  /** major.minor.patch only (blang's FinalizeVersion method). */
  finalizeVersion(): string {
    return `${this.major}.${this.minor}.${this.patch}`;
  }

  /** -1, 0 or 1; build metadata is ignored. */
  compare(o: Version): -1 | 0 | 1 {
    if (this.major !== o.major) return this.major > o.major ? 1 : -1;
    if (this.minor !== o.minor) return this.minor > o.minor ? 1 : -1;
    if (this.patch !== o.patch) return this.patch > o.patch ? 1 : -1;
    // a version without pre-release identifiers is greater than one with them
    if (this.pre.length === 0 && o.pre.length === 0) return 0;
    if (this.pre.length === 0) return 1;
    if (o.pre.length === 0) return -1;
    let i = 0;
    for (; i < this.pre.length && i < o.pre.length; i++) {
      const c = comparePR(this.pre[i]!, o.pre[i]!);
      if (c !== 0) return c;
    }
    // all shared identifiers equal: the one with more identifiers is greater
    if (i === this.pre.length && i === o.pre.length) return 0;
    return i === this.pre.length ? -1 : 1;
  }

  eq(o: Version): boolean {
    return this.compare(o) === 0;
  }
  ne(o: Version): boolean {
    return this.compare(o) !== 0;
  }
  gt(o: Version): boolean {
    return this.compare(o) === 1;
  }
  gte(o: Version): boolean {
    return this.compare(o) >= 0;
  }
  lt(o: Version): boolean {
    return this.compare(o) === -1;
  }
  lte(o: Version): boolean {
    return this.compare(o) <= 0;
  }

  /** A copy without build metadata. */
  withoutBuild(): Version {
    return new Version(this.major, this.minor, this.patch, this.pre, []);
  }

  /** blang's Validate: re-checks identifiers of a hand-built Version. */
  validate(): void {
    for (const p of this.pre) {
      if (!p.isNum) {
        if (p.versionStr.length === 0) throw new SemverError(`Prerelease can not be empty ${goQuote(p.versionStr)}`);
        if (!containsOnly(p.versionStr, ALPHANUM)) throw new SemverError(`Invalid character(s) found in prerelease ${goQuote(p.versionStr)}`);
      }
    }
    for (const b of this.build) {
      if (b.length === 0) throw new SemverError(`Build meta data can not be empty ${goQuote(b)}`);
      if (!containsOnly(b, ALPHANUM)) throw new SemverError(`Invalid character(s) found in build meta data ${goQuote(b)}`);
    }
  }
}

function prString(p: PRVersion): string {
  return p.isNum ? p.versionNum.toString() : p.versionStr;
}

/** Numeric identifiers sort before alphanumeric ones; alphanumerics compare by bytes (ASCII here). */
export function comparePR(a: PRVersion, b: PRVersion): -1 | 0 | 1 {
  if (a.isNum && !b.isNum) return -1;
  if (!a.isNum && b.isNum) return 1;
  if (a.isNum && b.isNum) return a.versionNum === b.versionNum ? 0 : a.versionNum > b.versionNum ? 1 : -1;
  return a.versionStr === b.versionStr ? 0 : a.versionStr > b.versionStr ? 1 : -1;
}

/** Parses a strict semver 2.0.0 version (no "v" prefix, no leading zeroes, all three numbers). */
export function parse(s: string): Version {
  if (s.length === 0) throw new SemverError('Version string empty');
  const parts = goSplitN(s, '.', 3);
  if (parts.length !== 3) throw new SemverError('No Major.Minor.Patch elements found');
  const [majorStr, minorStr] = parts as [string, string, string];

  if (!containsOnly(majorStr, NUMBERS)) throw new SemverError(`Invalid character(s) found in major number ${goQuote(majorStr)}`);
  if (hasLeadingZeroes(majorStr)) throw new SemverError(`Major number must not contain leading zeroes ${goQuote(majorStr)}`);
  const major = parseUint(majorStr);
  if (!containsOnly(minorStr, NUMBERS)) throw new SemverError(`Invalid character(s) found in minor number ${goQuote(minorStr)}`);
  if (hasLeadingZeroes(minorStr)) throw new SemverError(`Minor number must not contain leading zeroes ${goQuote(minorStr)}`);
  const minor = parseUint(minorStr);

  let patchStr = parts[2]!;
  let build: string[] = [];
  let prerelease: string[] = [];
  const plus = patchStr.indexOf('+');
  if (plus !== -1) {
    build = patchStr.slice(plus + 1).split('.');
    patchStr = patchStr.slice(0, plus);
  }
  const dash = patchStr.indexOf('-');
  if (dash !== -1) {
    prerelease = patchStr.slice(dash + 1).split('.');
    patchStr = patchStr.slice(0, dash);
  }
  if (!containsOnly(patchStr, NUMBERS)) throw new SemverError(`Invalid character(s) found in patch number ${goQuote(patchStr)}`);
  if (hasLeadingZeroes(patchStr)) throw new SemverError(`Patch number must not contain leading zeroes ${goQuote(patchStr)}`);
  const patch = parseUint(patchStr);

  const pre = prerelease.map(newPRVersion);
  for (const b of build) {
    if (b.length === 0) throw new SemverError('Build meta data is empty');
    if (!containsOnly(b, ALPHANUM)) throw new SemverError(`Invalid character(s) found in build meta data ${goQuote(b)}`);
  }
  return new Version(major, minor, patch, pre, build);
}

/** parse, or throw with blang's MustParse message. */
export function mustParse(s: string): Version {
  try {
    return parse(s);
  } catch (err) {
    throw new SemverError(`semver: Parse(${s}): ${(err as Error).message}`);
  }
}

/**
 * Accepts what people write: surrounding spaces, a "v" prefix, leading zeroes, and "1" or "1.2"
 * (filled up with zeroes, but then without pre-release or build parts).
 */
export function parseTolerant(input: string): Version {
  let s = goTrimSpace(input);
  if (s.startsWith('v')) s = s.slice(1);
  const parts = goSplitN(s, '.', 3).map((p) => {
    // blang checks the byte length, so a single multi-byte character is also "trimmed"
    if (Buffer.byteLength(p) <= 1) return p;
    let t = p.replace(/^0+/, '');
    if (t.length === 0 || !NUMBERS.includes(t[0]!)) t = '0' + t;
    return t;
  });
  if (parts.length < 3) {
    if (/[+-]/.test(parts[parts.length - 1]!)) throw new SemverError('Short version cannot contain PreRelease/Build meta data');
    while (parts.length < 3) parts.push('0');
  }
  return parse(parts.join('.'));
}

export function newPRVersion(s: string): PRVersion {
  if (s.length === 0) throw new SemverError('Prerelease is empty');
  if (containsOnly(s, NUMBERS)) {
    if (hasLeadingZeroes(s)) throw new SemverError(`Numeric PreRelease version must not contain leading zeroes ${goQuote(s)}`);
    return { versionStr: '', versionNum: parseUint(s), isNum: true };
  }
  if (containsOnly(s, ALPHANUM)) return { versionStr: s, versionNum: 0n, isNum: false };
  throw new SemverError(`Invalid character(s) found in prerelease ${goQuote(s)}`);
}

export function newBuildVersion(s: string): string {
  if (s.length === 0) throw new SemverError('Buildversion is empty');
  if (!containsOnly(s, ALPHANUM)) throw new SemverError(`Invalid character(s) found in build meta data ${goQuote(s)}`);
  return s;
}

/** major.minor.patch of a version string (blang's FinalizeVersion function). */
export function finalizeVersion(s: string): string {
  return parse(s).finalizeVersion();
}

/** Sorts in place, ascending (blang's Sort). */
export function sortVersions(vs: Version[]): Version[] {
  return vs.sort((a, b) => a.compare(b));
}

// ---- ranges ------------------------------------------------------------------------------------

/** A predicate over versions, as blang's Range. */
export type Range = (v: Version) => boolean;

type Comparator = (v: Version, ref: Version) => boolean;

function parseComparator(op: string): Comparator | undefined {
  switch (op) {
    case '':
    case '=':
    case '==':
      return (v, r) => v.compare(r) === 0;
    case '>':
      return (v, r) => v.compare(r) === 1;
    case '>=':
      return (v, r) => v.compare(r) >= 0;
    case '<':
      return (v, r) => v.compare(r) === -1;
    case '<=':
      return (v, r) => v.compare(r) <= 0;
    case '!':
    case '!=':
      return (v, r) => v.compare(r) !== 0;
    default:
      return undefined;
  }
}

/**
 * Parses a range such as ">=1.0.0 <2.0.0 || >3.0.0 !3.1.0" or "1.2.x": space-separated comparators
 * are ANDed, `||` ORs the groups (AND binds tighter), and "x" wildcards are expanded first.
 */
export function parseRange(s: string): Range {
  const parts = splitAndTrim(s);
  const orParts = splitORParts(parts);
  const expanded = expandWildcardVersion(orParts);
  let orFn: Range | undefined;
  for (const group of expanded) {
    let andFn: Range | undefined;
    for (const ap of group) {
      const [op, vStr] = splitComparatorVersion(ap);
      let rf: Range;
      try {
        rf = buildVersionRange(op, vStr);
      } catch (err) {
        throw new SemverError(`Could not parse Range ${goQuote(ap)}: ${(err as Error).message}`);
      }
      const prev = andFn;
      andFn = prev === undefined ? rf : (v) => prev(v) && rf(v);
    }
    // An empty group ("a || || b") is a nil Range in blang, which panics when reached; here it
    // matches nothing, which gives the same answer whenever blang gives one.
    const g: Range = andFn ?? (() => false);
    const prev = orFn;
    orFn = prev === undefined ? g : (v) => prev(v) || g(v);
  }
  return orFn ?? (() => false);
}

export function mustParseRange(s: string): Range {
  try {
    return parseRange(s);
  } catch (err) {
    throw new SemverError(`semver: ParseRange(${s}): ${(err as Error).message}`);
  }
}

function buildVersionRange(op: string, vStr: string): Range {
  const c = parseComparator(op);
  if (c === undefined) throw new SemverError(`Could not parse comparator ${goQuote(op)} in ${goQuote(op + vStr)}`);
  let ref: Version;
  try {
    ref = parse(vStr);
  } catch (err) {
    throw new SemverError(`Could not parse version ${goQuote(vStr)} in ${goQuote(op + vStr)}: ${(err as Error).message}`);
  }
  return (v) => c(v, ref);
}

/** Exported for tests: blang's splitORParts. */
export function splitORParts(parts: string[]): string[][] {
  const out: string[][] = [];
  let last = 0;
  for (let i = 0; i < parts.length; i++) {
    if (parts[i] === '||') {
      if (i === 0) throw new SemverError("First element in range is '||'");
      out.push(parts.slice(last, i));
      last = i + 1;
    }
  }
  if (last === parts.length) throw new SemverError("Last element in range is '||'");
  out.push(parts.slice(last));
  return out;
}

/**
 * Exported for tests: blang's splitAndTrim, on bytes as Go does. A space after '>', '<' or '='
 * does not split; a token is only kept when it is at least two bytes long (so "1 || 2" loses
 * both numbers), and spaces inside a kept token are removed.
 */
export function splitAndTrim(s: string): string[] {
  const b = Buffer.from(s, 'utf8');
  const SPACE = 0x20;
  const glue = new Set([0x3e, 0x3c, 0x3d]); // > < =
  const out: string[] = [];
  let last = 0;
  let lastChar = 0;
  for (let i = 0; i < b.length; i++) {
    if (b[i] === SPACE && !glue.has(lastChar)) {
      if (last < i - 1) out.push(b.subarray(last, i).toString('utf8'));
      last = i + 1;
    } else if (b[i] !== SPACE) {
      lastChar = b[i]!;
    }
  }
  if (last < b.length - 1) out.push(b.subarray(last).toString('utf8'));
  return out.map((t) => t.replaceAll(' ', ''));
}

/** Exported for tests: operator and version, split at the first digit. */
export function splitComparatorVersion(s: string): [string, string] {
  const m = /\p{Nd}/u.exec(s);
  if (m === null) throw new SemverError(`Could not get version from string: ${goQuote(s)}`);
  return [goTrimSpace(s.slice(0, m.index)), s.slice(m.index)];
}

const enum Wildcard {
  None = 0,
  Major = 1,
  Minor = 2,
  Patch = 3,
}

function getWildcardType(vStr: string): Wildcard {
  const parts = vStr.split('.');
  if (parts[parts.length - 1] !== 'x') return Wildcard.None;
  return parts.length >= 1 && parts.length <= 3 ? parts.length : Wildcard.None;
}

function createVersionFromWildcard(vStr: string): string {
  const v = vStr.replace('.x.x', '.x').replace('.x', '.0');
  return v.split('.').length === 2 ? v + '.0' : v;
}

/** Go's strconv.Atoi; undefined when it fails. */
function atoi(s: string): bigint | undefined {
  const n = goAtoi(s);
  return n instanceof NumError ? undefined : n;
}

function incrementPart(vStr: string, idx: number): string {
  const parts = vStr.split('.');
  const n = idx < parts.length ? atoi(parts[idx]!) : undefined;
  if (n === undefined) return ''; // blang ignores the error and uses ""
  parts[idx] = (n + 1n).toString();
  return parts.join('.');
}

/** Exported for tests: blang's expandWildcardVersion ("x" wildcards into plain comparators). */
export function expandWildcardVersion(parts: string[][]): string[][] {
  const out: string[][] = [];
  for (const group of parts) {
    const next: string[] = [];
    for (let ap of group) {
      if (ap.includes('x')) {
        const [op, vStr] = splitComparatorVersion(ap);
        const kind = getWildcardType(vStr);
        const flat = createVersionFromWildcard(vStr);
        let resultOp = '';
        let increment = false;
        switch (op) {
          case '>':
            resultOp = '>=';
            increment = true;
            break;
          case '>=':
            resultOp = '>=';
            break;
          case '<':
            resultOp = '<';
            break;
          case '<=':
            resultOp = '<';
            increment = true;
            break;
          case '':
          case '=':
          case '==':
            next.push('>=' + flat);
            resultOp = '<';
            increment = true;
            break;
          case '!=':
          case '!':
            next.push('<' + flat);
            resultOp = '>=';
            increment = true;
            break;
          default:
            // blang drops an unknown operator here, leaving the bare (equality) version
            break;
        }
        let resultVersion = '';
        if (increment) {
          if (kind === Wildcard.Patch) resultVersion = incrementPart(flat, 1);
          else if (kind === Wildcard.Minor) resultVersion = incrementPart(flat, 0);
        } else {
          resultVersion = flat;
        }
        ap = resultOp + resultVersion;
      }
      next.push(ap);
    }
    out.push(next);
  }
  return out;
}

// ---- Go compatibility helpers --------------------------------------------------------------------

function containsOnly(s: string, set: string): boolean {
  for (const ch of s) if (!set.includes(ch)) return false;
  return true;
}

function hasLeadingZeroes(s: string): boolean {
  return s.length > 1 && s[0] === '0';
}

/** strconv.ParseUint(s, 10, 64), its error as a SemverError. */
function parseUint(s: string): bigint {
  const n = parseGoUint(s, 10, 64);
  if (n instanceof NumError) throw new SemverError(n.message);
  return n;
}
