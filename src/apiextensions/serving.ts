// The CRD lifecycle, inside the API module like upstream's apiextensions-apiserver (its naming,
// establishing and finalizer controllers run in the apiextensions server, not in
// kube-controller-manager), so CRDs work with `kplane serve --controllers=false` too. One loop
// lists and watches CRDs through the generic store and handles events one at a time. Its CRD
// writes (status, the finalizer) go through the loopback client, as upstream's controllers write
// through their loopback clientset: admission, validation and managedFields (manager
// kube-apiserver, the client's user agent) apply to them as to any other writer.
//  - naming (upstream's NamingConditionController): when spec.names differ from
//    status.acceptedNames, the names are checked against the accepted names of the other CRDs of
//    the group; names that do not conflict are accepted. NamesAccepted=True/NoConflicts, or False
//    with PluralConflict/SingularConflict/ShortNamesConflict/KindConflict/ListKindConflict and
//    `"<name>" is already in use`; Established becomes False/Installing (or NotAccepted). After a
//    status write the other CRDs of the group are looked at again (a name may have been freed).
//    Protected groups get KubernetesAPIApprovalPolicyConformant.
//  - establishing (upstream's EstablishingController): NamesAccepted=True and not Established →
//    Established=True/InitialNamesAccepted, in a second status write.
//  - serving: every Established CRD's served versions are registered in the ApiRegistry (routing,
//    discovery, OpenAPI follow it); a changed CRD is re-registered, a removed version or a deleted
//    CRD is unregistered. While the CRD is terminating its resources still serve get, list, watch,
//    update, patch and delete, but creates are refused (upstream's forbidCreateAdmission).
//  - deletion (upstream's CRDFinalizer): DELETE of a CRD adds the
//    `customresourcecleanup.apiextensions.k8s.io` finalizer and Terminating=True/
//    InstanceDeletionPending (crd-strategy.ts, upstream's REST.Delete); this loop then sets
//    Terminating=True/InstanceDeletionInProgress, deletes the instances namespace by namespace
//    through the store, as upstream's CRDFinalizer deletes them through the REST storage rather
//    than a client (instances' own finalizers are respected), waits until none is left (at most
//    a minute per attempt, then InstanceDeletionCheck and a retry with backoff), sets
//    Terminating=False/InstanceDeletionCompleted and removes the finalizer; the CRD goes and its
//    resources stop being served. Failures give InstanceDeletionFailed and are retried.
//    Upstream removes the finalizer through /status (its status strategy lets metadata through);
//    here /status changes only status, so the finalizer goes in a second write to the resource.
import type { ServiceResolver } from '../admission/webhook/service-resolver.js';
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { GVR, KubeClient } from '../client/types.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { GenericStore } from '../registry/store.js';
import { rfc3339 } from '../apimachinery/times.js';
import { ConversionWebhook, conversionKey, type ConversionObserver } from './conversion.js';
import { buildServedVersion, type CustomResourceOptions } from './customresource.js';
import { canonicalJSON } from './schema/index.js';
import { conditionOf, isConditionTrue, storageVersionOf, type CRDCondition, type CRDNames, type CustomResourceDefinition } from './types.js';
import { apiApprovalState, isProtectedCommunityGroup, semanticEqual } from './validation.js';
import { asLogger } from '../golang/klog.js';

/** The finalizer DELETE adds and the clean-up removes (apiextensionsv1.CustomResourceCleanupFinalizer). */
export const CUSTOM_RESOURCE_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const CRDS: GVR = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };

/** How often a CRD write is tried again after a conflict (a newer version read each time). */
const MAX_WRITE_ATTEMPTS = 16;

/** Built-in resources stored where a CRD of the same group/plural would be (OverlappingBuiltInResources). */
const OVERLAPPING_BUILT_IN = new Set(['apiregistration.k8s.io/apiservices', 'apiextensions.k8s.io/customresourcedefinitions']);

