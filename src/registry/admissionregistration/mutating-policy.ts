// admissionregistration.k8s.io v1beta1 (and v1alpha1, same storage and shape)
// MutatingAdmissionPolicy and MutatingAdmissionPolicyBinding
// (pkg/registry/admissionregistration/mutatingadmissionpolicy{,binding}): cluster-scoped, defaulted
// (failurePolicy Fail, reinvocationPolicy Never, matchConstraints as for ValidatingAdmissionPolicy)
// and validated as upstream, with its texts and field paths; mutations are compiled with the
// mutation CEL types (`Object{…}`, `JSONPatch{…}`), what does not compile is a 422 at the expression.
// The generation follows the spec. The plugin reads them through mutatingPolicyCache (source.ts's PolicyCache).
import { isDeepStrictEqual } from 'node:util';
import { fieldIssue, type FieldIssue } from '../../apimachinery/errors.js';
import { ALL_VERBS, type ResourceDescriptor } from '../../apimachinery/resource.js';
import type { Definitions } from '../../apimachinery/schema.js';
import type { KubeObject } from '../../apimachinery/types.js';
import { CEL_RESERVED_WORDS } from '../../apimachinery/cel/expressions.js';
import {
  META,
  apiVersionField,
  arrayOf,
  kind,
  kindField,
  listKind,
  objectMetaField,
  ref,
  str,
  stringList,
  struct,
} from '../../apimachinery/definitions/util.js';
import { isDNS1123Subdomain } from '../../apimachinery/validation/names.js';
import { compileExpression, type Declarations } from '../../admission/cel/compile.js';
import { compileMutatingPolicies, type CompiledMutatingPolicy, type MutatingPolicySource } from '../../admission/policy/mutating.js';
import type { MatchResources, NamedRuleWithOperations } from '../../admission/policy/types.js';
import type { MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, Mutation } from '../../admission/policy/mutating-types.js';
import type { ResourceRegistration } from '../registry.js';
import { MutatingAdmissionPolicy as MUTATING_POLICY_GATE } from '../../featuregate/kube-features.js';
import type { GenericStore, VersionConverter } from '../store.js';
import type { Strategy } from '../strategy.js';
import { PolicyCache } from './source.js';
import { bindingTable, policyTable } from './policy-tables.js';
import { defaultMatchResources, validateMatchResources, validateParamKind, validateParamRef } from './policy-validation.js';
import { validateMatchConditions } from './validation.js';

const GROUP = 'admissionregistration.k8s.io';
/** The version kplane stores (and the plugin reads); v1alpha1 is converted on the way. */
export const MUTATING_POLICY_VERSION = 'v1beta1';

// ---------- OpenAPI ----------

