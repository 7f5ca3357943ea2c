// The InstallPlan executor (OLM's catalog operator, ExecutePlan): RequiresApproval until
// spec.approved, then the steps applied one by one through the API server in the plan's order,
// each step's status (Created, or Present when the object was there) written back at most every
// STATUS_WRITE_MS and whenever the executor stops (a wait, a failure, the end), so a control plane
// restarted mid-plan resumes near the first step not done: a step applied but not yet recorded is
// applied again, which is idempotent (create, or update what exists). A write per step would cost
// O(steps²): status.plan carries every step's manifest. CRDs must be Established
// before the CSV and anything after it is applied; an object the server refuses fails the plan with
// the server's message; a CRD update that would strand stored custom resources is refused with
// OLM's message; kinds no module serves are recorded as WaitingForAPI, never silently dropped.
import { StatusError } from '../../../apimachinery/errors.js';
import type { KubeObject } from '../../../apimachinery/types.js';
import type { GVR, KubeClient } from '../../../client/types.js';
import { type Step } from './steps.js';
import { arr, carryTransitions, CRDS, CSVS, INSTALL_PLANS, now, obj, OPERATORS_V1ALPHA1, specOf, statusOf, str, type Condition, type Json } from './shared.js';
import { OWNER_LABELS } from './steps.js';

/** Validates an object against a CRD version's openAPIV3Schema; the problems, as text. */
export type SchemaValidator = (object: unknown, openAPIV3Schema: unknown) => string[];

export interface ExecutorOptions {
  readonly validateAgainstSchema?: SchemaValidator;
  /** How long to wait for a CRD to become Established before trying again later (default 30 s). */
  readonly establishTimeoutMs?: number;
  /** Called before each step is applied (tests: a fault injected mid-plan). */
  readonly beforeStep?: (plan: string, index: number, step: Step) => void | Promise<void>;
}

/** What the executor did with a plan: done (nothing to wait for), or asked to be called again. */
export type ExecuteResult = { again?: number };

interface Served {
  resource: string;
  namespaced: boolean;
}

/** The API server's discovery, as kind → resource per group/version. */
class Discovery {
  private map: Map<string, Served> | undefined;
  constructor(private readonly client: KubeClient) {}
  async lookup(group: string, version: string, kind: string, refresh = false): Promise<Served | undefined> {
    if (!this.map || refresh) {
      const map = new Map<string, Served>();
      for (const list of await this.client.discovery()) {
        for (const r of list.resources) {
          if (r.name.includes('/')) continue;
          map.set(`${list.groupVersion}/${r.kind}`, { resource: r.name, namespaced: r.namespaced });
        }
      }
      this.map = map;
    }
    return this.map.get(`${group ? `${group}/` : ''}${version}/${kind}`);
  }
}

const DONE = new Set(['Created', 'Present']);

/** The shortest pause between two writes of a plan's step statuses while it is being applied. */
const STATUS_WRITE_MS = 250;

export class PlanFailure extends Error {}

export class InstallPlanExecutor {
  constructor(
    private readonly client: KubeClient,
    private readonly opts: ExecutorOptions = {},
  ) {}

