// authentication.k8s.io/v1: TokenReview (`tokenreviews`) and SelfSubjectReview (`selfsubjectreviews`,
// `kubectl auth whoami`), create-only kinds answered without storage (upstream's
// pkg/registry/authentication/{tokenreview,selfsubjectreview}).
import type { ResourceDescriptor } from '../../apimachinery/resource.js';
import { badRequest, internalError } from '../../apimachinery/errors.js';
import type { KubeObject } from '../../apimachinery/types.js';
import type { UserInfo } from '../../admission/index.js';
import type { TokenResult } from '../../auth/authn/token-union.js';
import type { ApiModule, ResourceRegistration } from '../registry.js';
import type { Strategy } from '../strategy.js';
import { AUTHN_V1, authenticationDefinitions } from './definitions.js';

/** What TokenReview asks: the bearer-token authenticators, as a request's token goes through them. */
export interface TokenReviewer {
  authenticate(token: string, audiences?: readonly string[]): TokenResult | Promise<TokenResult>;
}

export interface AuthenticationModuleOptions {
  /** The API server's token authenticators (looked up per review: the server builds them after its modules). */
  readonly reviewer: () => TokenReviewer | undefined;
  /** --api-audiences: what a TokenReview without spec.audiences asks for (none: whatever the token is for). */
  readonly apiAudiences?: readonly string[];
}

const GROUP = 'authentication.k8s.io';
/** Request bodies may be protobuf; answers are JSON (the messages have no UserInfo.extra). */
const PROTO = 'k8s.io.api.authentication.v1';
const GROUP_AUTHENTICATED = 'system:authenticated';
const GROUP_UNAUTHENTICATED = 'system:unauthenticated';

const reviewStrategy: Strategy = {
  namespaced: false,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: false,
  prepareForCreate() {},
  prepareForUpdate() {},
  validate: () => [],
  validateUpdate: () => [],
};

function descriptor(kind: string, plural: string, singular: string): ResourceDescriptor {
  return {
    group: GROUP,
    version: 'v1',
    kind,
    listKind: `${kind}List`,
    plural,
    singular,
    shortNames: [],
    categories: [],
    namespaced: false,
    verbs: ['create'],
    subresources: [],
    definitionName: AUTHN_V1 + kind,
  };
}

/** authentication/v1 UserInfo of a user, with the fields upstream omits when empty left out. */
function userInfoOf(user: UserInfo): Record<string, unknown> {
  return {
    username: user.name,
    ...(user.uid ? { uid: user.uid } : {}),
    ...(user.groups.length ? { groups: [...user.groups] } : {}),
    ...(user.extra && Object.keys(user.extra).length ? { extra: Object.fromEntries(Object.entries(user.extra).map(([k, v]) => [k, [...v]])) } : {}),
  };
}

/** group.AuthenticatedGroupAdder, as the request's authenticator applies it. */
function withAuthenticatedGroup(user: UserInfo): UserInfo {
  if (user.name === 'system:anonymous' || user.groups.includes(GROUP_AUTHENTICATED) || user.groups.includes(GROUP_UNAUTHENTICATED)) return user;
  return { ...user, groups: [...user.groups, GROUP_AUTHENTICATED] };
}

function specOf(obj: KubeObject): { token: string; audiences: string[] } {
  const spec = (obj['spec'] ?? {}) as { token?: unknown; audiences?: unknown };
  const token = typeof spec.token === 'string' ? spec.token : '';
  const audiences = Array.isArray(spec.audiences) ? spec.audiences.filter((a): a is string => typeof a === 'string') : [];
  return { token, audiences };
}

export function tokenReviews(opts: AuthenticationModuleOptions): ResourceRegistration {
  return {
    descriptor: descriptor('TokenReview', 'tokenreviews', 'tokenreview'),
    strategy: reviewStrategy,
    protobuf: { kind: `${PROTO}.TokenReview`, list: `${PROTO}.TokenReview` },
    definitions: authenticationDefinitions,
    async review(obj) {
      const { token, audiences: asked } = specOf(obj);
      if (token === '') throw badRequest('token is required for TokenReview in authentication');
      const out: KubeObject = { ...obj, metadata: { ...(obj.metadata ?? {}), creationTimestamp: null } };
      const reviewer = opts.reviewer();
      if (reviewer === undefined) return out;
      const audiences = asked.length > 0 ? asked : opts.apiAudiences?.length ? opts.apiAudiences : undefined;
      const result = await reviewer.authenticate(token, audiences);
      const status: Record<string, unknown> = { authenticated: result.kind === 'user' };
      if (result.kind === 'user') {
        // An authenticator that names no audiences accepts those asked (WrapAudienceAgnosticToken).
        const valid = result.audiences ?? audiences;
        if (audiences && valid && !valid.some((a) => audiences.includes(a))) throw internalError(new Error('error validating audiences'));
        status['user'] = userInfoOf(withAuthenticatedGroup(result.user));
        if (valid?.length) status['audiences'] = [...valid];
      } else {
        status['user'] = {};
        status['error'] = result.reason;
      }
      return { ...out, spec: { ...(obj['spec'] as object) }, status };
    },
  };
}

export const selfSubjectReviews: ResourceRegistration = {
  descriptor: descriptor('SelfSubjectReview', 'selfsubjectreviews', 'selfsubjectreview'),
  strategy: reviewStrategy,
  protobuf: { kind: `${PROTO}.SelfSubjectReview`, list: `${PROTO}.SelfSubjectReview` },
  definitions: authenticationDefinitions,
  review(obj, ctx) {
    return {
      ...obj,
      apiVersion: `${GROUP}/v1`,
      kind: 'SelfSubjectReview',
      metadata: { creationTimestamp: new Date().toISOString().replace(/\.\d+Z$/, 'Z') },
      status: { userInfo: userInfoOf(ctx.user) },
    };
  },
};

/** authentication.k8s.io: TokenReview and SelfSubjectReview. */
export function authentication(opts: AuthenticationModuleOptions): ApiModule {
  return {
    name: GROUP,
    resources: [tokenReviews(opts), selfSubjectReviews],
    definitions: authenticationDefinitions,
  };
}
