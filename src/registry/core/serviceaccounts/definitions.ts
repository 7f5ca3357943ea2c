// io.k8s.api.core.v1.ServiceAccount: shapes follow upstream's generated OpenAPI; descriptions are our own.
import type { Definitions } from '../../../apimachinery/schema.js';
import { refTo } from '../../../apimachinery/schema.js';
import { CORE, apiVersionField, arrayOf, bool, kind, kindField, listKind, objectMetaField } from '../../../apimachinery/definitions/util.js';

const V1 = { group: '', version: 'v1' };
const gvk = (k: string) => ({ group: '', kind: k, version: 'v1' });

export const serviceAccountDefinitions: Definitions = {
  [CORE + 'ServiceAccount']: kind(gvk('ServiceAccount'), 'ServiceAccount is an identity for processes (such as pods) that talk to the API.', {
    apiVersion: apiVersionField,
    automountServiceAccountToken: bool('Whether pods using this service account get an API token mounted automatically. A pod may override it.'),
    imagePullSecrets: arrayOf(refTo(CORE + 'LocalObjectReference'), 'Secrets in the same namespace used to pull images for pods of this account.', {
      'x-kubernetes-list-type': 'atomic',
    }),
    kind: kindField,
    metadata: objectMetaField(),
    secrets: arrayOf(refTo(CORE + 'ObjectReference'), 'Secrets in the same namespace that pods of this account may use.', {
      'x-kubernetes-list-map-keys': ['name'],
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-patch-merge-key': 'name',
      'x-kubernetes-patch-strategy': 'merge',
    }),
  }),

  [CORE + 'ServiceAccountList']: listKind(V1, CORE + 'ServiceAccount', 'ServiceAccount', 'The service accounts.'),
};