  /** Moves one InstallPlan on as far as it goes now. */
  async sync(plan: KubeObject): Promise<ExecuteResult> {
    const ns = plan.metadata?.namespace ?? '';
    const name = plan.metadata?.name ?? '';
    const status = statusOf(plan);
    const phase = str(status.phase);
    if (phase === 'Complete' || phase === 'Failed') return {};
    const steps = arr(status.plan) as Step[];
    if (!steps.length && phase === '') return {};
    if (phase === 'RequiresApproval' || phase === '') {
      const approved = specOf(plan).approved === true;
      if (!approved) {
        if (phase === '') await this.writeStatus(ns, name, { phase: 'RequiresApproval' });
        return {};
      }
      await this.writeStatus(ns, name, { phase: 'Installing' });
    }
    const discovery = new Discovery(this.client);
    const csvUids = new Map<string, string>();
    const waiting: string[] = [];
    // Step statuses not written yet, and when they last were.
    let unwritten = false;
    let lastWrite = performance.now();
    const flush = async (): Promise<void> => {
      if (!unwritten) return;
      unwritten = false;
      lastWrite = performance.now();
      await this.writeStatus(ns, name, { plan: steps });
    };
    try {
      const crdNames = steps.filter((s) => s.resource.kind === 'CustomResourceDefinition').map((s) => s.resource.name);
      let crdsReady = crdNames.length === 0;
      for (const [index, step] of steps.entries()) {
        const r = step.resource;
        // Everything after the CRDs waits for them to be Established (and discovery to serve them).
        if (r.kind !== 'CustomResourceDefinition' && !crdsReady) {
          await flush();
          if (await this.waitEstablished(crdNames)) return { again: 1000 };
          crdsReady = true;
          await discovery.lookup('', 'v1', '', true);
        }
        if (DONE.has(step.status)) continue;
        await this.opts.beforeStep?.(name, index, step);
        const served = (await discovery.lookup(r.group, r.version, r.kind)) ?? (await discovery.lookup(r.group, r.version, r.kind, true));
        if (!served) {
          step.status = 'WaitingForAPI';
          waiting.push(`${r.kind} ${r.name}`);
          continue;
        }
        const o = JSON.parse(r.manifest) as Json;
        const meta = obj(o.metadata);
        if (!served.namespaced) delete meta.namespace;
        else meta.namespace = ns;
        o.metadata = meta;
        // Ownership: namespaced objects belong to their CSV (garbage collected with it); cluster-scoped
        // ones carry OLM's owner labels (removed when the CSV is deleted).
        if (r.kind !== 'CustomResourceDefinition' && r.kind !== 'ClusterServiceVersion') {
          if (served.namespaced) {
            const uid = csvUids.get(step.resolving) ?? (await this.csvUid(ns, step.resolving));
            if (uid) {
              csvUids.set(step.resolving, uid);
              meta.ownerReferences = [
                { apiVersion: OPERATORS_V1ALPHA1, kind: 'ClusterServiceVersion', name: step.resolving, uid, blockOwnerDeletion: false, controller: false },
              ];
            }
          } else {
            meta.labels = { ...obj(meta.labels), ...OWNER_LABELS(step.resolving, ns) };
          }
        }
        const gvr: GVR = { group: r.group, version: r.version, resource: served.resource };
        step.status = await this.apply(gvr, served.namespaced ? ns : undefined, o, r.kind);
        unwritten = true;
        if (performance.now() - lastWrite >= STATUS_WRITE_MS) await flush();
      }
      if (!crdsReady) {
        await flush();
        if (await this.waitEstablished(crdNames)) return { again: 1000 };
      }
    } catch (e) {
      const retried = !(e instanceof StatusError) && !(e instanceof PlanFailure);
      if (retried || (e instanceof StatusError && (e.code >= 500 || e.code === 409 || e.code === 429))) {
        // What landed before the error is recorded (best effort: the error is what is reported).
        await flush().catch(() => {});
        throw e;
      }
      await this.writeStatus(ns, name, {
        phase: 'Failed',
        plan: steps,
        conditions: carryTransitions(status.conditions, [{ type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: e.message }]),
      });
      return {};
    }
    const condition: Condition = { type: 'Installed', status: 'True' };
    if (waiting.length) condition.message = `not applied, no module serves their API: ${waiting.join(', ')}`;
    await this.writeStatus(ns, name, { phase: 'Complete', plan: steps, conditions: carryTransitions(status.conditions, [condition]) });
    return {};
  }

  private async csvUid(ns: string, name: string): Promise<string | undefined> {
    try {
      return (await this.client.get(CSVS, ns, name)).metadata?.uid;
    } catch (e) {
      if (e instanceof StatusError && e.code === 404) return undefined;
      throw e;
    }
  }

