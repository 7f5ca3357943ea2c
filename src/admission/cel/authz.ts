// CEL's authz library for admission expressions (k8s.io/apiserver/pkg/cel/library/authz.go): the
// `authorizer` variable of ValidatingAdmissionPolicies, MutatingAdmissionPolicies and webhook
// matchConditions, checking what the request's user (or a service account) may do:
//   authorizer.group('').resource('configmaps').namespace('ns').name('n').check('approve').allowed()
//   authorizer.path('/healthz').check('get').reason()
//   authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').check('create')
//   authorizer.requestResource.subresource('status').check('update').errored()
// A check asks the control plane's authorizer (RBAC and the rest of its chain). Evaluation is
// synchronous here, and an authorizer may answer later (the Webhook mode): such a check is left
// pending, the evaluation's result is not used, and once the answers are in (`Checks.settle`) the
// expressions run again with them (each check is asked once per request). The evaluation sites loop
// with `settled`.
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

/**
 * The answers of one request's checks, shared by every expression evaluated for it. A check whose
 * authorizer answers with a promise is pending until `settle()`; an evaluation that left checks
 * pending is provisional, and runs again once they are settled.
 */
export class Checks {
  private readonly answers = new Map<string, CheckResult>();
  /** The checks whose answers are awaited, by key (a check asked twice before its answer is sent once). */
  private readonly waiting = new Map<string, Promise<void>>();

  constructor(readonly authorizer: CheckAuthorizer) {}

  /** Whether checks asked since the last `settle()` still wait for their answers. */
  get unsettled(): boolean {
    return this.waiting.size > 0;
  }

  /** Waits for the pending answers (a rejection is the check's error); answers how many milliseconds that took. */
  async settle(): Promise<number> {
    const started = performance.now();
    while (this.waiting.size) await Promise.all(this.waiting.values());
    return performance.now() - started;
  }

  decide(user: UserInfo, attrs: CheckAttributes): Decision {
    // Only answers that came later are kept (a synchronous authorizer is asked again, as cheaply).
    let key: string | undefined;
    if (this.answers.size || this.waiting.size) {
      key = checkKey(user, attrs);
      const known = this.answers.get(key);
      if (known) return decision(known);
      if (this.waiting.has(key)) return PENDING;
    }
    let r: CheckResult | Promise<CheckResult>;
    try {
      r = this.authorizer.authorize(user, attrs);
    } catch (e) {
      return new Decision('no-opinion', '', e instanceof Error ? e.message : String(e));
    }
    if (typeof (r as { then?: unknown }).then !== 'function') return decision(r as CheckResult);
    const k = key ?? checkKey(user, attrs);
    const answered = (done: CheckResult): void => {
      this.answers.set(k, done);
      this.waiting.delete(k);
    };
    this.waiting.set(
      k,
      (r as Promise<CheckResult>).then(answered, (e: unknown) => answered({ decision: 'no-opinion', error: e instanceof Error ? e.message : String(e) })),
    );
    // Provisional: the evaluation that sees it runs again once the answer is in.
    return PENDING;
  }
}

const checkKey = (user: UserInfo, attrs: CheckAttributes): string => JSON.stringify([user.name, user.uid ?? '', user.groups, user.extra ?? {}, attrs]);

/**
 * Runs `evaluate` until the checks it asks all have answers: when it leaves some pending, they are
 * awaited and it runs again (`waited`: the milliseconds spent waiting, which expression deadlines do
 * not count). Without pending checks (synchronous authorizers, or answers already in) it runs once,
 * and no promise is made.
 */
export function settled<T>(checks: Checks, evaluate: () => T, waited?: (ms: number) => void): T | Promise<T> {
  const r = evaluate();
  if (!checks.unsettled) return r;
  const again = async (): Promise<T> => {
    for (;;) {
      const ms = await checks.settle();
      waited?.(ms);
      const next = evaluate();
      if (!checks.unsettled) return next;
    }
  };
  return again();
}

export class AuthorizerValue {
  constructor(
    readonly user: UserInfo,
    readonly checks: Checks,
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

const decision = (r: CheckResult): Decision => new Decision(r.decision, r.reason ?? '', r.error || undefined);

/** What a check reads while its answer is pending (never the result of a settled evaluation). */
const PENDING = new Decision('no-opinion', '', 'the authorizer has not answered yet');

const decide = (a: AuthorizerValue, attrs: CheckAttributes): Decision => a.checks.decide(a.user, attrs);

/** What the checks ask when the control plane authorizes nothing (AlwaysAllow): every check allowed. */
export const ALLOW_ALL: CheckAuthorizer = { authorize: () => ({ decision: 'allow' }) };

/** The `authorizer` variable of a request's expressions: its user, and its resource as `requestResource`. */
export function authorizerFor(a: AdmissionAttributes, authz: CheckAuthorizer | undefined | Checks): AuthorizerValue {
  return new AuthorizerValue(a.userInfo, authz instanceof Checks ? authz : new Checks(authz ?? ALLOW_ALL), a);
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
    return new AuthorizerValue(serviceAccountUser(namespace, name), a.checks);
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
