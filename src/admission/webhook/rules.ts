// Which webhooks a request goes to (k8s.io/apiserver/pkg/admission/plugin/webhook/predicates):
// the rules (operation, group, version, resource/subresource, scope), the namespace selector
// (the namespace's labels; a Namespace's own) and the object selector (old or new object).
import type { AdmissionAttributes } from '../interfaces.js';
import type { WebhookRule } from './types.js';
import { ADMISSION_REGISTRATION_GROUP } from './types.js';

/** rules.Matcher.Matches. */
export function ruleMatches(r: WebhookRule, a: AdmissionAttributes): boolean {
  return (
    scopeMatches(r.scope, a) &&
    anyOrIncludes(r.operations, a.operation) &&
    anyOrIncludes(r.apiGroups, a.resource.group) &&
    anyOrIncludes(r.apiVersions, a.resource.version) &&
    resourceMatches(r.resources, a)
  );
}

function anyOrIncludes(list: readonly string[] | undefined, v: string): boolean {
  if (!list) return false;
  for (const x of list) if (x === '*' || x === v) return true;
  return false;
}

const isNamespaceResource = (a: AdmissionAttributes): boolean => a.resource.group === '' && a.resource.version === 'v1' && a.resource.resource === 'namespaces';

function scopeMatches(scope: string | undefined, a: AdmissionAttributes): boolean {
  if (scope === undefined || scope === '*') return true;
  // A Namespace is cluster-scoped, though its requests carry its name as their namespace.
  if (scope === 'Namespaced') return !isNamespaceResource(a) && a.namespace !== '';
  if (scope === 'Cluster') return isNamespaceResource(a) || a.namespace === '';
  return false;
}

function resourceMatches(resources: readonly string[] | undefined, a: AdmissionAttributes): boolean {
  for (const rs of resources ?? []) {
    const slash = rs.indexOf('/');
    const res = slash < 0 ? rs : rs.slice(0, slash);
    const sub = slash < 0 ? '' : rs.slice(slash + 1);
    if ((res === '*' || res === a.resource.resource) && (sub === '*' || sub === a.subresource)) return true;
  }
  return false;
}

const CONFIGURATION_RESOURCES = new Set([
  'validatingwebhookconfigurations',
  'mutatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

/** rules.IsExemptAdmissionConfigurationResource: webhooks are never called for admission's own configuration. */
export function isExemptAdmissionConfigurationResource(a: AdmissionAttributes): boolean {
  return a.resource.group === ADMISSION_REGISTRATION_GROUP && CONFIGURATION_RESOURCES.has(a.resource.resource);
}

export { isNamespaceResource };
