// What the install flow's parts share: the GVRs it reads and writes, JSON helpers, and OLM's
// condition bookkeeping (a condition keeps its lastTransitionTime while its status stays).
import type { KubeObject } from '../../../apimachinery/types.js';
import type { GVR } from '../../../client/types.js';

export type Json = Record<string, unknown>;

export const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});
export const str = (v: unknown): string => (typeof v === 'string' ? v : '');
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

const OPERATORS = 'operators.coreos.com';
export const SUBSCRIPTIONS: GVR = { group: OPERATORS, version: 'v1alpha1', resource: 'subscriptions' };
export const INSTALL_PLANS: GVR = { group: OPERATORS, version: 'v1alpha1', resource: 'installplans' };
export const CSVS: GVR = { group: OPERATORS, version: 'v1alpha1', resource: 'clusterserviceversions' };
export const OPERATOR_GROUPS: GVR = { group: OPERATORS, version: 'v1', resource: 'operatorgroups' };
export const CATALOG_SOURCES: GVR = { group: OPERATORS, version: 'v1alpha1', resource: 'catalogsources' };
export const CRDS: GVR = { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' };
export const CLUSTER_ROLES: GVR = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterroles' };
export const CLUSTER_ROLE_BINDINGS: GVR = { group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'clusterrolebindings' };

export const OPERATORS_V1ALPHA1 = `${OPERATORS}/v1alpha1`;

export function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

export const statusOf = (o: KubeObject): Json => obj((o as Json).status);
export const specOf = (o: KubeObject): Json => obj((o as Json).spec);
export const nameOf = (o: KubeObject): string => o.metadata?.name ?? '';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

/**
 * `next` with each condition's lastTransitionTime carried over from `prev` when its status did not
 * change (and set to now when it did).
 */
export function carryTransitions(prev: unknown, next: Condition[]): Condition[] {
  const old = new Map(arr(prev).map((c) => [str(obj(c).type), obj(c)]));
  return next.map((c) => {
    const o = old.get(c.type);
    const t = o && o.status === c.status && str(o.lastTransitionTime) ? str(o.lastTransitionTime) : now();
    return { ...c, lastTransitionTime: t };
  });
}

/** Status equality ignoring the fields that only record when something was written. */
export function sameStatus(a: unknown, b: unknown): boolean {
  return JSON.stringify(stripTimes(a)) === JSON.stringify(stripTimes(b));
}

function stripTimes(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripTimes);
  if (v && typeof v === 'object') {
    const out: Json = {};
    for (const k of Object.keys(v).sort()) {
      if (k === 'lastUpdated' || k === 'lastTransitionTime' || k === 'lastUpdateTime' || k === 'lastHeartbeatTime') continue;
      out[k] = stripTimes((v as Json)[k]);
    }
    return out;
  }
  return v;
}
