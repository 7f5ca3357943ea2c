// OLM's resolver (pkg/controller/registry/resolver/resolver.go) over the contract in types.ts: a
// variable per candidate bundle (catalog/namespace/channel/csv), one per Subscription that requires
// one of its channel's candidates, the installed operators as a virtual catalog, every bundle's
// dependencies as Dependency constraints ordered by OLM's preference (installed operators, then the
// bundle's own catalog, then by priority, then catalogs of the same namespace, then by name; within
// a catalog the default channel first, then package and channel names, each channel head first),
// and at most one operator per package and per provided API. See solver.ts for how it is solved.
import { NotSatisfiable, solve, type Constraint, type Variable } from './solver.js';
import { EXISTING, EntryIndex, gvkProperties, keyString, packageProperties, sameKey, sortChannel, type Entry, type Snapshot } from './entries.js';
import { CelEnvironment, type Predicate, predicateForProperty } from './predicates.js';
import type { CatalogKey, Resolve, ResolveInput, ResolveResult, ResolvedStep, SubscriptionInput } from './types.js';

/** The Subscription condition reasons OLM sets when resolution fails (catalog/operator.go). */
export const REASON_NOT_SATISFIABLE = 'ConstraintsNotSatisfiable';
export const REASON_ERROR = 'ErrorPreventedResolution';

export const bundleId = (e: Entry): string => `${keyString(e.catalog)}/${e.channel}/${e.name}`;

interface BundleVariable extends Variable {
  readonly entry: Entry;
  /** the installed CSV this candidate would replace */
  replaces?: string;
  subscription?: string;
}

/** Errors gathered like k8s.io/apimachinery's NewAggregate. */
function aggregate(errs: readonly Error[]): Error {
  return errs.length === 1 ? errs[0]! : new Error(`[${errs.map((e) => e.message).join(', ')}]`);
}

class Resolution {
  readonly index: EntryIndex;
  readonly variables = new Map<string, Variable>();
  private readonly visited = new Map<Entry, BundleVariable>();
  private readonly cel = new CelEnvironment();
  private readonly predicates = new Map<Entry, Predicate[] | Error>();
  private readonly preferred = new Map<string, Entry[]>();

  constructor(readonly input: ResolveInput) {
    this.index = new EntryIndex(input.namespace, input.catalogs, input.installed);
  }

  run(): ResolveResult {
    const errs: Error[] = [];
    const existing = this.index.snapshots.find((s) => s.virtual)!;
    for (const sub of this.input.subscriptions) {
      const current = existing.entries.filter((e) => sub.installedCSV && e.name === sub.installedCSV);
      for (const e of current) e.subscribed = true;
    }
    // the installed operators first: those no Subscription points at must stay (Mandatory)
    const existingErrs = this.addBundles(this.input.namespace, [...existing.entries]);
    if (existingErrs.length > 0) return { ok: false, reason: REASON_ERROR, message: aggregate(existingErrs).message };
    const subs = new Map<string, BundleVariable[]>();
    for (const sub of this.input.subscriptions) {
      const current = existing.entries.filter((e) => sub.installedCSV && e.name === sub.installedCSV);
      if (current.length > 1) {
        errs.push(
          new Error(`multiple name matches for status.installedCSV of subscription ${sub.namespace}/${sub.name}: ${current.map((e) => e.name).join(', ')}`),
        );
        continue;
      }
      try {
        subs.set(sub.name, this.addSubscription(sub, current[0]));
      } catch (err) {
        errs.push(err as Error);
      }
    }
    this.addInvariants();
    if (errs.length > 0) return { ok: false, reason: REASON_ERROR, message: aggregate(errs).message };

    let chosen: string[];
    try {
      chosen = solve([...this.variables.values()]);
    } catch (err) {
      if (err instanceof NotSatisfiable) return { ok: false, reason: REASON_NOT_SATISFIABLE, message: err.message };
      return { ok: false, reason: REASON_ERROR, message: (err as Error).message };
    }
    return { ok: true, steps: this.steps(new Set(chosen), subs) };
  }

