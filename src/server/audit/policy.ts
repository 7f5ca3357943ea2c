// The audit Policy (audit.k8s.io/v1, `--audit-policy-file`): read as upstream's policy reader does
// (k8s.io/apiserver/pkg/audit/policy/reader.go: unknown fields only warn, a type error or a missing
// kind/apiVersion refuses), validated with upstream's field paths and words (apis/audit/validation),
// and evaluated as upstream's checker.go: the first rule that matches decides the level.
import { readFileSync } from 'node:fs';
import { fieldIssue, issueString, omitValue, type FieldIssue } from '../../apimachinery/errors.js';
import { StructDecoder } from '../../golang/json-struct.js';
import { sortedKeysDeep } from '../../golang/json.js';
import { yamlToJSON } from '../../golang/yaml-read.js';

export type Level = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type Stage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

export const LEVELS: readonly Level[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
export const STAGES: readonly Stage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/** The level's rank: None < Metadata < Request < RequestResponse (Level.Less upstream). */
export function levelRank(l: Level): number {
  return LEVELS.indexOf(l);
}

export interface GroupResources {
  readonly group: string;
  readonly resources: readonly string[];
  readonly resourceNames: readonly string[];
}

export interface PolicyRule {
  readonly level: Level;
  readonly users: readonly string[];
  readonly userGroups: readonly string[];
  readonly verbs: readonly string[];
  readonly resources: readonly GroupResources[];
  readonly namespaces: readonly string[];
  readonly nonResourceURLs: readonly string[];
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean | undefined;
}

export interface Policy {
  readonly rules: readonly PolicyRule[];
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean;
}

/** What the policy decides for one request (RequestAuditConfig). */
export interface RequestAuditConfig {
  readonly level: Level;
  readonly omitStages: readonly Stage[];
  readonly omitManagedFields: boolean;
}

/** Who makes the request; undefined for a request that failed authentication. */
export type AuditSubject = { readonly name: string; readonly groups: readonly string[] } | undefined;

/** What a rule is matched against besides the user (upstream's authorizer.Attributes; a RequestInfo is one). */
export interface AuditAttributes {
  readonly verb: string;
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly namespace: string;
  readonly apiGroup: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

const API_VERSION = 'audit.k8s.io/v1';

/** LoadPolicyFromFile: a problem is an Error whose message ends with the file, as upstream's. */
export function loadPolicyFile(path: string, warn?: (msg: string) => void): Policy {
  if (path === '') throw new Error('file path not specified');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new Error(`failed to read file path ${JSON.stringify(path)}: ${(e as Error).message}`, { cause: e });
  }
  try {
    return parsePolicy(text, warn);
  } catch (e) {
    throw new Error(`${(e as Error).message}: from file ${path}`, { cause: e });
  }
}

/** LoadPolicyFromBytes: decode (YAML or JSON), check the group/version, validate, refuse 0 rules. */
export function parsePolicy(text: string, warn?: (msg: string) => void): Policy {
  let doc: unknown;
  try {
    doc = yamlToJSON(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw new Error(`failed decoding: ${(e as Error).message}`, { cause: e });
  }
  if (doc === undefined) doc = null;
  // Upstream prints the document as sigs.k8s.io/yaml made it JSON: through a Go map, keys sorted.
  const json = (): string => JSON.stringify(sortedKeysDeep(doc));
  const o = doc !== null && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
  const kind = typeof o.kind === 'string' ? o.kind : '';
  const apiVersion = typeof o.apiVersion === 'string' ? o.apiVersion : '';
  if (kind === '') throw new Error(`failed decoding: Object 'Kind' is missing in '${json()}'`);
  if (apiVersion === '') throw new Error(`failed decoding: Object 'apiVersion' is missing in '${json()}'`);
  if (apiVersion !== API_VERSION || kind !== 'Policy') {
    throw new Error(
      `failed decoding: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "k8s.io/apiserver/pkg/audit/scheme.go:30"`,
    );
  }
  const strict = new StructDecoder({ disallowUnknownFields: true });
  decodePolicy(strict, doc);
  let policy: Policy;
  if (strict.firstError === undefined) {
    policy = decodePolicy(new StructDecoder(), doc);
  } else {
    // Upstream decodes strictly first and falls back to a lenient decode for unknown fields only.
    const lenient = new StructDecoder();
    policy = decodePolicy(lenient, doc);
    if (lenient.firstError !== undefined) throw new Error(`failed decoding: ${lenient.firstError}`);
    // (Upstream's strict decoder names the field's path, `rules[0].levle`; this names the field.)
    warn?.(`Audit policy contains errors, falling back to lenient decoding: strict decoding error: ${strict.firstError.replace(/^json: /, '')}`);
  }
  const issues = validatePolicy(policy);
  if (issues.length === 1) throw new Error(issueString(issues[0]!));
  if (issues.length > 1) throw new Error(`[${issues.map(issueString).join(', ')}]`);
  if (policy.rules.length === 0) throw new Error('loaded illegal policy with 0 rules');
  return policy;
}

function decodePolicy(d: StructDecoder, doc: unknown): Policy {
  let rules: PolicyRule[] = [];
  let omitStages: Stage[] = [];
  let omitManagedFields = false;
  d.fields(doc, 'Policy', 'v1.Policy', ['kind', 'apiVersion', 'metadata', 'rules', 'omitStages', 'omitManagedFields'], (f, v) => {
    if (f === 'rules') rules = (d.slice(v, '[]v1.PolicyRule') ?? []).map((r) => decodeRule(d, r));
    else if (f === 'omitStages') omitStages = stages(d, v);
    else if (f === 'omitManagedFields') omitManagedFields = d.bool(v) ?? false;
    else if (f === 'kind' || f === 'apiVersion') d.string(v);
  });
  return { rules, omitStages, omitManagedFields };
}

function stages(d: StructDecoder, v: unknown): Stage[] {
  return (d.slice(v, '[]v1.Stage') ?? []).map((s) => (d.string(s, 'v1.Stage') ?? '') as Stage);
}

function decodeRule(d: StructDecoder, v: unknown): PolicyRule {
  const r = {
    level: '' as Level,
    users: [] as string[],
    userGroups: [] as string[],
    verbs: [] as string[],
    resources: [] as GroupResources[],
    namespaces: [] as string[],
    nonResourceURLs: [] as string[],
    omitStages: [] as Stage[],
    omitManagedFields: undefined as boolean | undefined,
  };
  const names = ['level', 'users', 'userGroups', 'verbs', 'resources', 'namespaces', 'nonResourceURLs', 'omitStages', 'omitManagedFields'];
  d.fields(v, 'PolicyRule', 'v1.PolicyRule', names, (f, x) => {
    switch (f) {
      case 'level':
        r.level = (d.string(x, 'v1.Level') ?? '') as Level;
        break;
      case 'users':
      case 'userGroups':
      case 'verbs':
      case 'namespaces':
      case 'nonResourceURLs':
        r[f] = d.strings(x) ?? [];
        break;
      case 'resources':
        r.resources = (d.slice(x, '[]v1.GroupResources') ?? []).map((g) => decodeGroupResources(d, g));
        break;
      case 'omitStages':
        r.omitStages = stages(d, x);
        break;
      case 'omitManagedFields':
        r.omitManagedFields = d.bool(x);
        break;
    }
  });
  return r;
}

function decodeGroupResources(d: StructDecoder, v: unknown): GroupResources {
  const g = { group: '', resources: [] as string[], resourceNames: [] as string[] };
  d.fields(v, 'GroupResources', 'v1.GroupResources', ['group', 'resources', 'resourceNames'], (f, x) => {
    if (f === 'group') g.group = d.string(x) ?? '';
    else g[f as 'resources' | 'resourceNames'] = d.strings(x) ?? [];
  });
  return g;
}

/** validation.ValidatePolicy, with upstream's paths (note `resources.group`, without an index, as upstream writes it). */
export function validatePolicy(p: Policy): FieldIssue[] {
  const issues: FieldIssue[] = [...validateOmitStages(p.omitStages, 'omitStages')];
  p.rules.forEach((rule, i) => {
    const path = `rules[${i}]`;
    if (rule.level === ('' as Level)) issues.push(fieldIssue.required(`${path}.level`));
    else if (!LEVELS.includes(rule.level)) issues.push(fieldIssue.notSupported(`${path}.level`, rule.level, LEVELS));
    rule.nonResourceURLs.forEach((url, j) => {
      if (url === '*') return;
      const at = `${path}.nonResourceURLs[${j}]`;
      if (!url.startsWith('/')) issues.push(fieldIssue.invalid(at, url, "non-resource URL rules must begin with a '/' character"));
      if (url !== '' && url.slice(0, -1).includes('*'))
        issues.push(fieldIssue.invalid(at, url, "non-resource URL wildcards '*' must be the final character of the rule"));
    });
    for (const gr of rule.resources) {
      if (gr.group !== '') {
        const msgs = dnsSubdomainProblems(gr.group);
        if (msgs.length) issues.push(fieldIssue.invalid(`${path}.resources.group`, gr.group, msgs.join(',')));
      }
      if (gr.resourceNames.length > 0 && gr.resources.length === 0) {
        issues.push(invalidStrings(`${path}.resources.resourceNames`, gr.resourceNames, 'using resourceNames requires at least one resource'));
      }
    }
    issues.push(...validateOmitStages(rule.omitStages, `${path}.omitStages`));
    if (rule.nonResourceURLs.length > 0 && (rule.resources.length > 0 || rule.namespaces.length > 0)) {
      issues.push(invalidStrings(`${path}.nonResourceURLs`, rule.nonResourceURLs, 'rules cannot apply to both regular resources and non-resource URLs'));
    }
  });
  return issues;
}

/** field.Invalid of a []string: the value printed with %#v (`[]string{"a", "b"}`), then the detail. */
function invalidStrings(field: string, xs: readonly string[], detail: string): FieldIssue {
  return { type: 'FieldValueInvalid', field, badValue: omitValue, detail: `[]string{${xs.map((x) => JSON.stringify(x)).join(', ')}}: ${detail}` };
}

function validateOmitStages(stages: readonly Stage[], path: string): FieldIssue[] {
  const out: FieldIssue[] = [];
  stages.forEach((s, i) => {
    if (!STAGES.includes(s)) out.push(fieldIssue.invalid(`${path}[${i}]`, s, `allowed stages are ${STAGES.join(',')}`));
  });
  return out;
}

/** validation.IsDNS1123Subdomain's messages. */
function dnsSubdomainProblems(value: string): string[] {
  const msgs: string[] = [];
  if (value.length > 253) msgs.push('must be no more than 253 characters');
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(value)) {
    msgs.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    );
  }
  return msgs;
}

