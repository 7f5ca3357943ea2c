// The install flow (issue 27): OLM's catalog operator and olm operator for one control plane.
// Watches Subscriptions, InstallPlans, ClusterServiceVersions, OperatorGroups, CatalogSources and
// CRDs; every change marks its namespace (a change in the global catalog namespace, to a CRD, or
// of a catalog's packages marks every namespace with Subscriptions) and one worker syncs the marked
// namespaces one at a time: Subscriptions (resolve → InstallPlan, status), InstallPlans (execute),
// CSVs (phases). Every sync reads the state from the API server, so a restart resumes where the
// last one stopped.
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../../client/types.js';
import type { ApiBundle } from '../../api/api.js';
import type { RegistryClient } from '../registry-client.js';
import type { CatalogKey, CatalogSnapshot, InstalledOperator, Resolve, ResolvedStep, ResolveResult, SubscriptionInput } from '../resolver/types.js';
import { CsvSync } from './csv.js';
import { InstallPlanExecutor, type ExecutorOptions, type SchemaValidator } from './executor.js';
import { COPIED_LABEL, isCopied, OPERATOR_NAMESPACE_ANNOTATION, syncCopies, targetNamespaces, writeGroupStatus } from './operatorgroup.js';
import {
  arr,
  CATALOG_SOURCES,
  carryTransitions,
  CLUSTER_ROLE_BINDINGS,
  CLUSTER_ROLES,
  CRDS,
  CSVS,
  INSTALL_PLANS,
  now,
  obj,
  OPERATOR_GROUPS,
  OPERATORS_V1ALPHA1,
  sameStatus,
  specOf,
  statusOf,
  str,
  SUBSCRIPTIONS,
  type Condition,
  type Json,
} from './shared.js';
import { planSteps } from './steps.js';

/** What the install flow needs of the CatalogSource controller. */
export interface CatalogAccess {
  /** The registry client of a READY catalog (undefined when it is not connected). */
  registryClient(namespace: string, name: string): RegistryClient | undefined;
  /** The catalog's packages' default channels, from its cached PackageManifests. */
  defaultChannels(namespace: string, name: string): Record<string, string>;
}

export interface InstallControllerOptions {
  readonly resolve: Resolve;
  /**
   * `resolve` answers from its input alone (the built-in resolver): the same question asked again
   * is answered from the last answer, without solving.
   */
  readonly resolveIsPure?: boolean;
  readonly catalogs: CatalogAccess;
  readonly globalCatalogNamespace: string;
  readonly log?: (msg: string) => void;
  readonly validateAgainstSchema?: SchemaValidator;
  /** Every namespace with Subscriptions is synced again this often (default 60 s). */
  readonly resyncMs?: number;
  readonly rewatchMs?: number;
  /** See ExecutorOptions.beforeStep. */
  readonly beforeStep?: ExecutorOptions['beforeStep'];
}

const NAMESPACES: GVR = { group: '', version: 'v1', resource: 'namespaces' };
const WATCHED: readonly GVR[] = [SUBSCRIPTIONS, INSTALL_PLANS, CSVS, OPERATOR_GROUPS, CATALOG_SOURCES, CRDS, NAMESPACES];

const IN_FLIGHT = new Set(['', 'RequiresApproval', 'Installing']);

export class InstallController {
  private readonly abort = new AbortController();
  private readonly dirty = new Set<string>();
  /** Namespaces with Subscriptions, InstallPlans or CSVs. */
  private readonly known = new Set<string>();
  private wake: (() => void) | undefined;
  private readonly loops: Promise<void>[] = [];
  private readonly bundles = new Map<string, Promise<ApiBundle[]>>();
  private readonly csvSync: CsvSync;
  private readonly executor: InstallPlanExecutor;
  private readonly log: (msg: string) => void;
  private resync: NodeJS.Timeout | undefined;
  /** Each namespace's last resolution and what it was asked. */
  private readonly answers = new Map<string, { question: string; result: ResolveResult }>();
  /** An id per bundle list read from a catalog (a new read is a new list). */
  private readonly bundleIds = new WeakMap<ApiBundle[], number>();
  private nextBundlesId = 0;

