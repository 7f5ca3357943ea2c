// Discovery helpers shared by the generic controllers: which resources the server serves, so that
// custom resources (and any later module's resources) are handled without naming them.
import type { APIResourceList, GVR, KubeClient, RequestOptions } from '../client/types.js';

export interface DiscoveredResource extends GVR {
  readonly kind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** "group/version" or "version" → group and version; throws on anything else (schema.ParseGroupVersion). */
export function parseGroupVersion(gv: string): { group: string; version: string } {
  if (gv === '' || gv === '/') return { group: '', version: '' };
  const parts = gv.split('/');
  if (parts.length === 1) return { group: '', version: parts[0]! };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  throw new Error(`unexpected GroupVersion string: ${gv}`);
}

export interface DiscoveryResult {
  readonly resources: DiscoveredResource[];
  /** GroupVersions whose string did not parse (the namespace controller reports them). */
  readonly parseErrors: Error[];
}

/**
 * The preferred version of every top-level resource (subresources skipped) that supports all of
 * `verbs` (discovery.FilteredBy(SupportsAllVerbs) over ServerPreferredResources): the first
 * version a group lists is its preferred one.
 */
export async function discoverResources(client: KubeClient, verbs: readonly string[], opts: RequestOptions = {}): Promise<DiscoveryResult> {
  const lists: APIResourceList[] = await client.discovery(opts);
  const seen = new Set<string>();
  const resources: DiscoveredResource[] = [];
  const parseErrors: Error[] = [];
  const preferredVersion = new Map<string, string>();
  for (const list of lists) {
    let gv: { group: string; version: string };
    try {
      gv = parseGroupVersion(list.groupVersion);
    } catch (e) {
      parseErrors.push(e as Error);
      continue;
    }
    if (!preferredVersion.has(gv.group)) preferredVersion.set(gv.group, gv.version);
    if (preferredVersion.get(gv.group) !== gv.version) continue;
    for (const r of list.resources) {
      if (r.name.includes('/')) continue;
      if (!verbs.every((v) => r.verbs.includes(v))) continue;
      const id = `${gv.group}/${r.name}`;
      if (seen.has(id)) continue;
      seen.add(id);
      resources.push({ group: gv.group, version: gv.version, resource: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs });
    }
  }
  return { resources, parseErrors };
}

export function gvrString(g: GVR): string {
  return g.group ? `${g.resource}.${g.version}.${g.group}` : `${g.resource}.${g.version}`;
}
