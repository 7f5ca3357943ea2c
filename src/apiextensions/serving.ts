// What makes a CRD served, in process and without the controller runtime (a later issue moves this
// into controllers talking to the API through a client):
//  - naming: when spec.names differ from status.acceptedNames, the names are checked against the
//    accepted names of the other CRDs of the group (upstream's NamingConditionController); names
//    that do not conflict are accepted and the CRD gets NamesAccepted=True and, in the same status
//    write, Established=True (upstream's EstablishingController does that step separately). A
//    conflict gives NamesAccepted=False with upstream's reason and message. Protected groups get
//    KubernetesAPIApprovalPolicyConformant. Status is written through the store's /status path.
//  - serving: every established CRD's served versions are registered in the ApiRegistry (routing,
//    discovery, OpenAPI follow it); a changed CRD is re-registered, a removed version or a deleted
//    CRD is unregistered. Stored custom resources are left alone (instance clean-up is a later
//    issue), and no `customresourcecleanup` finalizer is added, so deleting a CRD is immediate.
// One loop lists and watches CRDs through the generic store and handles events one at a time.
import { StatusError } from '../apimachinery/errors.js';
import type { KubeObject } from '../apimachinery/types.js';
import type { ApiRegistry } from '../registry/registry.js';
import type { GenericStore } from '../registry/store.js';
import { rfc3339 } from '../registry/store.js';
import { buildServedVersion, type CustomResourceOptions } from './customresource.js';
import { canonicalJSON } from './schema/index.js';
import { conditionOf, isConditionTrue, type CRDCondition, type CRDNames, type CustomResourceDefinition } from './types.js';
import { apiApprovalState, isProtectedCommunityGroup, semanticEqual } from './validation.js';

interface Served {
  readonly key: string;
  readonly gvrs: { group: string; version: string; plural: string }[];
  readonly definitions: string[];
}