  /** getSubscriptionVariables */
  private addSubscription(sub: SubscriptionInput, current: Entry | undefined): BundleVariable[] {
    const catalog: CatalogKey = { name: sub.source, namespace: sub.sourceNamespace };
    const snapshot = this.index.snapshot(catalog);
    const channel = sub.channel ?? '';
    const startingCSV = current ? '' : (sub.startingCSV ?? '');
    let npkg = 0;
    let nch = 0;
    let ncsv = 0;
    const entries: Entry[] = [];
    // The package's entries come from the index (by packageName, which opm serves from the olm.package
    // property), so the catalog's other bundles are counted, not read.
    const nall = snapshot?.entries.length ?? 0;
    for (const list of snapshot?.channels.get(sub.package)?.values() ?? []) {
      for (const e of list) {
        npkg++;
        if (channel && e.channel !== channel) continue;
        nch++;
        if (startingCSV && e.name !== startingCSV) continue;
        ncsv++;
        entries.push(e);
      }
    }
    const id = `subscription:${sub.name}`;
    const exists: Constraint = { kind: 'mandatory', text: `subscription ${sub.name} exists` };
    let invalid: string | undefined;
    if (nall === 0) invalid = `no operators found from catalog ${sub.source} in namespace ${sub.sourceNamespace} referenced by subscription ${sub.name}`;
    else if (npkg === 0) invalid = `no operators found in package ${sub.package} in the catalog referenced by subscription ${sub.name}`;
    else if (nch === 0) invalid = `no operators found in channel ${channel} of package ${sub.package} in the catalog referenced by subscription ${sub.name}`;
    else if (ncsv === 0)
      invalid = `no operators found with name ${startingCSV} in channel ${channel} of package ${sub.package} in the catalog referenced by subscription ${sub.name}`;
    if (invalid !== undefined) {
      this.variables.set(id, { id, constraints: [exists, { kind: 'prohibited', text: invalid }] });
      return [];
    }

    // the default channel's entries first, then by channel name; each channel head first
    const byChannel = new Map<string, Entry[]>();
    for (const e of entries) {
      const l = byChannel.get(e.channel);
      if (l) l.push(e);
      else byChannel.set(e.channel, [e]);
    }
    const channels = [...byChannel.entries()].sort(([a, ea], [b, eb]) => {
      const da = ea[0]!.defaultChannel;
      const db = eb[0]!.defaultChannel;
      if (da !== db) return da ? -1 : 1;
      return a < b ? -1 : a > b ? 1 : 0;
    });
    const sorted: Entry[] = [];
    for (const [name, list] of channels) {
      const whole = snapshot!.channels.get(list[0]!.package)?.get(name);
      // a whole channel is sorted once; a part of one (startingCSV) on its own, as OLM sorts what its query found
      sorted.push(...(whole && whole.length === list.length ? this.index.sortedChannel(whole) : sortChannel(list)));
    }
    // an installed operator is replaced only along the upgrade graph: skipRange, replaces or skips
    const upgrades = current
      ? sorted.filter(
          (e) =>
            (current.version !== undefined && e.skipRange !== undefined && e.skipRange(current.version)) ||
            e.replaces === current.name ||
            e.skips.includes(current.name),
        )
      : sorted;

    const candidates: BundleVariable[] = [];
    const seen = new Set<string>();
    for (const o of upgrades) {
      const same = entries.filter((e) => e.name === o.name);
      const errs = this.addBundles(sub.namespace, [...same]);
      if (errs.length > 0) throw aggregate(errs);
      for (const e of same) {
        const v = this.visited.get(e)!;
        if (seen.has(v.id)) continue;
        seen.add(v.id);
        candidates.push(v);
      }
    }
    const deps: string[] = [];
    const currentId = current ? bundleId(current) : undefined;
    for (const c of candidates) {
      c.subscription ??= sub.name;
      if (current) {
        c.replaces = current.name;
        c.constraints.push({ kind: 'conflict', id: currentId! });
      }
      deps.push(c.id);
    }
    if (currentId) deps.push(currentId);
    const constraints: Constraint[] = [exists];
    if (deps.length === 0) {
      constraints.push({ kind: 'dependency', ids: [], text: `no operators found matching the criteria of subscription ${sub.name}` });
    } else {
      const req = deps.length === 1 ? deps[0]! : `at least one of ${deps.slice(0, -1).join(', ')} or ${deps[deps.length - 1]!}`;
      constraints.push({ kind: 'dependency', ids: deps, text: `subscription ${sub.name} requires ${req}` });
    }
    this.variables.set(id, { id, constraints });
    return candidates;
  }

