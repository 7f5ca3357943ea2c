// Defaulting of a request body's apiVersion and kind from the endpoint, as kube's JSON serializer
// does (runtime/serializer/json gvkWithDefaults): create and update handlers decode with the
// endpoint's GroupVersionKind as default, so `{"metadata":{"name":"x"}}` POSTed to
// /api/v1/namespaces is a Namespace. Only missing parts are filled; a wrong kind stays wrong.
import type { KubeObject } from '../apimachinery/types.js';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

/** Fills a missing `kind` and a missing (or group-matching, version-less) `apiVersion` in place. */
export function defaultGroupVersionKind(obj: KubeObject, def: GroupVersionKind): void {
  // Bodies are parsed JSON: a JSON null counts as missing, like an empty string.
  const kind: unknown = obj.kind;
  if (typeof kind !== 'string' || kind === '') obj.kind = def.kind;
  const rawApiVersion: unknown = obj.apiVersion;
  const av = typeof rawApiVersion === 'string' ? rawApiVersion : '';
  const slash = av.indexOf('/');
  let group = slash >= 0 ? av.slice(0, slash) : '';
  let version = slash >= 0 ? av.slice(slash + 1) : av;
  if (version === '' && group === '') {
    group = def.group;
    version = def.version;
  }
  if (version === '' && group === def.group) version = def.version;
  const defaulted = group ? `${group}/${version}` : version;
  if (version !== '' && defaulted !== av) obj.apiVersion = defaulted;
}
