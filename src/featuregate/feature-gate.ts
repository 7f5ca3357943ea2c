// Feature gates with the behaviour and texts of k8s.io/component-base/featuregate: features declared
// with versioned specs (stage and default per version), a gate that emulates a version, values set
// from `--feature-gates=A=true,B=false` (cumulative across calls, as pflag calls Set once per flag),
// AllAlpha/AllBeta, lock-to-default, dependencies, OverrideDefault, and the help and metric text.
//
// Differences from Go that a caller could notice, kept on purpose:
// - Go ranges over maps in random order, so which of several unknown gates an error names is random
//   upstream; here it is the first in the order given.
// - `enabled()` of an unknown feature throws (Go panics) with the same text.
// - `queried()` exposes the features a component checked, which KEP-3920's Feature API reports as
//   that component's uses; upstream keeps the set private.
import type { Logger } from '../golang/klog.js';
import { parseGoBool } from '../golang/strconv.js';
import { Version } from './version.js';

/** The stage of a feature. GA is the empty string, as upstream: it shows so in metrics and help. */
export type PreRelease = 'PRE-ALPHA' | 'ALPHA' | 'BETA' | '' | 'DEPRECATED';
export const PreAlpha: PreRelease = 'PRE-ALPHA';
export const Alpha: PreRelease = 'ALPHA';
export const Beta: PreRelease = 'BETA';
export const GA: PreRelease = '';
export const Deprecated: PreRelease = 'DEPRECATED';

export interface FeatureSpec {
  readonly default: boolean;
  readonly lockToDefault?: boolean;
  readonly preRelease: PreRelease;
  /** The first version this spec holds from (major.minor only); absent for `add`, which uses 0.0. */
  readonly version?: Version;
  /**
   * kplane's addition (KEP-0007): the author says the feature may be turned on and off while the
   * component runs (its code asks `enabled()` each time and keeps no state that depends on the
   * value). Only such a feature, and only when the operator lists it in `--dynamic-features`, may
   * be set through the Feature API's `spec.desired`. Upstream's specs have no such field.
   */
  readonly dynamic?: boolean;
}

/** A feature's specs, oldest first; the one in force is the newest whose version ≤ the emulated version. */
export type VersionedSpecs = readonly FeatureSpec[];

/** One error of several, printed as utilerrors.NewAggregate does: alone as itself, several as `[a, b]`, duplicates once. */
export class AggregateError extends Error {
  constructor(readonly errors: readonly string[]) {
    super(aggregateMessage(errors));
    this.name = 'AggregateError';
  }
}

