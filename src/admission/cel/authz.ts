// CEL's authz library for admission expressions (k8s.io/apiserver/pkg/cel/library/authz.go): the
// `authorizer` variable of ValidatingAdmissionPolicies, MutatingAdmissionPolicies and webhook
// matchConditions, checking what the request's user (or a service account) may do:
//   authorizer.group('').resource('configmaps').namespace('ns').name('n').check('approve').allowed()
//   authorizer.path('/healthz').check('get').reason()
//   authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').check('create')
//   authorizer.requestResource.subresource('status').check('update').errored()
// A check asks the control plane's authorizer (RBAC and the rest of its chain). Evaluation is
// synchronous here, so a check whose authorizer answers later (the Webhook mode) is a Decision
// that errored, with the reason saying so.
import { EvaluationError, type Environment } from '@marcbachmann/cel-js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../apimachinery/validation/names.js';
import type { AdmissionAttributes, UserInfo } from '../interfaces.js';

/** authorizer.Authorizer as the checks need it: the auth layer's Authorizer is one (admission may not import the auth layer, which imports admission's UserInfo). */
export interface CheckAuthorizer {
  authorize(user: UserInfo, attrs: CheckAttributes): CheckResult | Promise<CheckResult>;
}

export interface CheckAttributes {
  readonly isResourceRequest: boolean;
  readonly path: string;
  readonly verb: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

export interface CheckResult {
  readonly decision: 'allow' | 'deny' | 'no-opinion';
  readonly reason?: string;
  readonly error?: string;
}

const AUTHORIZER = 'kubernetes.authorization.Authorizer';
/** The `authorizer` variable's type. */
export const AUTHORIZER_TYPE = AUTHORIZER;
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

export class AuthorizerValue {
  constructor(
    readonly user: UserInfo,
    readonly authorizer: CheckAuthorizer,
    private readonly request?: AdmissionAttributes,
  ) {}

  /** `authorizer.requestResource`: the request's own resource, subresource, namespace and name (made when read). */
  get requestResource(): ResourceCheck | undefined {
    const r = this.request;
    return r ? new ResourceCheck(new GroupCheck(this, r.resource.group), r.resource.resource, r.subresource, r.namespace, r.name) : undefined;
  }
}

export class PathCheck {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly path: string,
  ) {}
}

export class GroupCheck {
  constructor(
    readonly authorizer: AuthorizerValue,
    readonly group: string,
  ) {}
}

export class ResourceCheck {
  constructor(
    readonly groupCheck: GroupCheck,
    readonly resource: string,
    readonly subresource = '',
    readonly namespace = '',
    readonly name = '',
    /** authz library v1's selectors: kept on the check; RBAC, the authorizer asked synchronously, does not read them (nor does upstream's). */
    readonly fieldSelector = '',
    readonly labelSelector = '',
  ) {}

  with(change: { subresource?: string; namespace?: string; name?: string; fieldSelector?: string; labelSelector?: string }): ResourceCheck {
    return new ResourceCheck(
      this.groupCheck,
      this.resource,
      change.subresource ?? this.subresource,
      change.namespace ?? this.namespace,
      change.name ?? this.name,
      change.fieldSelector ?? this.fieldSelector,
      change.labelSelector ?? this.labelSelector,
    );
  }
}

export class Decision {
  constructor(
    readonly decision: CheckResult['decision'],
    readonly reason: string,
    readonly error: string | undefined,
  ) {}
}

function decide(a: AuthorizerValue, attrs: CheckAttributes): Decision {
  let r: CheckResult | Promise<CheckResult>;
  try {
    r = a.authorizer.authorize(a.user, attrs);
  } catch (e) {
    return new Decision('no-opinion', '', e instanceof Error ? e.message : String(e));
  }
  if (typeof (r as { then?: unknown }).then === 'function') {
    // Not awaited: the evaluation is synchronous. Its rejection, if any, is dropped with it.
    (r as Promise<CheckResult>).catch(() => undefined);
    return new Decision('no-opinion', '', 'this authorizer decides asynchronously, which CEL checks in kplane cannot wait for');
  }
  const done = r as CheckResult;
  return new Decision(done.decision, done.reason ?? '', done.error || undefined);
}

/** What the checks ask when the control plane authorizes nothing (AlwaysAllow): every check allowed. */
export const ALLOW_ALL: CheckAuthorizer = { authorize: () => ({ decision: 'allow' }) };