  constructor(
    private readonly client: KubeClient,
    private readonly opts: InstallControllerOptions,
  ) {
    this.log = opts.log ?? (() => {});
    this.csvSync = new CsvSync(client);
    this.executor = new InstallPlanExecutor(client, {
      ...(opts.validateAgainstSchema ? { validateAgainstSchema: opts.validateAgainstSchema } : {}),
      ...(opts.beforeStep ? { beforeStep: opts.beforeStep } : {}),
    });
  }

  start(): void {
    if (this.loops.length) return;
    for (const gvr of WATCHED) this.loops.push(this.watch(gvr));
    this.loops.push(this.work());
    this.resync = setInterval(() => this.markAll(), this.opts.resyncMs ?? 60_000);
    this.resync.unref();
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.resync) clearInterval(this.resync);
    this.wake?.();
    await Promise.all(this.loops.map((l) => l.catch(() => {})));
  }

  /** A catalog's packages changed (the CatalogSource controller refreshed it): resolve everything again. */
  packagesChanged(): void {
    this.bundles.clear();
    this.markAll();
  }

  private mark(ns: string): void {
    this.dirty.add(ns);
    this.wake?.();
  }

  private markAll(): void {
    for (const ns of this.known) this.dirty.add(ns);
    this.wake?.();
  }

  private async watch(gvr: GVR): Promise<void> {
    const signal = this.abort.signal;
    const onEvent = (type: string, o: KubeObject): void => {
      const ns = o.metadata?.namespace ?? '';
      // A namespace that comes or goes may be a target of a group (copied CSVs, selectors).
      if (gvr === NAMESPACES) return this.markAll();
      // A copy's change or deletion is settled by its parent's namespace.
      if (gvr === CSVS && isCopied(o)) return this.mark(o.metadata?.annotations?.[OPERATOR_NAMESPACE_ANNOTATION] ?? o.metadata?.labels?.[COPIED_LABEL] ?? ns);
      if (gvr === CRDS || gvr === CATALOG_SOURCES) {
        if (gvr === CATALOG_SOURCES) this.bundles.delete(`${ns}/${o.metadata?.name ?? ''}`);
        if (gvr === CRDS || ns === this.opts.globalCatalogNamespace) return this.markAll();
        return this.mark(ns);
      }
      if (gvr === SUBSCRIPTIONS || gvr === INSTALL_PLANS || gvr === CSVS) this.known.add(ns);
      if (gvr === CSVS && type === 'DELETED') void this.cleanupClusterRbac(ns, o.metadata?.name ?? '');
      this.mark(ns);
    };
    while (!signal.aborted) {
      try {
        const list = await this.client.list(gvr, undefined, { signal });
        for (const o of list.items) onEvent('ADDED', o);
        const rv = list.metadata?.resourceVersion;
        for await (const ev of this.client.watch(gvr, undefined, { signal, ...(rv ? { resourceVersion: rv } : {}), allowWatchBookmarks: true })) {
          if (ev.type === 'BOOKMARK') continue;
          onEvent(ev.type, ev.object);
        }
      } catch (e) {
        if (signal.aborted) return;
        this.log(`install: watching ${gvr.resource} failed, listing again: ${e instanceof Error ? e.message : String(e)}`);
      }
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, this.opts.rewatchMs ?? 1000).unref());
    }
  }

  private async work(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      const next = this.dirty.values().next();
      if (next.done) {
        await new Promise<void>((r) => (this.wake = r));
        this.wake = undefined;
        continue;
      }
      const ns = next.value;
      this.dirty.delete(ns);
      try {
        const again = await this.syncNamespace(ns);
        if (again !== undefined) setTimeout(() => this.mark(ns), again).unref();
      } catch (e) {
        if (signal.aborted) return;
        this.log(`install: namespace ${ns}: ${e instanceof Error ? e.message : String(e)}`);
        setTimeout(() => this.mark(ns), 1000).unref();
      }
    }
  }

  /** One sync of a namespace; a number asks for another one after that many ms. */
  async syncNamespace(ns: string): Promise<number | undefined> {
    const [subs, plans, csvList, ogs] = await Promise.all([
      this.client.list(SUBSCRIPTIONS, ns),
      this.client.list(INSTALL_PLANS, ns),
      this.client.list(CSVS, ns),
      this.client.list(OPERATOR_GROUPS, ns),
    ]);
    // Copies of other namespaces' CSVs are their parents' business.
    const own = (list: readonly KubeObject[]): KubeObject[] => list.filter((c) => !isCopied(c));
    let again: number | undefined;
    for (const plan of plans.items) {
      const r = await this.executor.sync(plan);
      if (r.again !== undefined) again = Math.min(again ?? Infinity, r.again);
    }
    const og = ogs.items.length === 1 ? ogs.items[0]! : undefined;
    const targets = og ? await targetNamespaces(this.client, og) : undefined;
    if (og && targets) await writeGroupStatus(this.client, og, targets);
    await this.csvSync.syncNamespace(ns, own(csvList.items), ogs.items, targets);
    // Read again: the CSV sync may have moved phases on.
    const csvsNow = own((await this.client.list(CSVS, ns)).items);
    await syncCopies(this.client, ns, csvsNow, targets);
    if (subs.items.length) {
      const plansNow = await this.client.list(INSTALL_PLANS, ns);
      await this.syncSubscriptions(ns, subs.items, plansNow.items, csvsNow);
    }
    return again;
  }

  private bundlesId(bundles: ApiBundle[]): number {
    let id = this.bundleIds.get(bundles);
    if (id === undefined) this.bundleIds.set(bundles, (id = ++this.nextBundlesId));
    return id;
  }

  /** The catalogs in scope of a namespace: its own and the global catalog namespace's. */
  private async catalogsInScope(ns: string): Promise<KubeObject[]> {
    const own = (await this.client.list(CATALOG_SOURCES, ns)).items;
    if (ns === this.opts.globalCatalogNamespace) return own;
    const global = (await this.client.list(CATALOG_SOURCES, this.opts.globalCatalogNamespace)).items;
    return [...own, ...global];
  }

  private async snapshot(cs: KubeObject): Promise<CatalogSnapshot | undefined> {
    const key: CatalogKey = { namespace: cs.metadata?.namespace ?? '', name: cs.metadata?.name ?? '' };
    const client = this.opts.catalogs.registryClient(key.namespace, key.name);
    if (!client) return undefined;
    const k = `${key.namespace}/${key.name}`;
    let bundles = this.bundles.get(k);
    if (!bundles) {
      bundles = client.listBundles();
      this.bundles.set(k, bundles);
      bundles.catch(() => this.bundles.delete(k));
    }
    const priority = Number(specOf(cs).priority ?? 0);
    return {
      key,
      priority: Number.isFinite(priority) ? priority : 0,
      bundles: await bundles,
      defaultChannels: this.opts.catalogs.defaultChannels(key.namespace, key.name),
    };
  }

  private async syncSubscriptions(ns: string, subs: KubeObject[], plans: KubeObject[], csvs: KubeObject[]): Promise<void> {
    const catalogs = await this.catalogsInScope(ns);
    const healthy = (cs: KubeObject): boolean => str(obj(statusOf(cs).connectionState).lastObservedState) === 'READY';
    const catalogHealth = catalogs.map((cs) => ({
      catalogSourceRef: {
        apiVersion: OPERATORS_V1ALPHA1,
        kind: 'CatalogSource',
        name: cs.metadata?.name,
        namespace: cs.metadata?.namespace,
        uid: cs.metadata?.uid,
      },
      healthy: healthy(cs),
      lastUpdated: now(),
    }));
    const unhealthy = catalogs.filter((cs) => !healthy(cs));
    const healthCondition: Condition = !catalogs.length
      ? {
          type: 'CatalogSourcesUnhealthy',
          status: 'True',
          reason: 'NoCatalogSourcesFound',
          message: 'dependency resolution requires at least one catalogsource',
        }
      : unhealthy.length
        ? {
            type: 'CatalogSourcesUnhealthy',
            status: 'True',
            reason: 'UnhealthyCatalogSourceFound',
            message: unhealthy.map((cs) => `targeted catalogsource ${cs.metadata?.namespace ?? ''}/${cs.metadata?.name ?? ''} unhealthy`).join('; '),
          }
        : { type: 'CatalogSourcesUnhealthy', status: 'False', reason: 'AllCatalogSourcesHealthy', message: 'all available catalogsources are healthy' };

    const csvByName = new Map(csvs.filter((c) => !c.metadata?.deletionTimestamp).map((c) => [c.metadata?.name ?? '', c]));
    const planByName = new Map(plans.map((p) => [p.metadata?.name ?? '', p]));
    const live = subs.filter((s) => !s.metadata?.deletionTimestamp);
    // The installed CSV of each Subscription: its current CSV once that exists.
    const installedOf = (s: KubeObject): string | undefined => {
      const st = statusOf(s);
      const current = str(st.currentCSV);
      if (current && csvByName.has(current)) return current;
      const installed = str(st.installedCSV);
      return installed && csvByName.has(installed) ? installed : undefined;
    };
    const inFlight = plans.some((p) => IN_FLIGHT.has(str(statusOf(p).phase)) && arr(statusOf(p).plan).length > 0);
    let resolution: { failed?: { reason: string; message: string }; plan?: KubeObject; currentOf?: Map<string, string> } = {};
    if (!inFlight && live.length) resolution = await this.resolveAndPlan(ns, live, catalogs.filter(healthy), csvs, plans, installedOf);
    if (resolution.plan) planByName.set(resolution.plan.metadata?.name ?? '', resolution.plan);

    for (const sub of live) {
      const st = statusOf(sub);
      const installed = installedOf(sub);
      const current = resolution.currentOf?.get(sub.metadata?.name ?? '') ?? (str(st.currentCSV) || undefined);
      const ref = resolution.currentOf?.has(sub.metadata?.name ?? '') && resolution.plan ? resolution.plan : planByName.get(str(obj(st.installPlanRef).name));
      const phase = ref ? str(statusOf(ref).phase) : '';
      const conditions: Condition[] = [healthCondition];
      if (resolution.failed)
        conditions.push({ type: 'ResolutionFailed', status: 'True', reason: resolution.failed.reason, message: resolution.failed.message });
      if (ref && (phase === 'RequiresApproval' || phase === 'Installing')) conditions.push({ type: 'InstallPlanPending', status: 'True', reason: phase });
      if (ref && phase === 'Failed') {
        const c = arr(statusOf(ref).conditions)
          .map(obj)
          .find((x) => x.type === 'Installed');
        conditions.push({ type: 'InstallPlanFailed', status: 'True', reason: str(c?.reason) || 'InstallPlanFailed', message: str(c?.message) });
      }
      if (!ref && str(obj(st.installPlanRef).name))
        conditions.push({
          type: 'InstallPlanMissing',
          status: 'True',
          reason: 'ReferencedInstallPlanNotFound',
          message: `referenced InstallPlan ${ns}/${str(obj(st.installPlanRef).name)} not found`,
        });
      const state =
        ref && IN_FLIGHT.has(phase)
          ? 'UpgradePending'
          : ref && phase === 'Failed'
            ? 'UpgradeFailed'
            : installed && installed === current
              ? 'AtLatestKnown'
              : current
                ? 'UpgradePending'
                : '';
      const next: Json = {
        ...(current ? { currentCSV: current } : {}),
        ...(installed ? { installedCSV: installed } : {}),
        ...(ref
          ? {
              installPlanRef: { apiVersion: OPERATORS_V1ALPHA1, kind: 'InstallPlan', name: ref.metadata?.name, namespace: ns, uid: ref.metadata?.uid },
              installplan: { apiVersion: OPERATORS_V1ALPHA1, kind: 'InstallPlan', name: ref.metadata?.name, uuid: ref.metadata?.uid },
              installPlanGeneration: Number(specOf(ref).generation ?? 1),
            }
          : {}),
        ...(state ? { state } : {}),
        catalogHealth,
        conditions: carryTransitions(st.conditions, conditions),
        lastUpdated: now(),
      };
      if (sameStatus(st, next)) continue;
      try {
        // A full replacement of status (a merge patch would keep conditions that went away).
        await this.client.updateStatus(SUBSCRIPTIONS, ns, { ...sub, status: next }, { fieldManager: 'catalog-operator' });
      } catch (e) {
        if (e instanceof StatusError && (e.code === 409 || e.code === 404)) {
          this.mark(ns);
          continue;
        }
        throw e;
      }
    }
  }

  private async resolveAndPlan(
    ns: string,
    subs: KubeObject[],
    catalogs: KubeObject[],
    csvs: KubeObject[],
    plans: KubeObject[],
    installedOf: (s: KubeObject) => string | undefined,
  ): Promise<{ failed?: { reason: string; message: string }; plan?: KubeObject; currentOf?: Map<string, string> }> {
    const snapshots: CatalogSnapshot[] = [];
    for (const cs of catalogs) {
      try {
        const snap = await this.snapshot(cs);
        if (snap) snapshots.push(snap);
      } catch (e) {
        this.log(
          `install: catalog ${cs.metadata?.namespace ?? ''}/${cs.metadata?.name ?? ''}: listing bundles failed: ${e instanceof Error ? e.message : String(e)}`,
        );
      }
    }
    const input: SubscriptionInput[] = subs.map((s) => {
      const spec = specOf(s);
      const installedCSV = installedOf(s);
      return {
        name: s.metadata?.name ?? '',
        namespace: ns,
        package: str(spec.name),
        ...(str(spec.channel) ? { channel: str(spec.channel) } : {}),
        ...(str(spec.startingCSV) ? { startingCSV: str(spec.startingCSV) } : {}),
        source: str(spec.source),
        sourceNamespace: str(spec.sourceNamespace) || ns,
        ...(installedCSV ? { installedCSV } : {}),
      };
    });
    const installed: InstalledOperator[] = csvs
      .filter((c) => !c.metadata?.deletionTimestamp)
      .map((c) => {
        const spec = specOf(c);
        const owned = arr(obj(spec.customresourcedefinitions).owned).map(obj);
        const sub = subs.find((s) => installedOf(s) === c.metadata?.name);
        return {
          csvName: c.metadata?.name ?? '',
          ...(sub ? { package: str(specOf(sub).name) } : {}),
          ...(str(spec.version) ? { version: str(spec.version) } : {}),
          providedApis: owned.map((o) => ({ group: str(o.name).split('.').slice(1).join('.'), version: str(o.version), kind: str(o.kind) })),
        };
      });
    // The same question as last time gets the same answer without solving again: every resync
    // (and every namespace created) syncs each namespace, and a SAT resolution holds the event
    // loop for its CPU time.
    const question = JSON.stringify({
      input,
      installed,
      catalogs: snapshots.map((c) => [c.key, c.priority, this.bundlesId(c.bundles), c.defaultChannels]),
    });
    const last = this.answers.get(ns);
    const result =
      this.opts.resolveIsPure && last?.question === question
        ? last.result
        : await this.opts.resolve({ namespace: ns, subscriptions: input, installed, catalogs: snapshots });
    this.answers.set(ns, { question, result });
    if (!result.ok) return { failed: { reason: result.reason, message: result.message } };
    const existing = new Set(csvs.map((c) => c.metadata?.name ?? ''));
    const steps = result.steps.filter((s) => !existing.has(s.bundle.csvName));
    if (!steps.length) return {};
    const currentOf = new Map(steps.filter((s) => s.subscription).map((s) => [s.subscription!, s.bundle.csvName]));
    const names = steps.map((s) => s.bundle.csvName);
    // A plan for the same CSVs already exists (it failed, or is done): no second one.
    const same = plans.find((p) => JSON.stringify(arr(specOf(p).clusterServiceVersionNames)) === JSON.stringify(names));
    if (same && arr(statusOf(same).plan).length) return { plan: same, currentOf };
    // A plan created without its steps (the server stopped between the create and the status write): made again.
    if (same) await this.client.delete(INSTALL_PLANS, ns, same.metadata?.name ?? '').catch(() => {});
    return { plan: await this.createPlan(ns, subs, steps, names), currentOf };
  }

  private async createPlan(ns: string, subs: KubeObject[], steps: ResolvedStep[], names: string[]): Promise<KubeObject> {
    // The objects of each bundle: ListBundles may leave them out; GetBundle has them.
    for (const s of steps) {
      if (s.bundle.object?.length) continue;
      const client = this.opts.catalogs.registryClient(s.catalog.namespace, s.catalog.name);
      if (client) s.bundle.object = (await client.getBundle(s.bundle.packageName, s.bundle.channelName, s.bundle.csvName)).object;
    }
    const manual = subs.some((s) => str(specOf(s).installPlanApproval) === 'Manual');
    const involved = subs.filter((s) => steps.some((st) => st.subscription === s.metadata?.name));
    const created = await this.client.create<KubeObject>(INSTALL_PLANS, ns, {
      apiVersion: OPERATORS_V1ALPHA1,
      kind: 'InstallPlan',
      metadata: {
        generateName: 'install-',
        namespace: ns,
        ownerReferences: involved.map((s) => ({
          apiVersion: OPERATORS_V1ALPHA1,
          kind: 'Subscription',
          name: s.metadata?.name ?? '',
          uid: s.metadata?.uid ?? '',
          blockOwnerDeletion: false,
          controller: false,
        })),
      },
      spec: { clusterServiceVersionNames: names, approval: manual ? 'Manual' : 'Automatic', approved: !manual, generation: 1 },
    });
    const status = {
      phase: manual ? 'RequiresApproval' : 'Installing',
      catalogSources: [...new Set(steps.map((s) => s.catalog.name))],
      plan: planSteps(steps, ns),
      startTime: now(),
      lastUpdated: now(),
    };
    return this.client.patch(INSTALL_PLANS, ns, created.metadata?.name ?? '', 'merge', { status }, { subresource: 'status', fieldManager: 'catalog-operator' });
  }

  /** A CSV is gone: the cluster-scoped RBAC generated for it (OLM's owner labels) goes too, unless a CSV of that name is back. */
  private async cleanupClusterRbac(ns: string, name: string): Promise<void> {
    const selector = `olm.owner=${name},olm.owner.namespace=${ns},olm.owner.kind=ClusterServiceVersion`;
    try {
      await this.client.get(CSVS, ns, name);
      return;
    } catch (e) {
      if (!(e instanceof StatusError) || e.code !== 404) return;
    }
    for (const gvr of [CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES]) {
      try {
        const list = await this.client.list(gvr, undefined, { labelSelector: selector });
        for (const o of list.items) await this.client.delete(gvr, undefined, o.metadata?.name ?? '').catch(() => {});
      } catch (e) {
        this.log(`install: removing the ${gvr.resource} of csv ${ns}/${name} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }
}