function definitions(version: string): Definitions {
  const AR = `io.k8s.api.admissionregistration.${version}.`;
  const GV = { group: GROUP, version };
  const atomic = { 'x-kubernetes-list-type': 'atomic' } as const;
  const rule = struct('Operations and resources (optionally by name) a policy applies to.', {
    apiGroups: stringList('API groups; `*` for all, "" for core.', atomic),
    apiVersions: stringList('API versions; `*` for all.', atomic),
    operations: stringList('CREATE, UPDATE, CONNECT or `*`.', atomic),
    resourceNames: stringList('Names the rule applies to; empty: all.', atomic),
    resources: stringList('Resources, `resource/subresource`, with `*` wildcards.', atomic),
    scope: str('Cluster, Namespaced or `*` (default).'),
  });
  return {
    [AR + 'MutatingAdmissionPolicy']: kind({ ...GV, kind: 'MutatingAdmissionPolicy' }, 'CEL mutations of requests, applied through bindings.', {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(AR + 'MutatingAdmissionPolicySpec', 'What the policy changes.'),
    }),
    [AR + 'MutatingAdmissionPolicyList']: listKind(GV, AR + 'MutatingAdmissionPolicy', 'MutatingAdmissionPolicy', 'The policies.'),
    [AR + 'MutatingAdmissionPolicySpec']: struct('A mutating policy.', {
      failurePolicy: str('What an error evaluating the policy does: Fail (default) or Ignore.'),
      matchConditions: arrayOf(ref(AR + 'MatchCondition', ''), 'CEL conditions that must all hold for the policy to apply.', {
        'x-kubernetes-list-map-keys': ['name'],
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-patch-merge-key': 'name',
        'x-kubernetes-patch-strategy': 'merge',
      }),
      matchConstraints: ref(AR + 'MatchResources', 'The requests the policy can apply to.'),
      mutations: arrayOf(ref(AR + 'Mutation', ''), 'The mutations, applied in order.', atomic),
      paramKind: ref(AR + 'ParamKind', 'The kind of the parameter objects bindings point at.'),
      reinvocationPolicy: str('Never (default), or IfNeeded: run again when a later mutation changed the object.'),
      variables: arrayOf(ref(AR + 'Variable', ''), 'Named CEL expressions the others read as `variables.<name>`.', atomic),
    }),
    [AR + 'Mutation']: struct(
      'One mutation.',
      {
        applyConfiguration: ref(AR + 'ApplyConfiguration', 'For patchType ApplyConfiguration.'),
        jsonPatch: ref(AR + 'JSONPatch', 'For patchType JSONPatch.'),
        patchType: str('ApplyConfiguration or JSONPatch.'),
      },
      { required: ['patchType'] },
    ),
    [AR + 'ApplyConfiguration']: struct('An apply configuration built by CEL.', { expression: str('CEL giving an `Object{…}`.') }),
    [AR + 'JSONPatch']: struct('A JSON patch built by CEL.', { expression: str('CEL giving a list of `JSONPatch{op, path, value}`.') }),
    [AR + 'MatchResources']: struct('Which requests match, by resource, namespace and object labels.', {
      excludeResourceRules: arrayOf(ref(AR + 'NamedRuleWithOperations', ''), 'Requests to leave out.', atomic),
      matchPolicy: str('Exact or Equivalent (default).'),
      namespaceSelector: ref(META + 'LabelSelector', 'Selects namespaces by their labels; empty: all.'),
      objectSelector: ref(META + 'LabelSelector', 'Selects objects by their labels; empty: all.'),
      resourceRules: arrayOf(ref(AR + 'NamedRuleWithOperations', ''), 'Requests to include.', atomic),
    }),
    [AR + 'NamedRuleWithOperations']: rule,
    [AR + 'ParamKind']: struct('A group/version and kind.', { apiVersion: str('group/version.'), kind: str('The kind.') }),
    [AR + 'ParamRef']: struct('Which parameter objects a binding uses.', {
      name: str('One object by name.'),
      namespace: str('Their namespace (for namespaced kinds; empty: the request’s).'),
      parameterNotFoundAction: str('Allow or Deny when no parameter object is found.'),
      selector: ref(META + 'LabelSelector', 'Every object matching these labels.'),
    }),
    [AR + 'MatchCondition']: struct(
      'A CEL condition.',
      { expression: str('The CEL expression.'), name: str("The condition's name.") },
      { required: ['name', 'expression'] },
    ),
    [AR + 'Variable']: struct(
      'A named CEL expression.',
      { expression: str('The CEL expression.'), name: str('The name.') },
      { required: ['name', 'expression'], 'x-kubernetes-map-type': 'atomic' },
    ),
    [AR + 'MutatingAdmissionPolicyBinding']: kind(
      { ...GV, kind: 'MutatingAdmissionPolicyBinding' },
      'Applies a MutatingAdmissionPolicy to requests, with parameters.',
      { apiVersion: apiVersionField, kind: kindField, metadata: objectMetaField(), spec: ref(AR + 'MutatingAdmissionPolicyBindingSpec', 'The binding.') },
    ),
    [AR + 'MutatingAdmissionPolicyBindingList']: listKind(GV, AR + 'MutatingAdmissionPolicyBinding', 'MutatingAdmissionPolicyBinding', 'The bindings.'),
    [AR + 'MutatingAdmissionPolicyBindingSpec']: struct('A binding.', {
      matchResources: ref(AR + 'MatchResources', 'Narrows the requests the policy applies to.'),
      paramRef: ref(AR + 'ParamRef', 'The parameter object(s).'),
      policyName: str('The policy bound.'),
    }),
  };
}

// ---------- defaults and validation ----------

const FAILURE_POLICIES = ['Fail', 'Ignore'];
const REINVOCATION_POLICIES = ['IfNeeded', 'Never'];
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
/** A MutatingAdmissionPolicy cannot match DELETE. */
const MUTATING_OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE'];

/** SetDefaults_MutatingAdmissionPolicySpec and SetDefaults_MatchResources. */
export function defaultMutatingPolicy(o: MutatingAdmissionPolicy): void {
  if (!o.spec || typeof o.spec !== 'object') return;
  o.spec.failurePolicy ??= 'Fail';
  o.spec.reinvocationPolicy ??= 'Never';
  defaultMatchResources(o.spec.matchConstraints);
}

export function defaultMutatingBinding(o: MutatingAdmissionPolicyBinding): void {
  if (!o.spec || typeof o.spec !== 'object') return;
  defaultMatchResources(o.spec.matchResources);
}

function validateOperations(rules: readonly NamedRuleWithOperations[] | undefined, path: string): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const list: readonly NamedRuleWithOperations[] = Array.isArray(rules) ? rules : [];
  for (const r of list) {
    const ops: readonly string[] = Array.isArray(r?.operations) ? r.operations : [];
    for (const op of ops) if (!MUTATING_OPERATIONS.includes(op)) issues.push(fieldIssue.notSupported(path, op, MUTATING_OPERATIONS));
  }
  return issues;
}

