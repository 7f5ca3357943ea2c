// authorization.k8s.io/v1 reviews (pkg/registry/authorization/*/rest.go): create-only resources
// answered by asking the control plane's authorizer (SubjectAccessReview, SelfSubjectAccessReview,
// LocalSubjectAccessReview) or its rule resolver (SelfSubjectRulesReview). Nothing is stored.
import type { UserInfo } from '../../admission/index.js';
import type { AuthorizationAttributes } from '../../auth/authorizer.js';
import { badRequest, fieldIssue, invalid, omitValue, type FieldIssue } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { ControlPlaneAuthorization, ReviewContext as CreateOnlyRequest } from '../registry.js';

const GROUP = 'authorization.k8s.io';

interface ResourceAttributes {
  namespace?: string;
  verb?: string;
  group?: string;
  version?: string;
  resource?: string;
  subresource?: string;
  name?: string;
}
interface NonResourceAttributes {
  path?: string;
  verb?: string;
}
interface ReviewSpec {
  resourceAttributes?: ResourceAttributes | null;
  nonResourceAttributes?: NonResourceAttributes | null;
  user?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
  uid?: string;
}

const specOf = (o: KubeObject): ReviewSpec => (o.spec && typeof o.spec === 'object' ? o.spec : {});

/** ValidateSubjectAccessReviewSpec's attribute checks (and the user check unless self). */
function validateSpec(spec: ReviewSpec, needUser: boolean): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const ra = spec.resourceAttributes ?? undefined;
  const nra = spec.nonResourceAttributes ?? undefined;
  if (ra && nra) issues.push(fieldIssue.invalid('spec.nonResourceAttributes', nra, 'cannot be specified in combination with resourceAttributes'));
  if (!ra && !nra)
    issues.push(fieldIssue.invalid('spec.resourceAttributes', null, 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (needUser && !spec.user && !spec.groups?.length)
    issues.push(fieldIssue.invalid('spec.user', spec.user ?? '', 'at least one of user or group must be specified'));
  return issues;
}

/** The metadata of a review must be empty (managedFields aside; a LocalSubjectAccessReview's namespace too). */
function validateEmptyMetadata(o: KubeObject, allowNamespace: boolean): FieldIssue[] {
  const { managedFields: _m, namespace, ...rest } = o.metadata ?? {};
  // Old clients send `creationTimestamp: null` (Go's zero Time): that is empty too.
  const extra = Object.entries(rest).filter(([, v]) => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0));
  if (extra.length === 0 && (allowNamespace || !namespace)) return [];
  return [fieldIssue.invalid('metadata', omitValue, 'must be empty')];
}

/** authorizationutil.AuthorizationAttributesFrom. */
function attributesOf(spec: ReviewSpec): AuthorizationAttributes {
  const ra = spec.resourceAttributes;
  if (ra) {
    return {
      isResourceRequest: true,
      path: '',
      verb: ra.verb ?? '',
      apiGroup: ra.group ?? '',
      apiVersion: ra.version ?? '',
      namespace: ra.namespace ?? '',
      resource: ra.resource ?? '',
      subresource: ra.subresource ?? '',
      name: ra.name ?? '',
    };
  }
  const nra = spec.nonResourceAttributes ?? {};
  return {
    isResourceRequest: false,
    path: nra.path ?? '',
    verb: nra.verb ?? '',
    apiGroup: '',
    apiVersion: '',
    namespace: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

async function decide(authz: ControlPlaneAuthorization, user: UserInfo, attrs: AuthorizationAttributes): Promise<Record<string, unknown>> {
  if (!authz.authorizer) return { allowed: true };
  const r = await authz.authorizer.authorize(user, attrs);
  return {
    allowed: r.decision === 'allow',
    ...(r.decision === 'deny' ? { denied: true } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.error ? { evaluationError: r.error } : {}),
  };
}

function userOf(spec: ReviewSpec): UserInfo {
  return { name: spec.user ?? '', groups: spec.groups ?? [], ...(spec.uid ? { uid: spec.uid } : {}), ...(spec.extra ? { extra: spec.extra } : {}) };
}

export function subjectAccessReview(authz: () => ControlPlaneAuthorization) {
  return async (o: KubeObject): Promise<KubeObject> => {
    const spec = specOf(o);
    const issues = [...validateSpec(spec, true), ...validateEmptyMetadata(o, false)];
    if (issues.length) throw invalid({ group: GROUP, kind: 'SubjectAccessReview' }, '', issues);
    return { ...o, status: await decide(authz(), userOf(spec), attributesOf(spec)) };
  };
}

export function localSubjectAccessReview(authz: () => ControlPlaneAuthorization) {
  return async (o: KubeObject, req: CreateOnlyRequest): Promise<KubeObject> => {
    const namespace = req.namespace ?? '';
    const spec = specOf(o);
    const issues = [...validateSpec(spec, true), ...validateEmptyMetadata(o, true)];
    if (issues.length) throw invalid({ group: GROUP, kind: 'LocalSubjectAccessReview' }, '', issues);
    if (!namespace) throw badRequest(`namespace is required on this type: ${namespace}`);
    if (spec.resourceAttributes && spec.resourceAttributes.namespace !== namespace)
      throw badRequest(`spec.resourceAttributes.namespace must match namespace: ${namespace}`);
    return { ...o, status: await decide(authz(), userOf(spec), attributesOf(spec)) };
  };
}

export function selfSubjectAccessReview(authz: () => ControlPlaneAuthorization) {
  return async (o: KubeObject, req: CreateOnlyRequest): Promise<KubeObject> => {
    const spec = specOf(o);
    const issues = [...validateSpec(spec, false), ...validateEmptyMetadata(o, false)];
    if (issues.length) throw invalid({ group: GROUP, kind: 'SelfSubjectAccessReview' }, '', issues);
    return { ...o, status: await decide(authz(), req.user, attributesOf(spec)) };
  };
}

export function selfSubjectRulesReview(authz: () => ControlPlaneAuthorization) {
  return (o: KubeObject, req: CreateOnlyRequest): KubeObject => {
    const namespace = (o.spec as { namespace?: string } | undefined)?.namespace ?? '';
    if (!namespace) throw badRequest('no namespace on request');
    const r = authz().ruleResolver.rulesFor(req.user, namespace);
    // The answer carries only the status (upstream returns a fresh object, spec and metadata empty).
    return {
      apiVersion: `${GROUP}/v1`,
      kind: 'SelfSubjectRulesReview',
      metadata: {},
      spec: {},
      status: {
        resourceRules: r.resourceRules.map((x) => ({
          verbs: x.verbs,
          ...(x.apiGroups.length ? { apiGroups: x.apiGroups } : {}),
          ...(x.resources.length ? { resources: x.resources } : {}),
          ...(x.resourceNames.length ? { resourceNames: x.resourceNames } : {}),
        })),
        nonResourceRules: r.nonResourceRules.map((x) => ({ verbs: x.verbs, ...(x.nonResourceURLs.length ? { nonResourceURLs: x.nonResourceURLs } : {}) })),
        incomplete: r.incomplete,
        ...(r.error ? { evaluationError: r.error } : {}),
      },
    };
  };
}
