// Rule evaluation as upstream's pkg/apis/rbac/v1/evaluation_helpers.go (does a rule allow a
// request?) and component-helpers' policy_comparator.go (do the rules a user holds cover the rules
// a role grants?), plus pkg/registry/rbac/validation's CompactRules and CompactString for the
// escalation message.
import { goQuote } from '../../golang/strconv.js';
import type { AuthorizationAttributes } from '../authorizer.js';
import { ALL, type PolicyRule } from './types.js';

function has(list: readonly string[] | undefined, s: string): boolean {
  if (list === undefined) return false;
  for (let i = 0; i < list.length; i++) if (list[i] === s) return true;
  return false;
}

export function verbMatches(rule: PolicyRule, verb: string): boolean {
  const verbs = rule.verbs;
  if (verbs === undefined) return false;
  for (let i = 0; i < verbs.length; i++) if (verbs[i] === ALL || verbs[i] === verb) return true;
  return false;
}

export function apiGroupMatches(rule: PolicyRule, group: string): boolean {
  const groups = rule.apiGroups;
  if (groups === undefined) return false;
  for (let i = 0; i < groups.length; i++) if (groups[i] === ALL || groups[i] === group) return true;
  return false;
}

/** `*`, the exact `resource` or `resource/subresource`, or `*\/subresource`. */
export function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  const resources = rule.resources;
  if (resources === undefined) return false;
  for (let i = 0; i < resources.length; i++) {
    const r = resources[i]!;
    if (r === ALL || r === combined) return true;
    if (subresource.length > 0 && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource)) return true;
  }
  return false;
}

/** No resourceNames: every name; otherwise the request's name must be listed (a list has no name). */
export function resourceNameMatches(rule: PolicyRule, name: string): boolean {
  const names = rule.resourceNames;
  if (names === undefined || names.length === 0) return true;
  return has(names, name);
}

/** `*`, the exact path, or a prefix ending in `*`. */
export function nonResourceURLMatches(rule: PolicyRule, path: string): boolean {
  const urls = rule.nonResourceURLs;
  if (urls === undefined) return false;
  for (let i = 0; i < urls.length; i++) {
    const u = urls[i]!;
    if (u === ALL || u === path) return true;
    if (u.endsWith('*') && path.startsWith(trimRightStars(u))) return true;
  }
  return false;
}

function trimRightStars(s: string): string {
  let end = s.length;
  while (end > 0 && s[end - 1] === '*') end--;
  return s.slice(0, end);
}

/** rbac.RuleAllows. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (a.isResourceRequest) {
    const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    return (
      verbMatches(rule, a.verb) && apiGroupMatches(rule, a.apiGroup) && resourceMatches(rule, combined, a.subresource) && resourceNameMatches(rule, a.name)
    );
  }
  return verbMatches(rule, a.verb) && nonResourceURLMatches(rule, a.path);
}

/** validation.BreakdownRule: one verb, one resource (or URL), at most one name per rule. */
export function breakdownRule(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? []) {
    for (const resource of rule.resources ?? []) {
      for (const verb of rule.verbs ?? []) {
        if (rule.resourceNames?.length) {
          for (const name of rule.resourceNames) out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [name] });
        } else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
    }
  }
  for (const url of rule.nonResourceURLs ?? []) for (const verb of rule.verbs ?? []) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function hasAll(set: readonly string[] | undefined, contains: readonly string[] | undefined): boolean {
  const owning = new Set(set ?? []);
  for (const e of contains ?? []) if (!owning.has(e)) return false;
  return true;
}

function resourceCoversAll(set: readonly string[] | undefined, covers: readonly string[] | undefined): boolean {
  if (has(set, ALL) || hasAll(set, covers)) return true;
  for (const path of covers ?? []) {
    if (has(set, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(set, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function nonResourceURLCovers(owner: string, sub: string): boolean {
  return owner === sub || (owner.endsWith('*') && sub.startsWith(trimRightStars(owner)));
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, ALL) || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, ALL) || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((p) => (owner.nonResourceURLs ?? []).some((o) => nonResourceURLCovers(o, p)));
  const names = !sub.resourceNames?.length ? !owner.resourceNames?.length : !owner.resourceNames?.length || hasAll(owner.resourceNames, sub.resourceNames);
  return verbs && groups && resources && names && urls;
}

/** validation.Covers: whether `owner` covers `servant`, and the broken-down rules it does not. */
export function covers(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): { covered: boolean; missing: PolicyRule[] } {
  const missing: PolicyRule[] = [];
  for (const s of servant) {
    for (const sub of breakdownRule(s)) {
      if (!owner.some((o) => ruleCovers(o, sub))) missing.push(sub);
    }
  }
  return { covered: missing.length === 0, missing };
}

/** CompactRules: rules of one group and one resource (nothing else) merged, their verbs appended. */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule>();
  for (const r of rules) {
    const isSimple = !r.resourceNames?.length && !r.nonResourceURLs?.length && r.apiGroups?.length === 1 && r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = `${r.apiGroups![0]}\u0000${r.resources![0]}`;
    const seen = simple.get(key);
    if (seen) seen.verbs = [...(seen.verbs ?? []), ...(r.verbs ?? [])];
    else simple.set(key, { apiGroups: [...r.apiGroups!], resources: [...r.resources!], verbs: [...(r.verbs ?? [])] });
  }
  return [...out, ...simple.values()];
}

/** Go's %q of a []string: `["a" "b"]`. */
function quoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(' ')}]`;
}

/** rbacv1helpers.CompactString: `{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${quoteList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${quoteList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${quoteList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${quoteList(r.resourceNames)}`);
  if (r.verbs?.length) parts.push(`Verbs:${quoteList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}

export { quoteList as goQuoteList };