function aggregateMessage(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';
const V0_0 = Version.majorMinor(0, 0);
const NOT_YET: FeatureSpec = { default: false, preRelease: PreAlpha, version: V0_0 };

function defaultKnown(): Map<string, VersionedSpecs> {
  return new Map<string, VersionedSpecs>([
    [ALL_ALPHA, [{ default: false, preRelease: Alpha, version: V0_0 }]],
    [ALL_BETA, [{ default: false, preRelease: Beta, version: V0_0 }]],
  ]);
}

/** featureSpecAtEmulationVersion: the newest spec not newer than `v`, or "not available yet" (PreAlpha). */
export function specAt(specs: VersionedSpecs, v: Version): FeatureSpec {
  for (let i = specs.length - 1; i >= 0; i--) {
    const s = specs[i]!;
    if (s.version && s.version.greaterThan(v)) continue;
    return s;
  }
  return NOT_YET;
}

function stabilityOrder(p: PreRelease): number {
  switch (p) {
    case Deprecated:
      return 0;
    case PreAlpha:
    case Alpha:
      return 1;
    case Beta:
      return 2;
    case GA:
      return 3;
    default:
      return -1;
  }
}

/** Go's %v of a FeatureSpec, for the "different spec already exists" error. */
function goSpec(s: FeatureSpec): string {
  return `{${s.default} ${s.lockToDefault ?? false} ${s.preRelease} ${s.version ? s.version.toString() : '<nil>'}}`;
}

export interface FeatureGateOptions {
  /** Warnings (setting a GA or deprecated gate) and V(1) lines go here; silent without one. */
  readonly log?: Logger;
}

export class FeatureGate {
  private known: Map<string, VersionedSpecs> = defaultKnown();
  /** Resolved values: explicit ones and those AllAlpha/AllBeta set. */
  private enabledMap = new Map<string, boolean>();
  /** The raw flag values, kept so that a new emulation version can re-resolve them. */
  private enabledRaw = new Map<string, boolean>();
  private deps = new Map<string, string[]>();
  private closedFlag = false;
  private queriedSet = new Set<string>();
  private emulation: Version;
  /** enabled()'s answers, cleared on every change: the hot path is one Map lookup. */
  private cache = new Map<string, boolean>();
  private readonly log: Logger | undefined;
  /** Values set at runtime through the Feature API (`spec.desired` of a dynamic feature): they win over flags. */
  private runtime = new Map<string, boolean>();

  constructor(emulationVersion: Version, opts: FeatureGateOptions = {}) {
    this.emulation = emulationVersion;
    this.log = opts.log;
  }

  /** Enabled(key): the explicit value, else the default at the emulated version. Throws for an unknown feature. */
  enabled(key: string): boolean {
    const v = this.cache.get(key);
    if (v !== undefined) return v;
    // A miss only: a cached key was queried (both are emptied together), so a hit is one lookup.
    const resolved = this.resolve(key, this.enabledMap, this.emulation);
    this.cache.set(key, resolved);
    this.queriedSet.add(key);
    return resolved;
  }

  private resolve(key: string, enabled: ReadonlyMap<string, boolean>, v: Version): boolean {
    const dynamic = this.runtime.get(key);
    if (dynamic !== undefined) return dynamic;
    const explicit = enabled.get(key);
    if (explicit !== undefined) return explicit;
    const specs = this.known.get(key);
    if (specs) return specAt(specs, v).default;
    throw new Error(`feature ${JSON.stringify(key)} is not registered in FeatureGate`);
  }

  /** The features this gate was asked about since it was built (or since the emulated version changed). */
  queried(): ReadonlySet<string> {
    return this.queriedSet;
  }

  /** Set("k1=v1,k2=v2"): cumulative; throws an AggregateError and keeps nothing of this call on error. */
  set(value: string): void {
    const m = new Map<string, boolean>();
    for (const item of value.split(',')) {
      if (item.length === 0) continue;
      const eq = item.indexOf('=');
      const k = (eq < 0 ? item : item.slice(0, eq)).trim();
      if (eq < 0) throw new AggregateError([`missing bool value for ${k}`]);
      const raw = item.slice(eq + 1).trim();
      const b = parseGoBool(raw);
      if (typeof b !== 'boolean') throw new AggregateError([`invalid value of ${k}=${raw}, err: ${b.message}`]);
      m.set(k, b);
    }
    this.setFromMap(m);
  }

  /**
   * SetFromMap: the raw values are merged and kept even when they do not resolve (upstream stores
   * them first, so that a later emulation version can resolve them); the resolved values change
   * only without errors.
   */
  setFromMap(m: ReadonlyMap<string, boolean> | Readonly<Record<string, boolean>>): void {
    const entries: Array<[string, boolean]> =
      m instanceof Map ? [...(m as ReadonlyMap<string, boolean>)] : Object.entries(m as Readonly<Record<string, boolean>>);
    const enabled = new Map(this.enabledMap);
    const raw = new Map(this.enabledRaw);
    for (const [k, v] of entries) raw.set(k, v);
    this.enabledRaw = raw;
    const errs = this.unsafeSetFromMap(enabled, raw, this.emulation, true);
    if (errs.length > 0) throw new AggregateError(errs);
    this.enabledMap = enabled;
    this.cache.clear();
    this.log?.v(1).info(`feature gates: ${this.toString()}`);
  }

  /** Validate(): the raw values re-checked at the emulated version. */
  validate(): string[] {
    return this.unsafeSetFromMap(new Map(), this.enabledRaw, this.emulation, false);
  }

  private unsafeSetFromMap(enabled: Map<string, boolean>, m: ReadonlyMap<string, boolean>, v: Version, warn: boolean): string[] {
    const errs: string[] = [];
    for (const [k, val] of m) {
      const specs = this.known.get(k);
      if (!specs) {
        errs.push(`unrecognized feature gate: ${k}`);
        return errs;
      }
      const spec = specAt(specs, v);
      if (spec.lockToDefault && spec.default !== val) {
        errs.push(`cannot set feature gate ${k} to ${val}, feature is locked to ${spec.default}`);
        continue;
      }
      if (k === ALL_ALPHA || k === ALL_BETA) {
        const stage = k === ALL_ALPHA ? Alpha : Beta;
        for (const [name, s] of this.known) {
          if (name === ALL_ALPHA || name === ALL_BETA) continue;
          if (specAt(s, v).preRelease === stage && !enabled.has(name)) enabled.set(name, val);
        }
        enabled.set(k, val);
        continue;
      }
      if (spec.preRelease === PreAlpha) {
        errs.push(`cannot set feature gate ${k} to ${val}, feature is PreAlpha at emulated version ${v.toString()}`);
        continue;
      }
      enabled.set(k, val);
      if (warn && spec.preRelease === Deprecated) this.log?.(`Setting deprecated feature gate ${k}=${val}. It will be removed in a future release.`);
      else if (warn && spec.preRelease === GA) this.log?.(`Setting GA feature gate ${k}=${val}. It will be removed in a future release.`);
    }
    if (errs.length > 0) return errs;
    for (const [feature, deps] of this.deps) {
      if (!this.resolve(feature, enabled, v)) continue;
      const disabled = deps.filter((d) => !this.resolve(d, enabled, v));
      if (disabled.length > 0) errs.push(`${feature} is enabled, but depends on features that are disabled: [${disabled.join(' ')}]`);
    }
    return errs;
  }

  /** Add: unversioned specs, valid at every version (Version 0.0). */
  add(features: Readonly<Record<string, Omit<FeatureSpec, 'version'>>>): void {
    const vs: Record<string, VersionedSpecs> = {};
    for (const [name, spec] of Object.entries(features)) vs[name] = [{ ...spec, version: V0_0 }];
    this.addVersioned(vs);
  }

  /** AddVersioned, with upstream's checks of a feature's history. */
  addVersioned(features: Readonly<Record<string, VersionedSpecs>>): void {
    if (this.closedFlag) throw new Error('cannot add a feature gate after adding it to the flag set');
    const known = new Map(this.known);
    for (const [name, specs] of Object.entries(features)) {
      const existing = known.get(name);
      if (existing) {
        if (sameSpecs(existing, specs)) continue;
        throw new Error(`feature gate ${JSON.stringify(name)} with different spec already exists: [${existing.map(goSpec).join(' ')}]`);
      }
      let last: Version | undefined;
      let wasBeta = false;
      let wasGA = false;
      let wasDeprecated = false;
      specs.forEach((spec, i) => {
        const ver = spec.version;
        if (!ver) throw new Error(`feature ${JSON.stringify(name)} did not provide a version`);
        if (ver.components() !== 2) throw new Error(`feature ${JSON.stringify(name)} specified patch version: ${ver.toString()}`);
        if (i === 0 && spec.preRelease === Deprecated && ver.minor !== 0)
          throw new Error(`feature ${JSON.stringify(name)} introduced as deprecated must provide a 1.0 entry indicating initial state`);
        if (i > 0 && last) {
          if (!last.lessThan(ver))
            throw new Error(`feature ${JSON.stringify(name)} lists version transitions in non-increasing order (${ver.toString()} <= ${last.toString()})`);
          if (spec.preRelease !== Deprecated && wasDeprecated)
            throw new Error(`deprecated feature ${JSON.stringify(name)} must not resurrect from its terminal state`);
          if ((spec.preRelease === Alpha && (wasBeta || wasGA)) || (spec.preRelease === Beta && wasGA))
            throw new Error(`feature ${JSON.stringify(name)} regresses stability from more stable level to ${spec.preRelease} in ${ver.toString()}`);
        }
        last = ver;
        wasBeta ||= spec.preRelease === Beta;
        wasGA ||= spec.preRelease === GA;
        wasDeprecated ||= spec.preRelease === Deprecated;
      });
      known.set(name, [...specs]);
    }
    this.known = known;
    this.cache.clear();
  }

  /** AddDependencies: `feature` may only be on when each of its dependencies is. */
  addDependencies(features: Readonly<Record<string, readonly string[]>>): void {
    if (this.closedFlag) throw new Error('cannot add a feature gate dependency after adding it to the flag set');
    const merged = new Map<string, string[]>();
    for (const [k, v] of Object.entries(features)) merged.set(k, [...v]);
    for (const [k, v] of this.deps) merged.set(k, [...(merged.get(k) ?? []), ...v]);
    for (const [k, v] of merged) merged.set(k, [...new Set(v)].sort());
    for (const [feature, deps] of merged) {
      const fspecs = this.known.get(feature);
      if (!fspecs) throw new Error(`cannot add dependency for unknown feature ${feature}`);
      for (const dep of deps) {
        const dspecs = this.known.get(dep);
        if (!dspecs) throw new Error(`cannot add dependency from ${feature} to unknown feature ${dep}`);
        for (let i = fspecs.length - 1; i >= 0; i--) {
          const spec = fspecs[i]!;
          const at = spec.version ?? V0_0;
          const depSpec = specAt(dspecs, at);
          if (stabilityOrder(spec.preRelease) > stabilityOrder(depSpec.preRelease))
            throw new Error(`${spec.preRelease} feature ${feature} cannot depend on ${depSpec.preRelease} feature ${dep} at version ${at.toString()}`);
          if (spec.default && !depSpec.default)
            throw new Error(`default-enabled feature ${feature} cannot depend on default-disabled feature ${dep} at version ${at.toString()}`);
          if (spec.lockToDefault && !depSpec.lockToDefault)
            throw new Error(`locked-to-default feature ${feature} cannot depend on unlocked feature ${dep} at version ${at.toString()}`);
        }
      }
    }
    const visited = new Set<string>();
    const finished = new Set<string>();
    const visit = (f: string): void => {
      if (finished.has(f)) return;
      if (visited.has(f)) throw new Error(`cycle detected with feature ${f}`);
      visited.add(f);
      for (const d of merged.get(f) ?? []) visit(d);
      finished.add(f);
    };
    for (const f of merged.keys()) visit(f);
    this.deps = merged;
  }

  dependencies(): ReadonlyMap<string, readonly string[]> {
    return new Map(this.deps);
  }

  overrideDefault(name: string, override: boolean): void {
    this.overrideDefaultAtVersion(name, override, this.emulation);
  }

  /** OverrideDefaultAtVersion: change the registered default of the spec in force at `ver`, before the gate is closed. */
  overrideDefaultAtVersion(name: string, override: boolean, ver: Version): void {
    if (this.closedFlag) throw new Error(`cannot override default for feature ${JSON.stringify(name)}: gates already added to a flag set`);
    const specs = this.known.get(name);
    if (!specs) throw new Error(`cannot override default: feature ${JSON.stringify(name)} is not registered`);
    const spec = specAt(specs, ver);
    if (spec.lockToDefault) throw new Error(`cannot override default: feature ${JSON.stringify(name)} default is locked to ${spec.default}`);
    if (spec.preRelease === PreAlpha)
      throw new Error(`cannot override default: feature ${JSON.stringify(name)} is not available before version ${ver.toString()}`);
    if (spec.preRelease === Deprecated)
      this.log?.(`Overriding default of deprecated feature gate ${name}=${override}. It will be removed in a future release.`);
    else if (spec.preRelease === GA) this.log?.(`Overriding default of GA feature gate ${name}=${override}. It will be removed in a future release.`);
    const i = specs.indexOf(spec);
    const copy = [...specs];
    copy[i] = { ...spec, default: override };
    this.known = new Map(this.known).set(name, copy);
    this.cache.clear();
  }

  /** GetAll: the spec in force for every feature available at the emulated version (PreAlpha left out). */
  getAll(): Map<string, FeatureSpec> {
    const out = new Map<string, FeatureSpec>();
    for (const [k, v] of this.known) {
      const s = specAt(v, this.emulation);
      if (s.preRelease !== PreAlpha) out.set(k, s);
    }
    return out;
  }

  getAllVersioned(): Map<string, VersionedSpecs> {
    return new Map([...this.known].map(([k, v]) => [k, [...v]]));
  }

  emulationVersion(): Version {
    return this.emulation;
  }

  /**
   * SetEmulationVersion: re-resolves the raw values at `v`; warns about features already queried
   * whose value flips; keeps the old state on error.
   */
  setEmulationVersion(v: Version): void {
    if (v.equalTo(this.emulation)) return;
    this.log?.v(1).info(`set feature gate emulationVersion to ${v.toString()}`);
    const enabled = new Map<string, boolean>();
    const errs = this.unsafeSetFromMap(enabled, this.enabledRaw, v, true);
    for (const feature of this.queriedSet) {
      const now = this.resolve(feature, enabled, v);
      const before = this.resolve(feature, this.enabledMap, this.emulation);
      if (now !== before) this.log?.(`SetEmulationVersion will change already queried feature:${feature} from ${before} to ${now}`);
    }
    if (errs.length > 0) throw new AggregateError(errs);
    this.enabledMap = enabled;
    this.emulation = v;
    this.queriedSet = new Set();
    this.cache.clear();
  }

  /** Whether the spec in force marks the feature dynamic (may be turned at runtime); false for an unknown one. */
  isDynamic(name: string): boolean {
    const specs = this.known.get(name);
    if (!specs) return false;
    const s = specAt(specs, this.emulation);
    return s.dynamic === true && s.preRelease !== PreAlpha && !s.lockToDefault;
  }

  /**
   * Turns a dynamic feature on or off while the component runs (`undefined`: back to the flag or
   * default). The value wins over `--feature-gates` until reset. Throws for a feature that is not
   * dynamic (unknown, not marked, locked, or not available at the emulated version).
   */
  setDynamicValue(name: string, value: boolean | undefined): void {
    if (!this.isDynamic(name)) throw new Error(`feature ${JSON.stringify(name)} is not dynamic`);
    if (this.runtime.get(name) === value) return;
    const runtime = new Map(this.runtime);
    if (value === undefined) runtime.delete(name);
    else runtime.set(name, value);
    this.runtime = runtime;
    this.cache.clear();
    this.log?.v(1).info(`feature gate ${name} set at runtime to ${value === undefined ? 'its configured value' : String(value)}`);
  }

  /** The value set with setDynamicValue, if any. */
  dynamicValue(name: string): boolean | undefined {
    return this.runtime.get(name);
  }

  /** ExplicitlySet: whether the value came from a flag or SetFromMap (not a default or AllAlpha/AllBeta). */
  explicitlySet(name: string): boolean {
    return this.enabledRaw.has(name);
  }

  resetFeatureValueToDefault(name: string): void {
    const enabled = new Map(this.enabledMap);
    const raw = new Map(this.enabledRaw);
    const inEnabled = enabled.delete(name);
    const inRaw = raw.delete(name);
    if (inRaw && !inEnabled) throw new Error(`feature:${name} was explicitly set, but not in enabled map`);
    this.enabledMap = enabled;
    this.enabledRaw = raw;
    this.cache.clear();
  }

  /** Close: no more features, dependencies or default overrides (AddFlag closes the gate). */
  close(): void {
    this.closedFlag = true;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /** DeepCopy: the same features, values and closedness; a fresh queried set. */
  deepCopy(): FeatureGate {
    const g = new FeatureGate(this.emulation, this.log ? { log: this.log } : {});
    g.known = this.getAllVersioned();
    g.enabledMap = new Map(this.enabledMap);
    g.enabledRaw = new Map(this.enabledRaw);
    g.deps = new Map([...this.deps].map(([k, v]) => [k, [...v]]));
    g.closedFlag = this.closedFlag;
    g.runtime = new Map(this.runtime);
    return g;
  }

  /** DeepCopyAndReset: the same features (with overridden defaults), no values, open. */
  deepCopyAndReset(): FeatureGate {
    const g = new FeatureGate(this.emulation, this.log ? { log: this.log } : {});
    g.known = this.getAllVersioned();
    return g;
  }

  /** KnownFeatures: `Name=true|false (STAGE - default=x)`, sorted; GA, deprecated and not-yet features hidden. */
  knownFeatures(): string[] {
    const out: string[] = [];
    for (const [k, v] of this.known) {
      if (k === ALL_ALPHA || k === ALL_BETA) {
        out.push(`${k}=true|false (${v[0]!.preRelease} - default=${v[0]!.default})`);
        continue;
      }
      const s = specAt(v, this.emulation);
      if (s.preRelease === GA || s.preRelease === Deprecated || s.preRelease === PreAlpha) continue;
      out.push(`${k}=true|false (${s.preRelease} - default=${s.default})`);
    }
    return out.sort(goStringLess);
  }

  /** The `--feature-gates` help text, as AddFlag registers it (AddFlag also closes the gate: call close()). */
  flagUsage(): string {
    return `A set of key=value pairs that describe feature gates for alpha/experimental features. Options are:\n${this.knownFeatures().join('\n')}`;
  }

  /** String(): the resolved values, `k=v` sorted and comma-joined. */
  toString(): string {
    return [...this.enabledMap]
      .map(([k, v]) => `${k}=${v}`)
      .sort(goStringLess)
      .join(',');
  }
}

/** Go's sort.Strings: byte order (the names are ASCII, so UTF-16 order is the same). */
function goStringLess(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sameSpecs(a: VersionedSpecs, b: VersionedSpecs): boolean {
  if (a.length !== b.length) return false;
  return a.every((s, i) => {
    const t = b[i]!;
    const sv = s.version?.toString();
    const tv = t.version?.toString();
    return (
      s.default === t.default &&
      (s.lockToDefault ?? false) === (t.lockToDefault ?? false) &&
      (s.dynamic ?? false) === (t.dynamic ?? false) &&
      s.preRelease === t.preRelease &&
      sv === tv
    );
  });
}