/** The `authorizer` variable of a request's expressions: its user, and its resource as `requestResource`. */
export function authorizerFor(a: AdmissionAttributes, authz: CheckAuthorizer | undefined): AuthorizerValue {
  return new AuthorizerValue(a.userInfo, authz ?? ALLOW_ALL, a);
}

/** serviceaccount.ServiceAccountInfo.UserInfo: the service account's user name and groups. */
function serviceAccountUser(namespace: string, name: string): UserInfo {
  return {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
}

const empty = (s: string): boolean => s.trim().length === 0;

/** Declares the library's types and functions on `env`. */
export function registerAuthz(env: Environment): void {
  const fn = (sig: string, h: (...args: never[]) => unknown): void => {
    env.registerFunction(sig, h as (...args: unknown[]) => unknown);
  };
  env.registerType(RESOURCE_CHECK, { ctor: ResourceCheck, fields: {} } as never);
  env.registerType(AUTHORIZER, { ctor: AuthorizerValue, fields: { requestResource: RESOURCE_CHECK } } as never);
  env.registerType(PATH_CHECK, { ctor: PathCheck, fields: {} } as never);
  env.registerType(GROUP_CHECK, { ctor: GroupCheck, fields: {} } as never);
  env.registerType(DECISION, { ctor: Decision, fields: {} } as never);

  fn(`${AUTHORIZER}.path(string): ${PATH_CHECK}`, (a: AuthorizerValue, path: string) => {
    if (empty(path)) throw new EvaluationError('path must not be empty');
    return new PathCheck(a, path);
  });
  fn(`${AUTHORIZER}.group(string): ${GROUP_CHECK}`, (a: AuthorizerValue, group: string) => new GroupCheck(a, group));
  fn(`${AUTHORIZER}.serviceAccount(string, string): ${AUTHORIZER}`, (a: AuthorizerValue, namespace: string, name: string) => {
    if (isDNS1123Subdomain(name).length > 0) throw new EvaluationError('Invalid service account name');
    if (isDNS1123Label(namespace).length > 0) throw new EvaluationError('Invalid service account namespace');
    return new AuthorizerValue(serviceAccountUser(namespace, name), a.authorizer);
  });
  fn(`${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`, (g: GroupCheck, resource: string) => {
    if (empty(resource)) throw new EvaluationError('resource must not be empty');
    return new ResourceCheck(g, resource);
  });
  fn(`${RESOURCE_CHECK}.subresource(string): ${RESOURCE_CHECK}`, (r: ResourceCheck, subresource: string) => r.with({ subresource }));
  fn(`${RESOURCE_CHECK}.namespace(string): ${RESOURCE_CHECK}`, (r: ResourceCheck, namespace: string) => r.with({ namespace }));
  fn(`${RESOURCE_CHECK}.name(string): ${RESOURCE_CHECK}`, (r: ResourceCheck, name: string) => r.with({ name }));
  fn(`${RESOURCE_CHECK}.fieldSelector(string): ${RESOURCE_CHECK}`, (r: ResourceCheck, fieldSelector: string) => r.with({ fieldSelector }));
  fn(`${RESOURCE_CHECK}.labelSelector(string): ${RESOURCE_CHECK}`, (r: ResourceCheck, labelSelector: string) => r.with({ labelSelector }));
  fn(`${PATH_CHECK}.check(string): ${DECISION}`, (p: PathCheck, verb: string) =>
    decide(p.authorizer, {
      isResourceRequest: false,
      path: p.path,
      verb,
      apiGroup: '',
      apiVersion: '',
      namespace: '',
      resource: '',
      subresource: '',
      name: '',
    }),
  );
  fn(`${RESOURCE_CHECK}.check(string): ${DECISION}`, (r: ResourceCheck, verb: string) =>
    decide(r.groupCheck.authorizer, {
      isResourceRequest: true,
      path: '',
      verb,
      apiGroup: r.groupCheck.group,
      apiVersion: '*',
      namespace: r.namespace,
      resource: r.resource,
      subresource: r.subresource,
      name: r.name,
    }),
  );
  fn(`${DECISION}.allowed(): bool`, (d: Decision) => d.decision === 'allow');
  fn(`${DECISION}.reason(): string`, (d: Decision) => d.reason);
  fn(`${DECISION}.errored(): bool`, (d: Decision) => d.error !== undefined);
  fn(`${DECISION}.error(): string`, (d: Decision) => d.error ?? '');
}