/** A CRD is terminating once it has a deletionTimestamp or Terminating=True (upstream's crdHandler). */
export function isTerminating(crd: CustomResourceDefinition): boolean {
  return !!crd.metadata?.deletionTimestamp || isConditionTrue(crd, 'Terminating');
}

/** apihelpers.SetCRDCondition: lastTransitionTime moves only when the status changes. */
export function setCRDCondition(conditions: CRDCondition[], c: CRDCondition, now: string): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  if (i < 0) {
    conditions.push({ ...c, lastTransitionTime: c.lastTransitionTime ?? now });
    return;
  }
  const old = conditions[i]!;
  const changed = old.status !== c.status || !old.lastTransitionTime;
  conditions[i] = { ...c, lastTransitionTime: changed ? (c.lastTransitionTime ?? now) : old.lastTransitionTime! };
}

export interface CRDServingOptions extends CustomResourceOptions {
  readonly log?: (msg: string) => void;
  /** How often the clean-up looks whether the instances are gone (upstream: 5 s; first look at once). */
  readonly instancePollMs?: number;
  /** How long one clean-up attempt waits for the instances (upstream: 1 min). */
  readonly instanceWaitMs?: number;
  /** Records each conversion webhook call (apiserver_crd_conversion_webhook_duration_seconds). */
  readonly observeConversion?: ConversionObserver;
  /** Where conversion webhooks' `clientConfig.service` goes. */
  readonly serviceResolver?: ServiceResolver;
}

interface Served {
  readonly key: string;
  readonly gvrs: { group: string; version: string; plural: string }[];
  readonly definitions: string[];
}

