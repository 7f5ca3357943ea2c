// authentication.k8s.io/v1 TokenReview and SelfSubjectReview: shapes follow upstream's generated
// OpenAPI; descriptions are our own.
import type { Definitions, OpenAPISchema } from '../../apimachinery/schema.js';
import { refTo } from '../../apimachinery/schema.js';
import { apiVersionField, bool, kind, kindField, objectMetaField, str, stringList, struct } from '../../apimachinery/definitions/util.js';

export const AUTHN_V1 = 'io.k8s.api.authentication.v1.';
const gvk = (k: string) => ({ group: 'authentication.k8s.io', kind: k, version: 'v1' });

const extraField: OpenAPISchema = {
  type: 'object',
  description: 'Any additional information provided by the authenticator.',
  additionalProperties: { type: 'array', items: { type: 'string', default: '' } },
};

export const authenticationDefinitions: Definitions = {
  [AUTHN_V1 + 'UserInfo']: struct('UserInfo holds the information about the user needed to implement the user.Info interface.', {
    extra: extraField,
    groups: stringList('The names of groups this user is a part of.', { 'x-kubernetes-list-type': 'atomic' }),
    uid: str('A unique value that identifies this user across time.'),
    username: str('The name that uniquely identifies this user among all active users.'),
  }),
  [AUTHN_V1 + 'TokenReviewSpec']: struct('TokenReviewSpec is a description of the token authentication request.', {
    audiences: stringList('Audiences the resource server presenting the token accepts; the token must be valid for at least one.', {
      'x-kubernetes-list-type': 'atomic',
    }),
    token: str('Token is the opaque bearer token.'),
  }),
  [AUTHN_V1 + 'TokenReviewStatus']: struct('TokenReviewStatus is the result of the token authentication request.', {
    audiences: stringList('Audiences the token is valid for, a subset of those asked.', { 'x-kubernetes-list-type': 'atomic' }),
    authenticated: bool('Authenticated indicates that the token was associated with a known user.'),
    error: str("Error indicates that the token couldn't be checked"),
    user: { ...refTo(AUTHN_V1 + 'UserInfo'), default: {}, description: 'User is the UserInfo associated with the provided token.' },
  }),
  [AUTHN_V1 + 'TokenReview']: kind(
    gvk('TokenReview'),
    'TokenReview attempts to authenticate a token to a known user. Note: TokenReview requests may be cached by the webhook token authenticator plugin in the kube-apiserver.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: { ...refTo(AUTHN_V1 + 'TokenReviewSpec'), default: {}, description: 'Spec holds information about the request being evaluated' },
      status: {
        ...refTo(AUTHN_V1 + 'TokenReviewStatus'),
        default: {},
        description: 'Status is filled in by the server and indicates whether the request can be authenticated.',
      },
    },
    { required: ['spec'] },
  ),
  [AUTHN_V1 + 'SelfSubjectReviewStatus']: struct('SelfSubjectReviewStatus is filled by the kube-apiserver and sent back to a user.', {
    userInfo: { ...refTo(AUTHN_V1 + 'UserInfo'), default: {}, description: 'User attributes of the user making this request.' },
  }),
  [AUTHN_V1 + 'SelfSubjectReview']: kind(
    gvk('SelfSubjectReview'),
    'SelfSubjectReview contains the user information that the kube-apiserver has about the user making this request.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      status: { ...refTo(AUTHN_V1 + 'SelfSubjectReviewStatus'), default: {}, description: 'Status is filled in by the server with the user attributes.' },
    },
  ),
};