  /** getBundleVariables: the entries and, transitively, every bundle that can satisfy their dependencies. */
  private addBundles(preferredNamespace: string, stack: Entry[]): Error[] {
    const local: Error[] = [];
    while (stack.length > 0) {
      const bundle = stack.pop()!;
      if (this.visited.has(bundle)) continue;
      const v = this.bundleVariable(bundle);
      this.visited.set(bundle, v);
      this.variables.set(v.id, v);
      let preds: Predicate[];
      try {
        preds = this.dependencyPredicates(bundle);
      } catch (err) {
        local.push(err as Error);
        continue;
      }
      for (const d of preds) {
        let providers: Entry[];
        try {
          providers = this.findPreferred(bundle.catalog, preferredNamespace, d);
        } catch (err) {
          local.push(err as Error);
          continue;
        }
        const ids: string[] = [];
        for (const p of providers) {
          const pv = this.visited.get(p) ?? this.bundleVariable(p);
          if (!this.variables.has(pv.id)) this.variables.set(pv.id, pv);
          ids.push(pv.id);
          if (!this.visited.has(p)) stack.push(p);
        }
        v.constraints.push({ kind: 'dependency', ids, text: `bundle ${bundle.name} requires an operator ${d.toString()}` });
      }
    }
    return local;
  }

  /** newBundleVariableFromEntry: one variable per entry, whoever asks for it first. */
  private bundleVariable(e: Entry): BundleVariable {
    const existing = this.visited.get(e) ?? (this.variables.get(bundleId(e)) as BundleVariable | undefined);
    if (existing) return existing;
    const id = bundleId(e);
    const constraints: Constraint[] = [];
    if (e.virtual && !e.subscribed) {
      constraints.push({ kind: 'mandatory', text: `clusterserviceversion ${e.name} exists and is not referenced by a subscription` });
    }
    if (e.properties.some((p) => p.type === 'olm.deprecated')) {
      constraints.push({ kind: 'prohibited', text: `bundle ${id} is deprecated` });
    }
    return { id, constraints, entry: e };
  }

  /** convertDependencyProperties, once per entry; an error names the bundle. */
  private dependencyPredicates(e: Entry): Predicate[] {
    let p = this.predicates.get(e);
    if (!p) {
      try {
        p = [];
        if (e.propertiesError) throw e.propertiesError;
        for (const prop of e.properties) {
          const d = predicateForProperty(prop, this.cel);
          if (d) p.push(d);
        }
      } catch (err) {
        p = new Error(`bundle ${e.name}: ${(err as Error).message}`);
      }
      this.predicates.set(e, p);
    }
    if (p instanceof Error) throw p;
    return p;
  }

  /**
   * The entries satisfying d, in OLM's order of preference: every (catalog, package, channel) that
   * holds a match, ordered as FindPreferred orders catalogs and sortBundles orders channels, each
   * channel along its replaces chain; then only the matches are kept.
   */
  private findPreferred(preferred: CatalogKey, preferredNamespace: string, d: Predicate): Entry[] {
    const cacheKey = `${keyString(preferred)}\0${preferredNamespace}\0${d.key}`;
    const cached = this.preferred.get(cacheKey);
    if (cached) return cached;
    const pool = d.narrow ? d.narrow(this.index) : this.index.all;
    const sources = new Set<Entry[] | Entry>();
    for (const e of pool) {
      if (!d.test(e)) continue;
      if (e.virtual) sources.add(e);
      else sources.add(this.index.snapshot(e.catalog)!.channels.get(e.package)!.get(e.channel)!);
    }
    const out: Entry[] = [];
    if (sources.size > 0) {
      for (const snap of this.orderedSnapshots(preferred, preferredNamespace)) {
        const groups: Entry[][] = [];
        if (snap.virtual) {
          for (const e of snap.entries) if (sources.has(e)) groups.push([e]);
        } else {
          for (const chs of snap.channels.values()) for (const list of chs.values()) if (sources.has(list)) groups.push(list);
        }
        groups.sort((a, b) => {
          const ea = a[0]!;
          const eb = b[0]!;
          if (ea.defaultChannel !== eb.defaultChannel) return ea.defaultChannel ? -1 : 1;
          if (ea.package !== eb.package) return ea.package < eb.package ? -1 : 1;
          return ea.channel < eb.channel ? -1 : ea.channel > eb.channel ? 1 : 0;
        });
        for (const g of groups) for (const e of g.length === 1 ? g : this.index.sortedChannel(g)) if (d.test(e)) out.push(e);
      }
    }
    this.preferred.set(cacheKey, out);
    return out;
  }

  /** cache.sortableSnapshots: installed operators, the preferred catalog, priority, namespace, name. */
  private orderedSnapshots(preferred: CatalogKey, preferredNamespace: string): Snapshot[] {
    const rank = (s: Snapshot): number => (s.virtual && s.key.namespace === preferredNamespace ? 0 : sameKey(s.key, preferred) ? 1 : 2);
    return [...this.index.snapshots].sort((a, b) => {
      const ra = rank(a);
      const rb = rank(b);
      if (ra !== rb) return ra - rb;
      if (ra < 2) return 0;
      if (a.priority !== b.priority) return b.priority - a.priority;
      if (a.key.namespace !== b.key.namespace) {
        if (a.key.namespace === preferredNamespace) return -1;
        if (b.key.namespace === preferredNamespace) return 1;
      }
      return a.key.name < b.key.name ? -1 : a.key.name > b.key.name ? 1 : 0;
    });
  }