export class CRDServing {
  private readonly crds = new Map<string, CustomResourceDefinition>();
  private readonly served = new Map<string, Served>();
  private readonly abort = new AbortController();
  private loop: Promise<void> | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: ApiRegistry,
    private readonly store: GenericStore,
    private readonly opts: CustomResourceOptions & { log?: (msg: string) => void } = {},
  ) {}

  /** Serves what is established now, then follows changes in the background. */
  async start(): Promise<void> {
    const rv = await this.resync();
    this.loop = this.run(rv);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.loop?.catch(() => {});
    await this.queue.catch(() => {});
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
        this.opts.log?.(`apiextensions: CRD watch ended: ${e instanceof Error ? e.message : String(e)}`);
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
    this.crds.delete(name);
    this.unserve(name);
    // Names the deleted CRD held may now be free for another CRD of its group.
    for (const other of [...this.crds.values()]) {
      if (other.spec?.group === crd.spec?.group && !isConditionTrue(other, 'NamesAccepted')) await this.reconcile(other);
    }
  }

  private async reconcile(input: CustomResourceDefinition): Promise<void> {
    let crd = input;
    const name = crd.metadata?.name ?? '';
    this.crds.set(name, crd);
    const status = this.desiredStatus(crd);
    if (status) {
      try {
        const r = await this.store.update(
          undefined,
          name,
          (current) => {
            if (!current) throw new StatusError({ reason: 'NotFound', code: 404, message: 'gone' });
            const cur = current as CustomResourceDefinition;
            if (cur.metadata?.uid !== crd.metadata?.uid) throw new StatusError({ reason: 'Conflict', code: 409, message: 'replaced' });
            const next = this.desiredStatus(cur) ?? cur.status ?? {};
            return { ...cur, status: next } as KubeObject;
          },
          { subresource: 'status' },
        );
        crd = r.object as CustomResourceDefinition;
        this.crds.set(name, crd);
      } catch (e) {
        if (e instanceof StatusError && (e.code === 404 || e.code === 409)) return;
        throw e;
      }
    }
    this.serve(crd);
  }

  /** The status this CRD should have, or undefined when it already has it. */
  private desiredStatus(crd: CustomResourceDefinition): CustomResourceDefinition['status'] | undefined {
    const spec = crd.spec ?? {};
    const status = crd.status ?? {};
    const wanted = spec.names ?? {};
    const conditions: CRDCondition[] = (status.conditions ?? []).map((c) => ({ ...c }));
    const now = rfc3339(new Date());
    const set = (c: CRDCondition): void => {
      const i = conditions.findIndex((x) => x.type === c.type);
      if (i < 0) conditions.push({ ...c, lastTransitionTime: now });
      else {
        const old = conditions[i]!;
        conditions[i] = { ...c, lastTransitionTime: old.status !== c.status || !old.lastTransitionTime ? now : old.lastTransitionTime };
      }
    };
    let accepted: CRDNames = status.acceptedNames ?? { plural: '', kind: '' };
    if (!semanticEqual(wanted, status.acceptedNames) || !conditionOf(crd, 'NamesAccepted') || !conditionOf(crd, 'Established')) {
      const r = this.namesFor(crd);
      accepted = r.names;
      set(r.condition);
      const established = conditionOf(crd, 'Established');
      if (r.condition.status === 'True' && established?.status !== 'True') {
        set({ type: 'Established', status: 'True', reason: 'InitialNamesAccepted', message: 'the initial names have been accepted' });
      } else if (!established) {
        set({ type: 'Established', status: 'False', reason: 'NotAccepted', message: 'not all names are accepted' });
      }
    }
    if (isProtectedCommunityGroup(spec.group ?? '')) {
      const a = apiApprovalState(crd.metadata?.annotations);
      const reason = { Approved: 'ApprovedAnnotation', Bypassed: 'UnapprovedAnnotation', Missing: 'MissingAnnotation', Invalid: 'InvalidAnnotation' }[a.state];
      set({ type: 'KubernetesAPIApprovalPolicyConformant', status: a.state === 'Approved' ? 'True' : 'False', reason, message: a.reason });
    }
    const next = { ...status, acceptedNames: accepted, conditions };
    return canonicalJSON(next) === canonicalJSON(status) ? undefined : next;
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
    const names: CRDNames = { ...acc };
    let condition: CRDCondition | undefined;
    const conflict = (reason: string, name: string): void => {
      condition = { type: 'NamesAccepted', status: 'False', reason, message: `"${name}" is already in use` };
    };
    const fresh = (requested: string | undefined, accepted: string | undefined, used: Set<string>): boolean => requested === accepted || !used.has(requested ?? '');
    if (fresh(req.plural, acc.plural, resources)) names.plural = req.plural ?? '';
    else conflict('PluralConflict', req.plural ?? '');
    if (fresh(req.singular, acc.singular, resources)) names.singular = req.singular ?? '';
    else conflict('SingularConflict', req.singular ?? '');
    if (!semanticEqual(req.shortNames, acc.shortNames)) {
      const existing = new Set(acc.shortNames ?? []);
      const bad = (req.shortNames ?? []).filter((s) => !existing.has(s) && resources.has(s));
      if (bad.length) condition = { type: 'NamesAccepted', status: 'False', reason: 'ShortNamesConflict', message: bad.map((b) => `"${b}" is already in use`).join(', ') };
      else if (req.shortNames) names.shortNames = req.shortNames;
      else delete names.shortNames;
    }
    if (fresh(req.kind, acc.kind, kinds)) names.kind = req.kind ?? '';
    else conflict('KindConflict', req.kind ?? '');
    if (fresh(req.listKind, acc.listKind, kinds)) names.listKind = req.listKind ?? '';
    else conflict('ListKindConflict', req.listKind ?? '');
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
    const key = canonicalJSON({ uid: crd.metadata?.uid, spec: crd.spec, names: crd.status.acceptedNames, stored: crd.status.storedVersions } as never);
    if (this.served.get(name)?.key === key) return;
    const prev = this.served.get(name);
    const gvrs: Served['gvrs'] = [];
    const definitions: string[] = [];
    for (const v of crd.spec?.versions ?? []) {
      if (!v.served || !v.name) continue;
      try {
        const built = buildServedVersion(crd, v, this.opts);
        const d = built.registration.descriptor;
        this.registry.addDefinitions(built.definitions);
        definitions.push(...Object.keys(built.definitions));
        this.registry.add(built.registration);
        gvrs.push({ group: d.group, version: d.version, plural: d.plural });
      } catch (e) {
        this.opts.log?.(`apiextensions: cannot serve ${name} ${v.name}: ${e instanceof Error ? e.message : String(e)}`);
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

  private unserve(name: string): void {
    const prev = this.served.get(name);
    if (!prev) return;
    for (const g of prev.gvrs) this.registry.remove(g.group, g.version, g.plural);
    this.registry.removeDefinitions(prev.definitions);
    this.served.delete(name);
  }
}