  /** Whether any of the CRDs is not Established yet (after waiting a while). */
  private async waitEstablished(names: string[]): Promise<boolean> {
    const until = Date.now() + (this.opts.establishTimeoutMs ?? 30_000);
    for (;;) {
      let pending = false;
      for (const n of names) {
        const crd = await this.client.get(CRDS, undefined, n).catch(() => undefined);
        const established = arr(obj(crd && (crd as Json).status).conditions).some((c) => obj(c).type === 'Established' && obj(c).status === 'True');
        if (!established) pending = true;
      }
      if (!pending) return false;
      if (Date.now() > until) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Creates the object, or updates it when it exists (CRDs after OLM's upgrade safety checks). */
  private async apply(gvr: GVR, ns: string | undefined, o: Json, kind: string): Promise<'Created' | 'Present'> {
    const meta = obj(o.metadata);
    const name = str(meta.name);
    try {
      await this.client.create(gvr, ns, o, { fieldManager: 'catalog-operator' });
      return 'Created';
    } catch (e) {
      if (!(e instanceof StatusError) || e.code !== 409) throw e;
    }
    const existing: Json = await this.client.get(gvr, ns, name);
    const old = obj(existing.metadata);
    if (kind === 'CustomResourceDefinition') await this.checkCrdUpgrade(existing, o);
    if (kind === 'ClusterServiceVersion') return 'Present';
    const owners = [...arr(old.ownerReferences)];
    for (const ref of arr(meta.ownerReferences)) if (!owners.some((x) => obj(x).uid === obj(ref).uid)) owners.push(ref);
    const body: Json = {
      ...existing,
      ...o,
      metadata: {
        ...old,
        labels: { ...obj(old.labels), ...obj(meta.labels) },
        annotations: { ...obj(old.annotations), ...obj(meta.annotations) },
        ...(owners.length ? { ownerReferences: owners } : {}),
      },
    };
    if ('status' in existing) body.status = existing.status;
    await this.client.update(gvr, ns, body, { fieldManager: 'catalog-operator' });
    return 'Present';
  }

  /** OLM's CRD upgrade checks: no stored version dropped, every stored custom resource valid under the new schema. */
  private async checkCrdUpgrade(existing: Json, next: Json): Promise<void> {
    const name = str(obj(existing.metadata).name);
    const versions = arr(obj(next.spec).versions).map(obj);
    const names = new Set(versions.map((v) => str(v.name)));
    for (const stored of arr(obj(existing.status).storedVersions).map(str)) {
      if (!names.has(stored))
        throw new PlanFailure(`risk of data loss updating "${name}": new CRD removes version ${stored} that is listed as a stored version on the existing CRD`);
    }
    const validate = this.opts.validateAgainstSchema;
    if (!validate) return;
    const spec = obj(existing.spec);
    const group = str(spec.group);
    const plural = str(obj(spec.names).plural);
    const oldServed = new Set(
      arr(spec.versions)
        .filter((v) => obj(v).served !== false)
        .map((v) => str(obj(v).name)),
    );
    for (const v of versions) {
      const schema = obj(v.schema).openAPIV3Schema;
      if (!schema || !oldServed.has(str(v.name))) continue;
      const list = await this.client.list({ group, version: str(v.name), resource: plural });
      for (const cr of list.items) {
        const problems = validate(cr, schema);
        if (problems.length) {
          const crName = cr.metadata?.namespace ? `${cr.metadata.namespace}/${cr.metadata.name ?? ''}` : (cr.metadata?.name ?? '');
          throw new PlanFailure(
            `error validating existing CRs against new CRD's schema for "${name}": error validating custom resource against new schema for ${str(obj(next.spec).names && obj(obj(next.spec).names).kind)} ${crName}: ${problems.join(', ')}`,
          );
        }
      }
    }
  }

  private async writeStatus(ns: string, name: string, status: Json): Promise<void> {
    await this.client.patch(
      INSTALL_PLANS,
      ns,
      name,
      'merge',
      { status: { ...status, lastUpdated: now() } },
      { subresource: 'status', fieldManager: 'catalog-operator' },
    );
  }
}
