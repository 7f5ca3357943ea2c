// io.k8s.api.authentication.v1.TokenRequest, the body of serviceaccounts/token: shapes follow
// upstream's generated OpenAPI; descriptions are our own.
import type { GoFieldTypes } from '../../../apimachinery/gotypes.js';
import type { Definitions } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import { META, apiVersionField, int64, kind, kindField, objectMetaField, ref, str, stringList, struct } from '../../../apimachinery/definitions/util.js';

const AUTHN = 'io.k8s.api.authentication.v1.';

export const tokenRequestDefinitions: Definitions = {
  [AUTHN + 'TokenRequest']: kind(
    { group: 'authentication.k8s.io', kind: 'TokenRequest', version: 'v1' },
    'TokenRequest requests a token for a given service account.',
    {
      apiVersion: apiVersionField,
      kind: kindField,
      metadata: objectMetaField(),
      spec: ref(AUTHN + 'TokenRequestSpec', 'What the token should be: audiences, lifetime, bound object.'),
      status: ref(AUTHN + 'TokenRequestStatus', 'The issued token, filled by the server.'),
    },
    { required: ['spec'] },
  ),
  [AUTHN + 'TokenRequestSpec']: struct(
    'TokenRequestSpec says what a requested token should be.',
    {
      audiences: stringList('Who the token is for; a recipient must find one of its own identifiers here. Default: the API server audiences.', {
        'x-kubernetes-list-type': 'atomic',
      }),
      boundObjectRef: ref(AUTHN + 'BoundObjectReference', 'An object the token is bound to: deleting it invalidates the token.'),
      expirationSeconds: int64('Requested lifetime in seconds (default 3600, at least 600); the server may shorten it.'),
    },
    { required: ['audiences'] },
  ),
  [AUTHN + 'TokenRequestStatus']: struct(
    'TokenRequestStatus is the issued token.',
    {
      expirationTimestamp: refTo(META + 'Time'),
      token: str('The opaque bearer token.'),
    },
    { required: ['token', 'expirationTimestamp'] },
  ),
  [AUTHN + 'BoundObjectReference']: struct('BoundObjectReference names the object a token is bound to.', {
    apiVersion: str('API version of the referent.'),
    kind: str("Kind of the referent. Valid kinds are 'Pod' and 'Secret'."),
    name: str('Name of the referent.'),
    uid: str('UID of the referent.'),
  }),
};

/** Go types its definitions lose. */
export const tokenRequestGoFieldTypes: GoFieldTypes = { [AUTHN + 'BoundObjectReference']: { uid: 'types.UID' } };