function validatePatchExpression(expression: string | undefined, want: 'Object' | 'list<JSONPatch>', d: Declarations, path: string): FieldIssue[] {
  const expr = (expression ?? '').trim();
  if (!expr) return [fieldIssue.required(path, '')];
  const r = compileExpression(expr, want, { ...d, patchTypes: true });
  return 'error' in r ? [fieldIssue.invalid(path, expr, r.error)] : [];
}

/** validateMutation. */
function validateMutation(m: Mutation, d: Declarations, path: string): FieldIssue[] {
  if (!m?.patchType) return [fieldIssue.required(`${path}.patchType`, '')];
  const issues: FieldIssue[] = [];
  if (m.patchType === 'JSONPatch') {
    if (!m.jsonPatch) issues.push(fieldIssue.required(`${path}.jsonPatch`, 'must be specified when patchType is JSONPatch'));
    else issues.push(...validatePatchExpression(m.jsonPatch.expression, 'list<JSONPatch>', d, `${path}.jsonPatch.expression`));
    if (m.applyConfiguration)
      issues.push(fieldIssue.invalid(`${path}.applyConfiguration`, '{applyConfiguration}', 'must not be specified when patchType is JSONPatch'));
  } else if (m.patchType === 'ApplyConfiguration') {
    if (!m.applyConfiguration) issues.push(fieldIssue.required(`${path}.applyConfiguration`, 'must be specified when patchType is ApplyConfiguration'));
    else issues.push(...validatePatchExpression(m.applyConfiguration.expression, 'Object', d, `${path}.applyConfiguration.expression`));
    if (m.jsonPatch) issues.push(fieldIssue.invalid(`${path}.jsonPatch`, '{jsonPatch}', 'must not be specified when patchType is ApplyConfiguration'));
  } else issues.push(fieldIssue.notSupported(`${path}.patchType`, m.patchType, PATCH_TYPES));
  return issues;
}

/** validateMutatingAdmissionPolicy (create and update). */
export function validateMutatingPolicy(o: MutatingAdmissionPolicy): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = o.spec ?? {};
  const params = spec.paramKind !== undefined && spec.paramKind !== null;
  const decl: Declarations = { params, variables: Array.isArray(spec.variables) && spec.variables.length > 0 };
  if (spec.failurePolicy === undefined) issues.push(fieldIssue.required('spec.failurePolicy', ''));
  else if (!FAILURE_POLICIES.includes(spec.failurePolicy)) issues.push(fieldIssue.notSupported('spec.failurePolicy', spec.failurePolicy, FAILURE_POLICIES));
  if (params) issues.push(...validateParamKind(spec.paramKind!, 'spec.paramKind'));
  const mc: MatchResources | undefined = spec.matchConstraints;
  if (!mc) issues.push(fieldIssue.required('spec.matchConstraints', ''));
  else {
    issues.push(...validateMatchResources(mc, 'spec.matchConstraints'));
    if (!mc.resourceRules?.length) issues.push(fieldIssue.required('spec.matchConstraints.resourceRules', ''));
    issues.push(...validateOperations(mc.resourceRules, 'spec.matchConstraints.resourceRules.operations'));
  }
  issues.push(...validateMatchConditions(spec.matchConditions, params, 'spec.matchConditions'));
  (Array.isArray(spec.variables) ? spec.variables : []).forEach((v, i) => {
    const p = `spec.variables[${i}]`;
    const name = v?.name ?? '';
    if (!name.trim()) issues.push(fieldIssue.required(`${p}.name`, 'name is not specified'));
    else if (!/^[_a-zA-Z][_a-zA-Z0-9]*$/.test(name) || CEL_RESERVED_WORDS.has(name))
      issues.push(fieldIssue.invalid(`${p}.name`, name, 'name is not a valid CEL identifier'));
    const expr = v?.expression ?? '';
    if (!expr.trim()) issues.push(fieldIssue.required(`${p}.expression`, 'expression is not specified'));
    else {
      const r = compileExpression(expr, 'any', decl);
      if ('error' in r) issues.push(fieldIssue.invalid(`${p}.expression`, expr, r.error));
    }
  });
  const mutations = Array.isArray(spec.mutations) ? spec.mutations : [];
  if (mutations.length === 0) issues.push(fieldIssue.required('spec.mutations', 'mutations must contain at least one item'));
  mutations.forEach((m, i) => issues.push(...validateMutation(m, decl, `spec.mutations[${i}]`)));
  if (!spec.reinvocationPolicy) issues.push(fieldIssue.required('spec.reinvocationPolicy', ''));
  else if (!REINVOCATION_POLICIES.includes(spec.reinvocationPolicy))
    issues.push(fieldIssue.notSupported('spec.reinvocationPolicy', spec.reinvocationPolicy, REINVOCATION_POLICIES));
  return issues;
}