export class CRDServing {
  private readonly crds = new Map<string, CustomResourceDefinition>();
  private readonly served = new Map<string, Served>();
  /** CRD name → its conversion webhook (strategy Webhook), kept while its clientConfig stays. */
  private readonly conversions = new Map<string, ConversionWebhook>();
  private readonly terminating = new Set<string>();
  /** CRD name → clean-up in flight; retries pending. */
  private readonly finalizing = new Map<string, Promise<void>>();
  private readonly retries = new Map<string, { timer: NodeJS.Timeout; failures: number }>();
  private readonly failures = new Map<string, number>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: ApiRegistry,
    private readonly store: GenericStore,
    private readonly client: KubeClient,
    private readonly opts: CRDServingOptions = {},
  ) {}

  /** Serves what is established now, then follows changes in the background. */
  async start(): Promise<void> {
    const rv = await this.resync();
    this.loop = this.run(rv);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    for (const r of this.retries.values()) clearTimeout(r.timer);
    this.retries.clear();
    await this.loop?.catch(() => {});
    await this.queue.catch(() => {});
    await Promise.all([...this.finalizing.values()].map((p) => p.catch(() => {})));
  }

  private async resync(): Promise<string> {
    const list = await this.store.list(undefined);
    const names = new Set<string>();
    this.crds.clear();
    for (const item of list.items) {
      const crd = item as CustomResourceDefinition;
      names.add(crd.metadata!.name!);
      this.crds.set(crd.metadata!.name!, crd);
    }
    for (const name of [...this.served.keys()]) if (!names.has(name)) this.unserve(name);
    for (const crd of [...this.crds.values()]) await this.reconcile(crd);
    return list.metadata.resourceVersion ?? '';
  }

  private async run(rv: string): Promise<void> {
    const signal = this.abort.signal;
    let from = rv;
    while (!signal.aborted) {
      try {
        for await (const ev of this.store.watch(undefined, { resourceVersion: from, signal })) {
          if (signal.aborted) return;
          const crd = ev.object as CustomResourceDefinition;
          if (ev.type === 'BOOKMARK' || ev.type === 'ERROR') continue;
          from = crd.metadata?.resourceVersion ?? from;
          await this.enqueue(() => (ev.type === 'DELETED' ? this.deleted(crd) : this.reconcile(crd)));
        }
      } catch (e) {
        if (signal.aborted) return;
        asLogger(this.opts.log).error(errorText(e), 'CRD watch ended; watching again');
        await new Promise((r) => setTimeout(r, 200).unref());
        if (signal.aborted) return;
        // A watch too far behind (410) or a storage hiccup: start over from a fresh list.
        try {
          from = await this.enqueue(() => this.resync());
        } catch {
          // storage unavailable: try again after the pause
        }
      }
    }
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  private async deleted(crd: CustomResourceDefinition): Promise<void> {
    const name = crd.metadata?.name ?? '';
    if (this.crds.get(name)?.metadata?.uid === crd.metadata?.uid) this.crds.delete(name);
    this.terminating.delete(name);
    this.unserve(name);
    this.requeueGroup(crd);
  }

  /** requeueAllOtherGroupCRDs: names may have been freed for the other CRDs of the group. */
  private requeueGroup(crd: CustomResourceDefinition): void {
    for (const other of [...this.crds.values()]) {
      if (other.metadata?.name === crd.metadata?.name || other.spec?.group !== crd.spec?.group) continue;
      if (semanticEqual(other.spec?.names, other.status?.acceptedNames) && isConditionTrue(other, 'NamesAccepted')) continue;
      void this.enqueue(() => this.reconcile(this.crds.get(other.metadata?.name ?? '') ?? other));
    }
  }

  private async reconcile(input: CustomResourceDefinition): Promise<void> {
    let crd = input;
    const name = crd.metadata?.name ?? '';
    const known = this.crds.get(name);
    // An event older than what a status write of ours already returned changes nothing.
    if (known && known.metadata?.uid === crd.metadata?.uid && Number(known.metadata?.resourceVersion) > Number(crd.metadata?.resourceVersion)) crd = known;
    this.crds.set(name, crd);
    // Naming first, then establishing on what naming wrote (two status writes, as upstream's two controllers).
    for (const step of [(c: CustomResourceDefinition) => this.namingStatus(c), (c: CustomResourceDefinition) => this.establishingStatus(c)]) {
      if (!step(crd)) continue;
      const written = await this.writeStatus(crd, step);
      if (!written) return; // gone or changed meanwhile: its own event comes next
      const namesChanged = !semanticEqual(written.status?.acceptedNames, crd.status?.acceptedNames);
      crd = written;
      this.crds.set(name, crd);
      if (namesChanged) this.requeueGroup(crd);
    }
    if (isTerminating(crd)) this.terminating.add(name);
    else this.terminating.delete(name);
    this.serve(crd);
    if (crd.metadata?.deletionTimestamp && crd.metadata.finalizers?.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) this.startCleanup(name);
  }

  /**
   * Writes `step`'s status through /status (UpdateStatus with the object's resourceVersion). A
   * conflict reads the CRD again and re-runs `step` on it, as the store's guaranteed update would;
   * undefined when the CRD is gone or was replaced (its own event comes next).
   */
  private async writeStatus(
    crd: CustomResourceDefinition,
    step: (c: CustomResourceDefinition) => CustomResourceDefinition['status'] | undefined,
  ): Promise<CustomResourceDefinition | undefined> {
    return this.write(
      crd,
      (cur) => ({ ...cur, status: step(cur) ?? cur.status ?? {} }),
      (body) => this.client.updateStatus<CustomResourceDefinition>(CRDS, undefined, body),
    );
  }

  /** PUT `change(current)` with current's resourceVersion; on a conflict, again on a fresh read. */
  private async write(
    crd: CustomResourceDefinition,
    change: (cur: CustomResourceDefinition) => CustomResourceDefinition,
    put: (body: CustomResourceDefinition) => Promise<CustomResourceDefinition>,
  ): Promise<CustomResourceDefinition | undefined> {
    const name = crd.metadata?.name ?? '';
    let cur = crd;
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      try {
        return await put(change(cur));
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return undefined;
        if (!(e instanceof StatusError && e.code === 409)) throw e;
      }
      try {
        cur = await this.client.get<CustomResourceDefinition>(CRDS, undefined, name);
      } catch (e) {
        if (e instanceof StatusError && e.code === 404) return undefined;
        throw e;
      }
      if (cur.metadata?.uid !== crd.metadata?.uid) return undefined;
    }
    throw new Error(`too many conflicts writing customresourcedefinition ${name}`);
  }

  /** The naming controller's status for this CRD, or undefined when it has nothing to change. */
  private namingStatus(crd: CustomResourceDefinition): CustomResourceDefinition['status'] | undefined {
    const spec = crd.spec ?? {};
    const status = crd.status ?? {};
    const conditions: CRDCondition[] = (status.conditions ?? []).map((c) => ({ ...c }));
    const now = rfc3339(new Date());
    let accepted: CRDNames = status.acceptedNames ?? { plural: '', kind: '' };
    // Upstream skips CRDs whose names are all accepted; a CRD written without our conditions
    // (restored from a backup, say) is looked at too.
    if (!semanticEqual(spec.names ?? {}, status.acceptedNames) || !conditionOf(crd, 'NamesAccepted') || !conditionOf(crd, 'Established')) {
      const r = this.namesFor(crd);
      accepted = r.names;
      setCRDCondition(conditions, r.condition, now);
      // Established stays as it is once True; otherwise Installing (the establishing step turns
      // it True) when the names are accepted, NotAccepted when it never had the condition.
      let established: CRDCondition = conditionOf(crd, 'Established') ?? {
        type: 'Established',
        status: 'False',
        reason: 'NotAccepted',
        message: 'not all names are accepted',
      };
      if (established.status !== 'True' && r.condition.status === 'True') {
        established = { type: 'Established', status: 'False', reason: 'Installing', message: 'the initial names have been accepted' };
      }
      setCRDCondition(conditions, established, now);
    }
    if (isProtectedCommunityGroup(spec.group ?? '')) {
      const a = apiApprovalState(crd.metadata?.annotations);
      const reason = { Approved: 'ApprovedAnnotation', Bypassed: 'UnapprovedAnnotation', Missing: 'MissingAnnotation', Invalid: 'InvalidAnnotation' }[a.state];
      setCRDCondition(
        conditions,
        { type: 'KubernetesAPIApprovalPolicyConformant', status: a.state === 'Approved' ? 'True' : 'False', reason, message: a.reason },
        now,
      );
    }
    const next = { ...status, acceptedNames: accepted, conditions };
    return canonicalJSON(next) === canonicalJSON(status) ? undefined : next;
  }

  /** The establishing controller's status: Established once the names are accepted. */
  private establishingStatus(crd: CustomResourceDefinition): CustomResourceDefinition['status'] | undefined {
    if (!isConditionTrue(crd, 'NamesAccepted') || isConditionTrue(crd, 'Established')) return undefined;
    const conditions: CRDCondition[] = (crd.status?.conditions ?? []).map((c) => ({ ...c }));
    setCRDCondition(
      conditions,
      { type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' },
      rfc3339(new Date()),
    );
    return { ...crd.status, conditions };
  }

  /** calculateNamesAndConditions of upstream's naming controller. */
  private namesFor(crd: CustomResourceDefinition): { names: CRDNames; condition: CRDCondition } {
    const resources = new Set<string>();
    const kinds = new Set<string>();
    for (const other of this.crds.values()) {
      if (other.metadata?.name === crd.metadata?.name || other.spec?.group !== crd.spec?.group) continue;
      const n = other.status?.acceptedNames ?? {};
      for (const x of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (x) resources.add(x);
      for (const x of [n.kind, n.listKind]) if (x) kinds.add(x);
    }
    const req = crd.spec?.names ?? {};
    const acc = crd.status?.acceptedNames ?? {};
    // plural and kind are not omitempty upstream: a name not accepted yet is "".
    const names: CRDNames = { plural: '', kind: '', ...acc };
    let condition: CRDCondition | undefined;
    const conflict = (reason: string, name: string): void => {
      condition = { type: 'NamesAccepted', status: 'False', reason, message: `"${name}" is already in use` };
    };
    const fresh = (requested: string | undefined, accepted: string | undefined, used: Set<string>): boolean =>
      (requested ?? '') === (accepted ?? '') || !used.has(requested ?? '');
    if (fresh(req.plural, acc.plural, resources)) names.plural = req.plural ?? '';
    else conflict('PluralConflict', req.plural ?? '');
    if (fresh(req.singular, acc.singular, resources)) {
      if (req.singular) names.singular = req.singular;
      else delete names.singular;
    } else conflict('SingularConflict', req.singular ?? '');
    if (!semanticEqual(req.shortNames, acc.shortNames)) {
      const existing = new Set(acc.shortNames ?? []);
      const bad = (req.shortNames ?? []).filter((s) => !existing.has(s) && s !== acc.plural && s !== acc.singular && resources.has(s));
      // utilerrors.NewAggregate: one error as is, several as "[a, b]".
      const msgs = bad.map((b) => `"${b}" is already in use`);
      if (bad.length)
        condition = { type: 'NamesAccepted', status: 'False', reason: 'ShortNamesConflict', message: msgs.length === 1 ? msgs[0]! : `[${msgs.join(', ')}]` };
      else if (req.shortNames) names.shortNames = req.shortNames;
      else delete names.shortNames;
    }
    if (fresh(req.kind, acc.kind, kinds)) names.kind = req.kind ?? '';
    else conflict('KindConflict', req.kind ?? '');
    if (fresh(req.listKind, acc.listKind, kinds)) {
      if (req.listKind) names.listKind = req.listKind;
      else delete names.listKind;
    } else conflict('ListKindConflict', req.listKind ?? '');
    if (req.categories) names.categories = req.categories;
    else delete names.categories;
    return { names, condition: condition ?? { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' } };
  }

  private serve(crd: CustomResourceDefinition): void {
    const name = crd.metadata?.name ?? '';
    if (!isConditionTrue(crd, 'Established') || !crd.status?.acceptedNames?.plural) {
      this.unserve(name);
      return;
    }
    // Terminating changes discovery's verbs: the resource is registered again.
    const key = canonicalJSON({
      uid: crd.metadata?.uid,
      spec: crd.spec,
      names: crd.status.acceptedNames,
      stored: crd.status.storedVersions,
      terminating: this.terminating.has(name),
    });
    if (this.served.get(name)?.key === key) return;
    const prev = this.served.get(name);
    const gvrs: Served['gvrs'] = [];
    const definitions: string[] = [];
    const opts: CustomResourceOptions = { rules: this.opts.rules, terminating: () => this.terminating.has(name), conversion: this.conversionFor(crd) };
    for (const v of crd.spec?.versions ?? []) {
      if (!v.served || !v.name) continue;
      try {
        const built = buildServedVersion(crd, v, opts);
        const d = built.registration.descriptor;
        this.registry.addDefinitions(built.definitions);
        definitions.push(...Object.keys(built.definitions));
        this.registry.add(built.registration);
        gvrs.push({ group: d.group, version: d.version, plural: d.plural });
      } catch (e) {
        asLogger(this.opts.log).error(errorText(e), 'Cannot serve a version of a CRD', 'crd', name, 'version', v.name);
      }
    }
    if (prev) {
      const keep = new Set(gvrs.map((g) => `${g.group}/${g.version}/${g.plural}`));
      for (const g of prev.gvrs) if (!keep.has(`${g.group}/${g.version}/${g.plural}`)) this.registry.remove(g.group, g.version, g.plural);
      const keepDefs = new Set(definitions);
      this.registry.removeDefinitions(prev.definitions.filter((d) => !keepDefs.has(d)));
    }
    this.served.set(name, { key, gvrs, definitions });
  }

  /** The CRD's conversion webhook: the one it had while its webhook settings stay, else a new one. */
  private conversionFor(crd: CustomResourceDefinition): ConversionWebhook | undefined {
    const name = crd.metadata?.name ?? '';
    const key = conversionKey(crd);
    const prev = this.conversions.get(name);
    if (prev && prev.key === key) return prev;
    prev?.release();
    this.conversions.delete(name);
    if (key === undefined) return undefined;
    const next = new ConversionWebhook(crd, this.opts.observeConversion, this.opts.serviceResolver);
    this.conversions.set(name, next);
    return next;
  }

  private unserve(name: string): void {
    this.conversions.get(name)?.release();
    this.conversions.delete(name);
    const prev = this.served.get(name);
    if (!prev) return;
    for (const g of prev.gvrs) this.registry.remove(g.group, g.version, g.plural);
    this.registry.removeDefinitions(prev.definitions);
    this.served.delete(name);
  }

  // ---- deletion (CRDFinalizer) -----------------------------------------------------------------

  /** Starts the clean-up of a deleted CRD unless one runs or waits for its retry already. */
  private startCleanup(name: string): void {
    if (this.abort.signal.aborted || this.finalizing.has(name) || this.retries.has(name)) return;
    const run = this.cleanup(name)
      .then(() => {
        this.failures.delete(name);
      })
      .catch((e: unknown) => {
        if (this.abort.signal.aborted) return;
        // The workqueue's rate limiter: 5 ms doubling per failure, here from 500 ms up to 30 s.
        const failures = (this.failures.get(name) ?? 0) + 1;
        this.failures.set(name, failures);
        const delay = Math.min(30_000, 500 * 2 ** (failures - 1));
        asLogger(this.opts.log).error(errorText(e), 'Clean-up of a CRD failed; retrying', 'crd', name, 'delayMs', delay);
        const timer = setTimeout(() => {
          this.retries.delete(name);
          const crd = this.crds.get(name);
          if (crd) void this.enqueue(() => this.reconcile(this.crds.get(name) ?? crd));
        }, delay);
        timer.unref();
        this.retries.set(name, { timer, failures });
      })
      .finally(() => this.finalizing.delete(name));
    this.finalizing.set(name, run);
  }

  /** CRDFinalizer.sync: mark, delete the instances, wait for them, then let the CRD go. */
  private async cleanup(name: string): Promise<void> {
    let crd = this.crds.get(name);
    if (!crd?.metadata?.deletionTimestamp || !crd.metadata.finalizers?.includes(CUSTOM_RESOURCE_CLEANUP_FINALIZER)) return;
    const withCondition =
      (c: CRDCondition) =>
      (cur: CustomResourceDefinition): CustomResourceDefinition['status'] => {
        const conditions = (cur.status?.conditions ?? []).map((x) => ({ ...x }));
        setCRDCondition(conditions, c, rfc3339(new Date()));
        return { ...cur.status, conditions };
      };
    // "This cleanup could take a while."
    crd = await this.writeStatus(
      crd,
      withCondition({ type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' }),
    );
    if (!crd) return;
    let cond: CRDCondition;
    const group = crd.spec?.group ?? '';
    if (OVERLAPPING_BUILT_IN.has(`${group}/${crd.spec?.names?.plural ?? ''}`)) {
      cond = { type: 'Terminating', status: 'False', reason: 'OverlappingBuiltInResource', message: 'instances overlap with built-in resources in storage' };
    } else if (isConditionTrue(crd, 'Established')) {
      const r = await this.deleteInstances(crd);
      cond = r.condition;
      if (r.error) {
        await this.writeStatus(crd, withCondition(cond)).catch(() => undefined);
        throw r.error;
      }
    } else {
      cond = { type: 'Terminating', status: 'False', reason: 'NeverEstablished', message: 'resource was never established' };
    }
    crd = await this.writeStatus(crd, withCondition(cond));
    if (!crd) return;
    // CRDRemoveFinalizer. Once it is gone the store removes the CRD; its DELETED event unserves it.
    await this.write(
      crd,
      (cur) => ({ ...cur, metadata: { ...cur.metadata, finalizers: (cur.metadata?.finalizers ?? []).filter((f) => f !== CUSTOM_RESOURCE_CLEANUP_FINALIZER) } }),
      (body) => this.client.update<CustomResourceDefinition>(CRDS, undefined, body),
    );
  }

  /** CRDFinalizer.deleteInstances: DeleteCollection per namespace, then wait until none is left. */
  private async deleteInstances(crd: CustomResourceDefinition): Promise<{ condition: CRDCondition; error?: Error }> {
    const plural = crd.status?.acceptedNames?.plural ?? '';
    const group = crd.spec?.group ?? '';
    const failed = (message: string, error: Error): { condition: CRDCondition; error: Error } => ({
      condition: { type: 'Terminating', status: 'True', reason: 'InstanceDeletionFailed', message },
      error,
    });
    // Every served version shares the storage prefix; any of them lists and deletes them all. The
    // storage version first, as upstream's finalizer uses it: no conversion webhook is called then.
    const storage = storageVersionOf(crd);
    const served = [...(this.served.get(crd.metadata?.name ?? '')?.gvrs ?? [])].sort((a, b) => Number(b.version === storage) - Number(a.version === storage));
    const reg = served.map((g) => this.registry.lookup(g.group, g.version, g.plural)).find((r) => r !== undefined);
    if (!reg) {
      const err = new Error(`unable to find a custom resource client for ${plural}.${group}`);
      return failed(`could not list instances: ${err.message}`, err);
    }
    const store = reg.store;
    const namespaced = reg.descriptor.namespaced;
    let items: KubeObject[];
    try {
      items = (await store.list(undefined)).items;
    } catch (e) {
      return failed(`could not list instances: ${errorText(e)}`, asError(e));
    }
    const namespaces = new Set<string>();
    const errors: string[] = [];
    for (const item of items) {
      const ns = item.metadata?.namespace ?? '';
      if (namespaces.has(ns)) continue;
      // don't retry deleting the same namespace
      namespaces.add(ns);
      try {
        await store.deleteCollection(namespaced ? ns : undefined, {});
      } catch (e) {
        errors.push(errorText(e));
      }
    }
    if (errors.length) {
      const msg = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
      return failed(`could not issue all deletes: ${msg}`, new Error(msg));
    }
    // Now wait until all of them are gone (their own finalizers may hold them).
    const pollMs = this.opts.instancePollMs ?? 500;
    const until = Date.now() + (this.opts.instanceWaitMs ?? 60_000);
    for (;;) {
      let left: number;
      try {
        left = (await store.list(undefined)).items.length;
      } catch (e) {
        return {
          condition: {
            type: 'Terminating',
            status: 'True',
            reason: 'InstanceDeletionCheck',
            message: `could not confirm zero CustomResources remaining: ${errorText(e)}`,
          },
          error: asError(e),
        };
      }
      if (left === 0) break;
      if (this.abort.signal.aborted)
        return {
          condition: { type: 'Terminating', status: 'True', reason: 'InstanceDeletionInProgress', message: 'CustomResource deletion is in progress' },
          error: new Error('stopped'),
        };
      if (Date.now() >= until) {
        const err = new Error('timed out waiting for the condition');
        return {
          condition: {
            type: 'Terminating',
            status: 'True',
            reason: 'InstanceDeletionCheck',
            message: `could not confirm zero CustomResources remaining: ${err.message}`,
          },
          error: err,
        };
      }
      await new Promise((r) => setTimeout(r, pollMs).unref());
    }
    return { condition: { type: 'Terminating', status: 'False', reason: 'InstanceDeletionCompleted', message: 'removed all instances' } };
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}