/** policy.NewPolicyRuleEvaluator: the policy's omitStages join every rule's. */
export class PolicyRuleEvaluator {
  private readonly rules: readonly PolicyRule[];
  private readonly fallback: RequestAuditConfig;
  private readonly configs: readonly RequestAuditConfig[];

  constructor(readonly policy: Policy) {
    this.rules = policy.rules;
    this.configs = policy.rules.map((r) => ({
      level: r.level,
      omitStages: [...new Set([...policy.omitStages, ...r.omitStages])],
      omitManagedFields: r.omitManagedFields ?? policy.omitManagedFields,
    }));
    this.fallback = { level: 'None', omitStages: policy.omitStages, omitManagedFields: policy.omitManagedFields };
  }

  /** EvaluatePolicyRule: the first matching rule's level and stages, else None. */
  evaluate(user: AuditSubject, a: AuditAttributes): RequestAuditConfig {
    for (let i = 0; i < this.rules.length; i++) if (ruleMatches(this.rules[i]!, user, a)) return this.configs[i]!;
    return this.fallback;
  }
}

export function ruleMatches(r: PolicyRule, user: AuditSubject, a: AuditAttributes): boolean {
  if (r.users.length > 0 && (user === undefined || !r.users.includes(user.name))) return false;
  if (r.userGroups.length > 0 && (user === undefined || !user.groups.some((g) => r.userGroups.includes(g)))) return false;
  if (r.verbs.length > 0 && !r.verbs.includes(a.verb)) return false;
  if (r.namespaces.length > 0 || r.resources.length > 0) return ruleMatchesResource(r, a);
  if (r.nonResourceURLs.length > 0) return !a.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(a.path, spec));
  return true;
}

function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  // Upstream trims every trailing '*' (strings.TrimRight), so `/api**` is `/api*`.
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

function ruleMatchesResource(r: PolicyRule, a: AuditAttributes): boolean {
  if (!a.isResourceRequest) return false;
  // Cluster-scoped resources have the empty namespace.
  if (r.namespaces.length > 0 && !r.namespaces.includes(a.namespace)) return false;
  if (r.resources.length === 0) return true;
  const combined = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  for (const gr of r.resources) {
    if (gr.group !== a.apiGroup) continue;
    if (gr.resources.length === 0) return true;
    for (const res of gr.resources) {
      if (gr.resourceNames.length > 0 && !gr.resourceNames.includes(a.name)) continue;
      if (res === combined || res === '*') return true;
      if (a.subresource && res.startsWith('*/') && a.subresource === res.slice(2)) return true;
      if (res.endsWith('/*') && a.resource === res.slice(0, -2)) return true;
    }
  }
  return false;
}