/** validateMutatingAdmissionPolicyBinding (create and update). */
export function validateMutatingBinding(o: MutatingAdmissionPolicyBinding): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const spec = o.spec ?? {};
  if (!spec.policyName) issues.push(fieldIssue.required('spec.policyName', ''));
  else for (const msg of isDNS1123Subdomain(spec.policyName)) issues.push(fieldIssue.invalid('spec.policyName', spec.policyName, msg));
  if (spec.paramRef) issues.push(...validateParamRef(spec.paramRef, 'spec.paramRef'));
  if (spec.matchResources) {
    issues.push(...validateMatchResources(spec.matchResources, 'spec.matchResources'));
    issues.push(...validateOperations(spec.matchResources.resourceRules, 'spec.matchResources.resourceRules.operations'));
  }
  return issues;
}

// ---------- resources ----------

function descriptor(version: string, kind: string, plural: string, singular: string): ResourceDescriptor {
  return {
    group: GROUP,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular,
    shortNames: [],
    categories: ['api-extensions'],
    namespaced: false,
    verbs: ALL_VERBS,
    subresources: [],
    definitionName: `io.k8s.api.admissionregistration.${version}.${kind}`,
  };
}

function strategy(
  defaults: (o: KubeObject) => void,
  validate: (o: KubeObject) => FieldIssue[],
  columns: Pick<Strategy, 'tableColumns' | 'tableCells'>,
): Strategy {
  return {
    namespaced: false,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    defaults,
    prepareForCreate(o) {
      o.metadata ??= {};
      o.metadata.generation = 1;
    },
    prepareForUpdate(o, old) {
      o.metadata ??= {};
      const gen = old.metadata?.generation ?? 1;
      o.metadata.generation = isDeepStrictEqual(o.spec, old.spec) ? gen : gen + 1;
    },
    validate,
    validateUpdate: (o) => validate(o),
    ...columns,
  };
}

/** printers.go: mutatingAdmissionPolicy and mutatingAdmissionPolicyBinding column definitions. */
const policyColumns = policyTable('mutations', 'Mutations', 'Mutation indicates the number of mutations rules defined in this configuration');
const bindingColumns = bindingTable;

/** v1alpha1 is stored as v1beta1 (same fields): only apiVersion changes on the way. */
function alphaConverter(): VersionConverter {
  const swap = (o: KubeObject, to: string): KubeObject => (o.apiVersion === to ? o : { ...o, apiVersion: to });
  return {
    toStorage: (o) => swap(o, `${GROUP}/${MUTATING_POLICY_VERSION}`),
    fromStorage: (o) => swap(o, `${GROUP}/v1alpha1`),
  };
}

function registrations(version: string): ResourceRegistration[] {
  const defs = definitions(version);
  const alpha = version !== MUTATING_POLICY_VERSION;
  const shared = alpha ? { converter: alphaConverter() } : {};
  return [
    {
      descriptor: descriptor(version, 'MutatingAdmissionPolicy', 'mutatingadmissionpolicies', 'mutatingadmissionpolicy'),
      definitions: defs,
      strategy: strategy(
        (o) => defaultMutatingPolicy(o),
        (o) => validateMutatingPolicy(o),
        policyColumns,
      ),
      keyPrefix: `/registry/${GROUP}/mutatingadmissionpolicies/`,
      featureGate: MUTATING_POLICY_GATE,
      ...shared,
    },
    {
      descriptor: descriptor(version, 'MutatingAdmissionPolicyBinding', 'mutatingadmissionpolicybindings', 'mutatingadmissionpolicybinding'),
      definitions: defs,
      strategy: strategy(
        (o) => defaultMutatingBinding(o),
        (o) => validateMutatingBinding(o),
        bindingColumns,
      ),
      keyPrefix: `/registry/${GROUP}/mutatingadmissionpolicybindings/`,
      featureGate: MUTATING_POLICY_GATE,
      ...shared,
    },
  ];
}

/** The v1beta1 resources (stored) and their v1alpha1 views. */
export const mutatingAdmissionPolicyResources: readonly ResourceRegistration[] = [...registrations('v1beta1'), ...registrations('v1alpha1')];

/** MutatingAdmissionPolicies with their bindings, as the mutating policy plugin reads them. */
export function mutatingPolicyCache(
  policies: () => GenericStore | undefined,
  bindings: () => GenericStore | undefined,
  log?: (msg: string) => void,
): PolicyCache<MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, CompiledMutatingPolicy> & MutatingPolicySource {
  return new PolicyCache('mutating admission', policies, bindings, compileMutatingPolicies, log);
}
