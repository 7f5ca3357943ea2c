// ResourceQuota's resource names (k8s.io/kubernetes pkg/apis/core/helper and pkg/quota/v1): which
// names a quota may hold, which count objects, and which objects a name counts. Pure functions,
// shared by the quota admission plugin (registry) and the quota controller (controllers).
import { isQualifiedName } from './validation/names.js';

/**
 * The object-count names that predate `count/` (core's evaluators register them for their kinds):
 * each counts the core resource of the same name.
 */
export const LEGACY_COUNT_RESOURCES: ReadonlySet<string> = new Set([
  'configmaps',
  'secrets',
  'resourcequotas',
  'services',
  'persistentvolumeclaims',
  'pods',
  'replicationcontrollers',
]);

/** helper.integerResources: the legacy object counts and the two service counts. */
const INTEGER_RESOURCES = new Set([...LEGACY_COUNT_RESOURCES, 'services.nodeports', 'services.loadbalancers']);

/** helper.standardQuotaResources: compute resources and the integer ones. */
const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  ...INTEGER_RESOURCES,
]);

/** helper.standardResources (IsStandardResourceName without hugepages): the quota ones and `storage`. */
const STANDARD_RESOURCES = new Set([...STANDARD_QUOTA_RESOURCES, 'storage']);

const isHugePages = (name: string): boolean => name.startsWith('hugepages-') || name.startsWith('requests.hugepages-');

export function isStandardResourceName(name: string): boolean {
  return STANDARD_RESOURCES.has(name) || isHugePages(name);
}

export function isStandardQuotaResourceName(name: string): boolean {
  return STANDARD_QUOTA_RESOURCES.has(name) || isHugePages(name);
}

/** helper.IsNativeResource: no domain, or a kubernetes.io one. */
function isNativeResource(name: string): boolean {
  return !name.includes('/') || name.includes('kubernetes.io/');
}

/** helper.IsExtendedResourceName (count/... is one: its quantities must be integers). */
export function isExtendedResourceName(name: string): boolean {
  if (isNativeResource(name) || name.startsWith('requests.')) return false;
  return isQualifiedName(`requests.${name}`).length === 0;
}

export function isIntegerResourceName(name: string): boolean {
  return INTEGER_RESOURCES.has(name) || isExtendedResourceName(name);
}

/** The quota names charged one per object of group/resource: `count/<resource>[.<group>]` and a legacy name. */
export function objectCountNames(group: string, resource: string): string[] {
  const names = [group ? `count/${resource}.${group}` : `count/${resource}`];
  if (group === '' && LEGACY_COUNT_RESOURCES.has(resource)) names.push(resource);
  return names;
}

/** The group/resource whose objects a quota name counts, or undefined for names that are not object counts. */
export function countedResource(name: string): { group: string; resource: string } | undefined {
  if (name.startsWith('count/')) {
    const gr = name.slice('count/'.length);
    if (!gr) return undefined;
    const dot = gr.indexOf('.');
    return dot < 0 ? { group: '', resource: gr } : { group: gr.slice(dot + 1), resource: gr.slice(0, dot) };
  }
  return LEGACY_COUNT_RESOURCES.has(name) ? { group: '', resource: name } : undefined;
}

/** corev1 ResourceQuotaScope values (helper.standardResourceQuotaScopes). */
export const STANDARD_QUOTA_SCOPES: readonly string[] = [
  'Terminating',
  'NotTerminating',
  'BestEffort',
  'NotBestEffort',
  'PriorityClass',
  'CrossNamespacePodAffinity',
  'VolumeAttributesClass',
];

const POD_COMPUTE = new Set(['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory']);

/** helper.IsResourceQuotaScopeValidForResource. */
export function isScopeValidForResource(scope: string, resource: string): boolean {
  switch (scope) {
    case 'Terminating':
    case 'NotTerminating':
    case 'NotBestEffort':
    case 'PriorityClass':
    case 'CrossNamespacePodAffinity':
      return resource === 'pods' || POD_COMPUTE.has(resource);
    case 'BestEffort':
      return resource === 'pods';
    case 'VolumeAttributesClass':
      return resource === 'persistentvolumeclaims' || resource === 'requests.storage';
    default:
      return true;
  }
}