  /** addInvariants: at most one operator per provided API and per package in the namespace. */
  private addInvariants(): void {
    const gvks = new Map<string, { g: { group: string; version: string; kind: string }; ids: string[] }>();
    const pkgs = new Map<string, string[]>();
    for (const v of this.variables.values()) {
      const e = (v as BundleVariable).entry;
      if (!e) continue;
      for (const g of gvkProperties(e)) {
        const k = `${g.group}\0${g.version}\0${g.kind}`;
        const slot = gvks.get(k);
        if (slot) slot.ids.push(v.id);
        else gvks.set(k, { g, ids: [v.id] });
      }
      for (const p of packageProperties(e)) {
        const l = pkgs.get(p.packageName);
        if (l) l.push(v.id);
        else pkgs.set(p.packageName, [v.id]);
      }
    }
    const list = (ids: string[]): string => `${ids.slice(0, -1).join(', ')} and ${ids[ids.length - 1]!}`;
    for (const { g, ids } of gvks.values()) {
      const uniq = [...new Set(ids)].sort(goCompare);
      if (uniq.length <= 1) continue;
      const gvk = `${g.kind} (${g.group}/${g.version})`;
      this.addGeneric(gvk, [
        { kind: 'mandatory', text: `there can be only one provider of ${gvk}` },
        { kind: 'atMost', n: 1, ids: uniq, text: `${list(uniq)} provide ${gvk}` },
      ]);
    }
    for (const [pkg, ids] of pkgs) {
      const uniq = [...new Set(ids)].sort(goCompare);
      if (uniq.length <= 1) continue;
      this.addGeneric(pkg, [
        { kind: 'mandatory', text: `there can be only one operator from package ${pkg}` },
        { kind: 'atMost', n: 1, ids: uniq, text: `${list(uniq)} originate from package ${pkg}` },
      ]);
    }
  }

  private addGeneric(id: string, constraints: Constraint[]): void {
    // an identifier taken by a bundle or a Subscription keeps its place; the invariant gets a suffix
    let key = id;
    while (this.variables.has(key)) key += "'";
    this.variables.set(key, { id: key, constraints });
  }

  /** The chosen bundles that are new, dependencies before what needs them. */
  private steps(chosen: Set<string>, subs: Map<string, BundleVariable[]>): ResolvedStep[] {
    const picked: BundleVariable[] = [];
    for (const id of chosen) {
      const v = this.variables.get(id) as BundleVariable | undefined;
      if (v?.entry && !v.entry.virtual) picked.push(v);
    }
    // Subscriptions' bundles in Subscription order, then dependencies by name
    const order = new Map<string, number>();
    let i = 0;
    for (const cands of subs.values()) for (const c of cands) if (!order.has(c.id)) order.set(c.id, i++);
    picked.sort((a, b) => (order.get(a.id) ?? Infinity) - (order.get(b.id) ?? Infinity) || goCompare(a.id, b.id));
    const out: ResolvedStep[] = [];
    const done = new Set<string>();
    const onPath = new Set<string>();
    const visit = (v: BundleVariable): void => {
      if (done.has(v.id) || onPath.has(v.id)) return; // a cycle: its members in any order
      onPath.add(v.id);
      for (const c of v.constraints) {
        if (c.kind !== 'dependency') continue;
        for (const d of c.ids) {
          if (!chosen.has(d)) continue;
          const dv = this.variables.get(d) as BundleVariable | undefined;
          if (dv?.entry && !dv.entry.virtual) visit(dv);
        }
      }
      onPath.delete(v.id);
      done.add(v.id);
      const step: ResolvedStep = { bundle: v.entry.bundle!, catalog: { ...v.entry.catalog } };
      if (v.subscription !== undefined) step.subscription = v.subscription;
      if (v.replaces !== undefined) step.replaces = v.replaces;
      out.push(step);
    };
    for (const v of picked) visit(v);
    return out;
  }
}

const goCompare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** OLM's resolution of a namespace's Subscriptions (see the file comment). */
export const resolve: Resolve = (input) => {
  try {
    return new Resolution(input).run();
  } catch (err) {
    return { ok: false, reason: REASON_ERROR, message: (err as Error).message };
  }
};

export { EXISTING };
